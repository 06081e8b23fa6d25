// Package moorgen generates synthetic, labelled coding-agent sessions for
// use as a held-out test source: a coding agent maintains Moorhen, the
// fleet-telemetry product of Brackwater Systems (an invented company).
// Tags on trailers and cold-chain pallets report over BLE to edge
// gateways, which bridge to MQTT; an Erlang service ingests the frames
// into MongoDB; a Spring Boot registry keeps devices, leases and firmware
// channels; a Deno dashboard shows the fleet.
//
// The package was written without reading the compaction code or any
// other generator but opsgen (whose neutral types and serializers it
// uses): it follows the label contract below and nothing else, so that
// what it plants owes nothing to what the compactor happens to keep.
//
// # The session
//
// The user gives tasks with constraints, answers the agent's questions
// with decisions, adds a constraint or a link mid-task, and sometimes
// pastes an error. The agent reads and searches many files (reads are
// long), builds and tests, reads failures and logs, edits and writes
// files, verifies and commits. The stacks, and the tools' outputs as they
// print them:
//
//   - Zephyr RTOS firmware in C for nRF52 and STM32 boards: west build
//     (CMake preamble, ninja progress, memory region tables,
//     arm-none-eabi-gcc compile errors, ld region overflows and undefined
//     references), west twister runs, west flash and RTT boot logs, hard
//     faults under QEMU and Renode, addr2line, Renode robot tests;
//   - a Java 21 Spring Boot device registry built with Maven: mvn verify
//     with Surefire and Failsafe results, JUnit 5 assertion failures,
//     stack traces with Caused by chains, Testcontainers start failures,
//     Flyway checksum mismatches, APPLICATION FAILED TO START;
//   - an Erlang/OTP MQTT ingest built with rebar3: EUnit and Common Test
//     failures, compile errors, crash, error and supervisor reports;
//   - a Deno dashboard: deno test, lint, check and task, against MongoDB
//     (mongosh) and Redis (redis-cli);
//   - operations: Nomad job status, allocation logs and job runs, Consul,
//     Vault, systemd and journalctl on edge gateways over ssh, curl,
//     Pulumi (TypeScript) on Hetzner Cloud and hcloud, git.
//
// The agent's tools are shell (command), read_file (path, offset, limit),
// search (pattern, path), list_files (path), write_file (path, content)
// and replace_in_file (path, old, new).
//
// # The label contract
//
// Every identifier the generator plants on purpose is recorded in
// Transcript.Labels with the class of the place it was put:
//
//   - ErrorLine: on a line of a tool output that reports a failure (the
//     message, the exception, stack frames and causes, the failing test,
//     an error body, a failing host or request id). Those lines' indices
//     (the output split at "\n") are Result.ErrLines.
//   - PassingOutput: in the output of a command or read that succeeded, or
//     off the failure lines of a failed one.
//   - FileWritten: the path of a file the session creates, or an
//     identifier of the content it writes or edits.
//   - UserTurn: in a message of the user.
//
// An identifier of ErrorLine, PassingOutput or UserTurn occurs in places
// of its class only, by substring: never in the agent's text, never in a
// call's arguments, never in a place of another class. The content
// identifiers of FileWritten occur only in the arguments of the write or
// edit that put them there; a written path is first named by the call
// that creates the file and may be named anywhere after. No label is a
// substring of another. Identifiers are drawn fresh (a registry of every
// token drawn, labelled or not, and a fresh line number per file for
// every site, none a prefix of another), and a final pass over the whole
// session takes back any label that chance put in a wrong place (the
// tests check that this stays at zero or near it).
//
// The rule for failures: a result has failure lines exactly when its
// command exited non-zero; the harness's closing "[process exited with
// code N]" line is one of them. Reads never fail. A command that succeeds
// has no failure lines even when what it prints shows errors (a log read
// through tail, say): such errors carry no label. Some failures have a
// marker word on the failure line, many do not (stack frames, crash
// report lines, compiler carets are context or failure by position).
//
// # Size and determinism
//
// Standard is about 120 tool calls and 300k-380k o200k tokens in the
// OpenAI form, Long about 340-420 calls and 0.8M-1.0M tokens. The
// generator counts the tokens of what it emits with the repository's
// tiktoken package and steers the length of the long outputs (reads,
// logs, test listings) towards a number of tokens per call. The same seed
// and options give the same session byte for byte (math/rand/v2 with a
// PCG seeded from the seed, a session clock derived from it, no map
// iteration in the output).
package moorgen
