// Package snapshot records what a worktree holds at each turn boundary of
// an agent session, as git trees, and says what a turn changed.
//
// What it promises:
//
//   - A capture (Capture) is a git tree of the worktree: the tracked files
//     and the untracked files that are not ignored, as `git add -A && git
//     write-tree` would make them. It goes through a private index of
//     tether's (<store>/snapshots/<worktree>.index, GIT_INDEX_FILE), seeded
//     from a copy of the user's index so the first capture hashes only what
//     differs from it: the user's index, HEAD and files are never written.
//     Captures of one worktree are serialized by a store lock.
//   - Each capture is recorded (Record) as a commit on a ref of tether's
//     per session, Ref(session) under refs/tether/snapshots/ (never a
//     branch), its message naming the turn and the boundary (Start, End,
//     Swept, Rewind) in trailers, so the trees and their blobs stay
//     reachable and read back with plain git until Remove drops the ref with
//     its session. The commit is written in-process (go-git, a loose
//     object); the ref moves only by compare-and-swap (git update-ref with
//     the old value, git's own locking).
//   - Reading (List, Diff, Files, CommitChanges) goes through go-git,
//     in-process: the sweep condenses many sessions at a commit and must
//     not start a git process for each. Only SHA-1 repositories are
//     supported, as by package checkpoint.
//   - Pick decides which captures bound a turn: its first Start, and for
//     its end the first End, else the next turn's Start (the turn was cut
//     short by another), else the first Swept (the worktree as the sweep
//     found it after the turn was interrupted).
//   - Rewind plans are pure (Plan): a path is put back only when the
//     worktree still holds what the turn left there; any other path is
//     named as changed since, and nothing is written.
package snapshot
