// Package install puts tether into a repository and takes it out again: the
// git hooks (post-commit runs tether-hook's gate, which runs tether-sweep
// when there is something to sweep; pre-push runs tether-sweep),
// notes.rewriteRef, and the hook entries that make each coding agent run
// tether-hook. Check reports what is missing or stale, for `tether-sweep
// doctor`.
//
// What the package promises:
//   - Git hooks go where git runs them (git rev-parse --git-path hooks:
//     core.hooksPath absolute or relative, the common dir for linked
//     worktrees). A foreign hook is never overwritten: it moves to
//     <hook>.pre-tether and our hook runs it first, with the same arguments
//     and input, and exits with its status. Husky setups get a marked block
//     in .husky/<hook>; lefthook and pre-commit configs are never touched —
//     the Result says what to add to them.
//   - A git hook never fails because of tether: every tether line is
//     guarded, so a missing binary is a no-op, and ends in "|| true" —
//     except where our post-commit hook runs alone and execs tether-hook,
//     which always exits 0. The git hooks run tether's binaries from beside
//     Options.SweepPath, or from PATH when it is "".
//   - Agent configs are merged, never clobbered: other keys and hooks keep
//     their order and their bytes, a file where nothing of ours changes is
//     not rewritten, and our entries are recognised by the "tether-hook" in
//     their command. Writes are atomic (temp file, fsync, rename).
//   - Agent configs may be JSON with comments (Copilot CLI writes its
//     config.json so; Gemini CLI reads comments in its settings): they are
//     read as the agent reads them, and a merge keeps every comment (those
//     inside an object or array we add to move onto lines of their own).
//   - Install is idempotent: a second run changes no byte. Uninstall removes
//     exactly what install added: files it created are deleted, files that
//     existed get their original bytes back (or, if the user changed them
//     since, lose only our entries). A record in <git-common-dir>/tether
//     (for user-level configs, ~/.config/tether) keeps what is needed for
//     that.
//   - notes.rewriteRef gains refs/notes/tether next to any existing values,
//     and uninstall removes only that value.
//   - What install set up (git hooks, pre-push, the agents at each level) is
//     recorded in the repository's install record, as later installs and
//     uninstalls leave it (Setup, Recorded): doctor checks that, never a
//     guess from the directories that happen to exist. Uninstall with User
//     touches the user's configs only, never the repository's git hooks.
//
// install runs the git CLI: it is not on any hot path, and git is the
// authority on where hooks live and how its config files are edited.
package install
