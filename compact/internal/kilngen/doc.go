// Package kilngen generates held-out coding-agent sessions for measuring
// what live compaction keeps. It was written without reading the
// compaction code, its checkpoint format or its scoring, so that the
// sessions it makes test the compaction rather than echo it.
//
// The session is an agent maintaining Ember, the loyalty and payouts
// product of Kilnworks, an invented company, across ecosystems other
// generators leave out: the iOS app in Swift (xcodebuild, swift test and
// its XCTest failures, fastlane lanes, simulator crash reports), the
// ember-ledger service in Haskell (cabal builds with GHC type errors,
// hspec runs), the reward contracts in Solidity with Foundry (forge build,
// forge test with reverts and call traces, anvil, cast), the AWS estate in
// Terraform and Ansible (plans, applies that fail with AWS request ids,
// playbook runs with failing tasks, the aws CLI), the glaze pricing-rule
// compiler in OCaml built with dune, the Helm charts on Kubernetes
// (kubectl describe, events, pods in CrashLoopBackOff) and the Redis and
// PostgreSQL the service uses. Outputs are long and in each tool's own
// style: build logs, test runs of dozens of cases, log dumps of hundreds
// of lines, JSON from APIs, with the failure somewhere inside them, not
// always at the end, and only sometimes followed by a harness exit line.
//
// The agent calls bash (command), read_file (path), grep (pattern, path),
// write_file (path, content) and replace_in_file (path, old, new). Its
// user gives tasks with constraints, answers its questions with
// decisions, and sometimes pastes an error or a link.
//
// Every identifier the generator plants is labelled with the class of its
// place (see opsgen.Class): ErrorLine, on a line of a tool output the
// generator wrote as the failure (Result.ErrLines, stack and trace frames
// included); PassingOutput, in the output of a command or read that
// succeeded, off its failure lines; FileWritten, the path of a file the
// session creates or an identifier in the content it writes or edits;
// UserTurn, in a user message. A command that succeeds can still print a
// failure it did not have itself (kubectl logs of a crashed container,
// kubectl describe of a pod in CrashLoopBackOff, a symbolicated crash
// report, a Lambda's log tail): its failure lines are marked as well, and
// its other lines are passing output. An identifier of ErrorLine, PassingOutput
// or UserTurn occurs in places of its class only, never in the agent's
// own text or arguments; the path of a created file may be named again by
// later commands and their output. No planted identifier is a substring
// of another.
//
// Generate sizes the session from its Options: ToolCalls is the number of
// tool calls it makes at least, and the lengths of the long outputs are
// steered, by counting the OpenAI form with the o200k tokenizer, to about
// OutputScale times 2,800 tokens a tool call. The same seed and options
// give the same session, byte for byte.
package kilngen
