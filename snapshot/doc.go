// Package snapshot reads back the captures package capture records at
// each turn boundary of an agent session, says what a turn changed, and
// plans and applies a rewind.
//
// What it promises:
//
//   - Reading (List, Diff, Files, CommitChanges) goes through go-git,
//     in-process: the sweep condenses many sessions at a commit and must
//     not start a git process for each. Only SHA-1 repositories are
//     supported, as by package checkpoint.
//   - Uncommitted compares named paths of the work tree with a commit,
//     reading only those files, inside the work tree; what it cannot
//     compare counts as changed.
//   - A path a capture bounding the turn found written after its boundary
//     is not counted as the turn's unless it changed again by the turn's
//     end (Changes.Unsure): it is listed as Late.
//   - Pick decides which captures bound a turn: its first Start, and for
//     its end the first End, else the next turn's Start (the turn was cut
//     short by another), else the first Swept (the worktree as the sweep
//     found it after the turn was interrupted).
//   - Rewind plans are pure (Plan): a path is put back only when the
//     worktree still holds what the turn left there; any other path is
//     named as changed since, and nothing is written. Apply touches only
//     the paths of the plan.
package snapshot
