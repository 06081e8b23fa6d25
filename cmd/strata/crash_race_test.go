//go:build race

package main

// crashBatches is how many batches each writer of
// TestCrashServeLosesNothing appends. modernc.org/sqlite runs many times
// slower under the race detector, so there each writer appends half as
// many, and the servers are killed after half as many acknowledgements.
const crashBatches = 40

// killedTierTurns is the length of the history TestKilledTierLosesNothing
// tiers while it kills the pass. modernc.org/sqlite runs many times
// slower under the race detector, so there the history is a third as
// long.
const killedTierTurns = 2000

// soakBatches is how many batches each client of
// TestTwoServersOneConversation sends when STRATA_SOAK is not set.
const soakBatches = 20

// killedImportTurns is the length of the file TestKilledImportLosesNothing
// imports while it kills the import. The kills land within the first
// 1.1 s of each run; modernc.org/sqlite runs many times slower under the
// race detector, so there a quarter as many turns still outlast them.
const killedImportTurns = 6000
