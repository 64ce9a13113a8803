// Package capture records what a worktree holds at each turn boundary of
// an agent session, as git trees on refs of tether's. It is what tether-hook
// starts in the background at every turn start and end, so it stays small:
// git and the standard library, no git library (package snapshot reads the
// captures back).
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
//   - A capture never writes a secret file into the object store, not
//     even as a loose object nothing refers to: the files secret by name
//     (SecretPatterns: .env, keys, credentials; git config
//     tether.captureExclude adds patterns, and "!pattern" takes one back)
//     are excluded through git's own machinery, a core.excludesFile given
//     to the capture's git alone (the user's global excludes, then the
//     patterns), so git never hashes them; the private index is purged of
//     any it tracks (a copy of the user's index, an older capture's)
//     before git reads the worktree. The user's files and config are
//     never written. A .gitignore rule that re-includes such a file ("!")
//     outranks core.excludesFile in git, and wins.
//   - A capture of a turn boundary (CaptureTurn) runs after it, so it names
//     the paths it finds written after the boundary (Entry.Late): changed
//     since the session's previous capture, and modified, by the file's
//     time, after the boundary. Nothing written before the boundary is
//     named; an error leaves a path out of the turn, never in it.
//   - Each capture is recorded (Record) as a commit by tether on a ref of
//     tether's per session, Ref(session) under refs/tether/snapshots/
//     (never a branch), its message naming the turn and the boundary
//     (Start, End, Swept, Rewind, Undo) in trailers, so the trees and their blobs
//     stay reachable and read back with plain git until Remove drops the ref
//     with its session. The commit is written here, a loose object as git
//     writes one, and the ref's tip read from git's ref files, to spare a
//     process each; the ref moves only by compare-and-swap (git update-ref
//     with the old value, git's own locking). Only SHA-1 repositories are
//     supported, as by the readers.
//   - Besides git's own index, only Checkout writes to the worktree: the
//     paths a rewind puts back, through a temporary index.
//   - The git it runs sees only this repository: variables inherited from
//     an agent running inside another git command are dropped.
package capture
