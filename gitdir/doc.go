// Package gitdir finds a repository's git dir, common dir and work tree from
// any path inside a work tree, and reads HEAD, without running git.
//
// It is on the hook's hot path, so it costs a handful of stats and small
// reads: it walks up from the path looking for a .git directory or a .git
// file ("gitdir: <path>"), follows the git dir's commondir file (linked
// worktrees), and honours GIT_DIR, GIT_COMMON_DIR, GIT_WORK_TREE and
// GIT_CEILING_DIRECTORIES the way git does, plus core.bare and core.worktree
// from the repository config. The environment is passed in by the caller, so
// results never depend on hidden process state.
//
// What it promises: for a path in a non-bare work tree, the same directories
// `git rev-parse --git-dir --git-common-dir --show-toplevel` names (absolute
// and cleaned; the work tree found by walking is the physical path), and
// ErrNotRepo or ErrBare otherwise. Head reads HEAD, loose refs and
// packed-refs and agrees with `git rev-parse HEAD` and
// `git symbolic-ref --short HEAD`. Repositories using the reftable ref
// backend are reported with ErrReftable rather than misread.
//
// Not supported: config includes (include.path) that set core.bare or
// core.worktree, per-worktree config (extensions.worktreeConfig), and
// GIT_DISCOVERY_ACROSS_FILESYSTEM (the walk crosses file systems).
package gitdir
