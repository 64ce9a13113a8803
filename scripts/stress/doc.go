// Command stress runs tether under the conditions it exists for, all at
// once, and then checks that its record is still honest:
//
//	go run ./scripts/stress [--duration 30s] [--agents 8] [--seed N] [--keep] [--short]
//
// It builds tether-hook, tether-sweep and the stand-in agent (as "claude"),
// makes a scratch repository with a linked worktree per agent slot, and
// installs tether's post-commit hook. For the given duration it runs
// stand-in agents (fresh sessions and resumed ones; turns, commits, normal
// ends, turns that hang), `tether-sweep run` and `status --json`, and a
// person committing, while it kill -9's agents, hooks, sweeps (some while
// they hold the checkpoints lock) and commits with their post-commit hooks.
// It keeps a ledger of every agent process and of every prompt it
// submitted.
//
// Every few seconds, and at the end, it holds everything still: it freezes
// the running agents with SIGSTOP (a stopped process is alive), waits for
// their hooks and commits in flight, sweeps, and checks that no session of
// a live agent was finalized. At the end it then kills them, sweeps once
// more, and checks the invariants of DESIGN.md: every state file loads,
// every dead session is finalized, every recorded turn is on the
// checkpoints exactly once, every condensed offset reaches the end
// of its turn log, no prompt whose hook returned is lost, and `git fsck
// --strict` is clean. A session whose agent died before any hook could
// capture it is of unknown liveness, not dead: it stays live, and its
// turns past the condensed ones wait, as a live session's do. It prints counts and every violation with the
// session IDs and offsets needed to debug it, and exits 1 if any invariant
// failed. Notices (hook failures, sweep errors, leftovers) are printed
// without failing the run.
//
// The seed fixes every random choice (scripts, kills, delays), not the
// timing: a failing run is evidence, its seed a start for a rerun.
//
// The driver needs Linux: it finds hooks and sweeps through /proc.
package main
