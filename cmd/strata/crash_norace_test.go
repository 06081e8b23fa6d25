//go:build !race

package main

// crashBatches is how many batches each writer of
// TestCrashServeLosesNothing appends (see crash_race_test.go).
const crashBatches = 80

// killedTierTurns is the length of the history TestKilledTierLosesNothing
// tiers while it kills the pass. (see crash_race_test.go).
const killedTierTurns = 6000

// soakBatches is how many batches each client of
// TestTwoServersOneConversation sends when STRATA_SOAK is not set.
const soakBatches = 60

// killedImportTurns is the length of the file TestKilledImportLosesNothing
// imports while it kills the import (see crash_race_test.go).
const killedImportTurns = 24000
