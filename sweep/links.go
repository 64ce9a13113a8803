package sweep

import (
	"errors"
	"fmt"
	"maps"
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
	sessions := slices.Sorted(maps.Keys(perSession))
	_, errs := st.MutateEach(sessions, func(s *state.Tx) error {
		cps, changed := perSession[s.Session.ID], false
		for i := range s.Session.Checkpoints {
			c := &s.Session.Checkpoints[i]
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
	var failed []error
	for i, id := range sessions {
		if errs[i] != nil {
			failed = append(failed, fmt.Errorf("record link of session %s: %w", id, errs[i]))
			continue
		}
		if err := st.ClearMark(state.MarkUnlinked, id); err != nil {
			failed = append(failed, err)
			continue
		}
		st.Logger().Info("linked", "session", id, "commit", head, "checkpoints", perSession[id])
	}
	return all, errors.Join(failed...)
}
