// Package sweep is tether's reconciler: it checks the owner of every live
// session, finalizes the sessions whose owner is gone (re-checking under the
// session lock, so a session revived meanwhile is left alone), condenses
// their pending turns into checkpoints and links checkpoints to commits.
//
// Its promises: a session whose owner is Alive is never finalized; Unknown
// liveness ends a session only by the stale-after policy — or, with GitHub
// reconciliation on, by GitHub's state once past that threshold (end_reason
// github instead of stale), while every other session only gets GitHub's
// view as an annotation; a GitHub failure never ends anything; a sweep with
// nothing to do never opens the repository with go-git; ended sessions cost
// nothing (they are never listed). However many sessions a sweep ends,
// condenses or links, each of those steps is one grouped state write
// (state.MutateEach), and condensing one commit per ref. The sessions it
// ends are condensed in the very write that ends them
// (checkpoint.CondenseEnding, under the checkpoints lock taken first): one
// state write per session, not two, and no to-condense mark. A session
// that cannot be condensed so ends marked, and is condensed after, by this
// sweep or the next: finalizing does not depend on the checkpoints. A
// post-commit sweep links to the commit HEAD named when it started, even
// if it goes on after the commit returned and another commit was made. A
// sweep that leaves no live session clears the store's active flag unless
// a to-do mark remains (state.SettleActive), so the next commits start
// nothing.
// A running turn whose agent wrote its cancel into the transcript and fired
// no hook (Claude Code's Esc; agent.TurnCancelled) is over: the sweep
// records its end, so the session is idle, and one whose agent is gone
// afterwards ended owner-exited, not interrupted. A session whose agent
// ended it mid-turn as it wrote the turn's cancel (SIGINT to claude -p or
// copilot -p: which lands first is a race) is revisited once the agent is
// done writing (agent.SettleEnd), before it is condensed: one user action
// gives one record, whoever won. Events hooks spooled (state.Store.Spool)
// are applied for good before the sweep looks at anything.
//
// What each turn changed comes from the captures of package snapshot
// (turnChanges): a checkpoint's turns list the paths they added, modified
// and deleted; an interrupted turn is compared with the worktree as the
// sweep finds it, captured and kept so that a retry and Rewind see the
// same. A turn still running at a commit of its worktree is counted up to
// that commit (the paths it took that the turn wrote), and the checkpoint
// continuing it holds only what that commit did not take. A post-commit
// sweep links a checkpoint to the commit only when its turns changed a
// path the commit changed, or, for a turn whose changes are unknown, the
// commit was made while it ran (contributed); the others stay unlinked,
// and those that changed a path wait for a commit that takes one (one
// that changed nothing waits for none). Rewind puts back what a turn
// changed, never a path changed since by someone else, keeping what it
// overwrites for its undo.
package sweep
