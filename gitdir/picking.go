package gitdir

import (
	"os"
	"path/filepath"
)

// CherryPicking reports whether the commit being made in the repository's
// worktree is a `git cherry-pick`'s: CHERRY_PICK_HEAD is there while its
// hook runs, and no rebase is under way (a rebase replays commits through
// the same machinery, and git carries their notes itself).
func CherryPicking(r Repo) bool {
	if _, err := os.Stat(filepath.Join(r.GitDir, "CHERRY_PICK_HEAD")); err != nil {
		return false
	}
	for _, dir := range []string{"rebase-merge", "rebase-apply"} {
		if _, err := os.Stat(filepath.Join(r.GitDir, dir)); err == nil {
			return false
		}
	}
	return true
}
