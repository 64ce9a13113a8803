package sweep

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/state"
)

// unlinkedDir holds one empty marker per session that has checkpoints not
// yet linked to a commit. The post-commit sweep reads this small directory
// instead of scanning ended sessions, so ended sessions stay off the hot
// path.
const unlinkedDir = "unlinked"

func listUnlinked(st *state.Store) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(st.Dir(), unlinkedDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list unlinked checkpoints: %w", err)
	}
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		if state.ValidateID(e.Name()) == nil {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

func markUnlinked(st *state.Store, id string) error {
	dir := filepath.Join(st.Dir(), unlinkedDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("mark %s unlinked: %w", id, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, id), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("mark %s unlinked: %w", id, err)
	}
	return f.Close()
}

// linkToHead links the unlinked checkpoints of this worktree's sessions to
// head, records the link in each session, and clears their markers.
// Sessions of other worktrees wait for a commit there.
func linkToHead(st *state.Store, cp *checkpoint.Repo, worktree, head string, ids []string) ([]string, error) {
	var all []string
	perSession := map[string][]string{}
	for _, id := range ids {
		s, err := st.Load(id)
		if errors.Is(err, state.ErrNotFound) {
			_ = os.Remove(filepath.Join(st.Dir(), unlinkedDir, id))
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("load session %s: %w", id, err)
		}
		if s.Worktree != worktree {
			continue
		}
		for _, c := range s.Checkpoints {
			if len(c.Linked) == 0 {
				perSession[id] = append(perSession[id], c.ID)
				all = append(all, c.ID)
			}
		}
		if len(perSession[id]) == 0 {
			_ = os.Remove(filepath.Join(st.Dir(), unlinkedDir, id))
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	if err := cp.Link(head, all); err != nil {
		return nil, err
	}
	for id, cps := range perSession {
		_, err := st.Mutate(id, func(s *state.Session) error {
			changed := false
			for i := range s.Checkpoints {
				c := &s.Checkpoints[i]
				if slices.Contains(cps, c.ID) && !slices.Contains(c.Linked, head) {
					c.Linked = append(c.Linked, head)
					changed = true
				}
			}
			if !changed {
				return state.ErrNoChange
			}
			return nil
		})
		if err != nil {
			return all, fmt.Errorf("record link of session %s: %w", id, err)
		}
		if err := os.Remove(filepath.Join(st.Dir(), unlinkedDir, id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return all, fmt.Errorf("clear unlinked mark of %s: %w", id, err)
		}
		st.Logger().Info("linked", "session", id, "commit", head, "checkpoints", cps)
	}
	return all, nil
}
