package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tetherdev/tether/capture"
)

// Action is what rewinding does to one path.
type Action struct {
	Path string `json:"path"`
	// Do is "restore" (put back the content it had), "remove" (the turn
	// created it) or "recreate" (the turn deleted it).
	Do string `json:"do"`
}

// Plan decides how to take paths from the content from to the content to,
// given what the worktree holds now (all three looked up with Files). A
// path whose content now is not what from says was changed by someone
// else since: it is a conflict, and a plan with conflicts must not be
// applied. A path already as to says needs nothing.
func Plan(paths []string, from, to, now map[string]File) (actions []Action, conflicts []string) {
	for _, p := range paths {
		switch {
		case now[p] == to[p]:
			continue
		case now[p] != from[p]:
			conflicts = append(conflicts, p)
		case to[p].Hash.IsZero():
			actions = append(actions, Action{Path: p, Do: "remove"})
		case now[p].Hash.IsZero():
			actions = append(actions, Action{Path: p, Do: "recreate"})
		default:
			actions = append(actions, Action{Path: p, Do: "restore"})
		}
	}
	return actions, conflicts
}

// Apply carries out a plan in w's worktree: the paths to restore or
// recreate get their content (and mode) from tree to (Worktree.Checkout,
// never through the user's index); the paths to remove are removed, with
// the directories they leave empty. Nothing else in the worktree is
// touched.
func Apply(w *capture.Worktree, to string, actions []Action) error {
	var checkout []string
	for _, a := range actions {
		if a.Do != "remove" {
			checkout = append(checkout, a.Path)
		}
	}
	if err := w.Checkout(to, checkout); err != nil {
		return fmt.Errorf("rewind: %w", err)
	}
	root, err := os.OpenRoot(w.Dir())
	if err != nil {
		return fmt.Errorf("rewind: %w", err)
	}
	defer root.Close()
	for _, a := range actions {
		if a.Do != "remove" {
			continue
		}
		if err := root.Remove(filepath.FromSlash(a.Path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("rewind: %w", err)
		}
		// The directories the file alone kept: a non-empty one stays.
		for dir := path.Dir(a.Path); dir != "." && dir != "/"; dir = path.Dir(dir) {
			if root.Remove(filepath.FromSlash(dir)) != nil {
				break
			}
		}
	}
	return nil
}

// Describe lists a plan for people, one line per path, sorted by path.
func Describe(actions []Action) []string {
	lines := make([]string, len(actions))
	for i, a := range actions {
		lines[i] = fmt.Sprintf("%-8s %s", a.Do, a.Path)
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[9:], b[9:]) })
	return lines
}
