// Command tether-hook is called by coding agents from their own hooks at
// session start, turn start, turn end and session end. It records the
// session, its phase and its owner process under the repository's git
// common dir, and gets out of the way.
//
// Usage: tether-hook <agent> [event] < payload
//
// (Codex's legacy notify program passes the payload as the last argument.)
// `tether-hook capture SESSION TURN start|end` is what the hook starts
// detached at a turn's boundary: it records the worktree (package
// capture), in a process that costs little more than git's own work.
// `tether-hook git post-commit` is the gate of git's post-commit hook: it
// hands over to `tether-sweep run --hook post-commit` only when the sweep
// has work. The installed hook script runs it only while the store is
// active (state.ActiveFlag), so a commit with nothing live starts no
// process at all.
//
// What it promises:
//   - It never breaks the agent: it exits 0 whatever happens. Each failure of
//     its own (bad payload, missing or unwritable store, lock timeout) leaves
//     exactly one line on stderr and one ERROR line in
//     <commondir>/tether/log/tether.log, which `tether-sweep status` shows as a
//     warning. Outside a git repository it does nothing and says nothing.
//   - It writes nothing on stdout except the answer an agent's protocol asks
//     for (Cursor's beforeSubmitPrompt), and gives that answer even when
//     recording failed.
//   - It reads one JSON value of at most 4 MiB from stdin and stops at its
//     end, whether or not the agent closes stdin; it waits at most 2 s for
//     a payload, and for a session's lock for a bounded time (the store's
//     default, 2 s).
//   - A closed stdout or stderr is a failure like any other: SIGPIPE is
//     ignored, so the write fails, and the hook still exits 0.
//   - Every event goes through state.Transition under the session's lock; a
//     session start or turn start records the owner afresh.
//   - It records where the agent keeps its transcripts, from the agent's
//     environment (agent.TranscriptRoot), for the sweep, which runs later
//     and elsewhere; a transcript path outside it is warned about, never
//     read, and measured as empty.
//   - A commit never waits on tether longer than tether.commitWait (git
//     config, 1s by default), the gate's own look at the store included,
//     however much is pending: a sweep still running then goes on by
//     itself, detached from the commit, and logs that it did.
//   - At a session start that finds a live session whose owner is dead, it
//     launches `tether-sweep run --quiet` detached, at most once a minute per
//     repository, and never waits for it.
//   - It imports only the standard library, golang.org/x/sys and tether's
//     proclive, state, agent, gitdir, capture and internal/jsontext
//     packages (a test checks this), and never runs git on the agent's
//     time: only the detached capture does. JSON on its path goes through
//     jsontext, not encoding/json, whose first use alone would cost a
//     tenth of the hook's budget.
package main
