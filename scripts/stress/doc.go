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
// At the end it freezes the surviving agents, sweeps, and checks that no
// live session was finalized; kills them, sweeps once more, and checks the
// invariants of DESIGN.md: every state file loads, every dead session is
// finalized, every recorded turn is on the checkpoints branch exactly once,
// every condensed offset reaches the end of its turn log, no prompt whose
// hook returned is lost, and `git fsck --strict` is clean. It prints counts
// and every violation with the session IDs and offsets needed to debug it,
// and exits 1 if any invariant failed. Notices (hook failures, sweep
// errors, leftovers) are printed without failing the run.
//
// The driver needs Linux: it finds hooks and sweeps through /proc.
package main
