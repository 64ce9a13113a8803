package sweep

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/state"
)

// linkToHead links the unlinked checkpoints of this worktree's sessions to
// head, records the link in each session, and clears their markers.
// Sessions of other worktrees wait for a commit there.
func linkToHead(st *state.Store, cp *checkpoint.Repo, worktree, head string, ids []string) ([]string, error) {
	var all []string
	perSession := map[string][]string{}
	for _, id := range ids {
		s, err := st.Load(id)
		if errors.Is(err, state.ErrNotFound) {
			if err := st.ClearMark(state.MarkUnlinked, id); err != nil {
				return nil, err
			}
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
			if err := st.ClearMark(state.MarkUnlinked, id); err != nil {
				return nil, err
			}
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
		if err := st.ClearMark(state.MarkUnlinked, id); err != nil {
			return all, err
		}
		st.Logger().Info("linked", "session", id, "commit", head, "checkpoints", cps)
	}
	return all, nil
}
