// Package loomgen generates synthetic, labelled coding-agent sessions, a
// held-out source of test sessions for the context compactor. It was
// written without reading the compaction code (or the session content of
// the other generators), so what it plants and where it puts it owe
// nothing to what the compactor keeps. From opsgen it takes only the
// neutral transcript types and their OpenAI and Anthropic serializers.
//
// # The sessions
//
// An agent maintains Warp, the model-training and research-computing
// platform of Loomfield (an invented company). Its user hands it one task
// after another, each with constraints, answers its questions with
// decisions and sometimes pastes an error or a link. The tasks cover:
//
//   - PyTorch distributed training under SLURM (sacct, squeue, scontrol,
//     sbatch; rank-prefixed torchrun logs with NCCL watchdog timeouts, CUDA
//     out-of-memory tracebacks and elastic-agent failure reports), Ray Tune
//     sweeps killed by Ray's memory monitor, and a Triton Inference Server
//     whose model repository fails to load;
//   - the run trackers, MLflow and W&B (run tables, run JSON, metric
//     histories);
//   - a Julia simulation package (Pkg.test with Test Summary tables,
//     MethodError traces), an R package (devtools::check, testthat) and a
//     Fortran + MPI solver (CMake/gfortran builds with caret diagnostics,
//     mpirun aborts on a signal, Valgrind reports);
//   - a Clojure job scheduler (journald logs of a crashing worker with
//     ExceptionInfo and JVM frames, lein test), an OpenResty gateway
//     (error.log, busted in TAP form, access logs) and a Zig CLI (zig build
//     test failures and panics);
//   - Windows build agents driven from PowerShell (error records, Event Log
//     entries), conda/mamba environments that do not solve, MinIO (mc admin
//     info and trace, listings, heals) and Prometheus/Alertmanager
//     (promtool, amtool).
//
// The agent calls five tools: bash(command), read_file(path),
// grep(pattern, path), write_file(path, content) and
// replace_in_file(path, old, new), and says a short sentence between
// calls. Outputs are long and in each tool's own style; the lines of a
// failure sit anywhere in them, among progress and INFO lines, and only
// sometimes end with an exit status line. Failures are worded many ways:
// a job state (NODE_FAIL, OUT_OF_MEMORY), a signal, a non-zero count in a
// table, a watchdog message on a [rankN] line, an assertion with actual
// and expected values. Some commands that succeed print failures they did
// not cause: an accounting table listing other jobs that failed, the
// journal of a crashed worker, a trace of requests answered 503.
//
// # Labels
//
// Every identifier the generator plants (job, request and run ids,
// hashes, UUIDs, host:port pairs, URLs, file:line sites, test names, error
// codes, config keys, versions) is recorded as an opsgen.Label with the
// class of the place it was put:
//
//   - ErrorLine: on a line of a tool output written as the failure; those
//     lines, stack and trace frames included, are listed in the result's
//     ErrLines;
//   - PassingOutput: in the output of a command or read that succeeded
//     (exit 0), off its failure lines;
//   - FileWritten: the path of a file the session creates, or an
//     identifier of content it writes or edits;
//   - UserTurn: in a user message.
//
// An identifier of ErrorLine, PassingOutput or UserTurn occurs in places
// of its class only: never in the agent's own text or arguments, nor in
// another class's place. A FileWritten identifier may be named again by
// later commands and their output, as a written file is. No planted
// identifier is a substring of another, nor of any identifier the
// generator made without planting it: every identifier-like string goes
// through one registry, which hands out each value once and refuses
// values that would hold, or sit inside, a planted one.
//
// # Sizes and determinism
//
// Standard is about 115-120 tool calls and 310k-340k o200k tokens in the
// OpenAI form; Long is about 360-375 calls and 0.9M tokens. The generator
// counts every message with the o200k tokenizer as it writes it and sizes
// each long output from the budget left (ToolCalls calls of about 2,900
// tokens each, times OutputScale), so sessions land on their budget
// whatever the mix of tasks. A session runs whole tasks until it has made
// Options.ToolCalls calls, so it may make a few more.
//
// The same seed and options give the same session, byte for byte: all
// randomness comes from one PCG generator seeded from the seed.
package loomgen
