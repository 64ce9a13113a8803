// Package sweep is tether's reconciler: it checks the owner of every live
// session, finalizes the sessions whose owner is gone (re-checking under the
// session lock, so a session revived meanwhile is left alone), condenses
// their pending turns into the checkpoints branch and links checkpoints to
// commits.
//
// Its promises: a session whose owner is Alive is never finalized; Unknown
// liveness ends a session only by the stale-after policy — or, with GitHub
// reconciliation on, by GitHub's state once past that threshold (end_reason
// github instead of stale), while every other session only gets GitHub's
// view as an annotation; a GitHub failure never ends anything; a sweep with
// nothing to do never opens the repository with go-git; ended sessions cost
// nothing (they are never listed).
package sweep
