package sweep

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/snapshot"
	"github.com/tetherdev/tether/state"
)

// contributed decides whether a checkpoint goes with a commit: its turns
// changed a path the commit changed. Where a turn's changes are unknown
// (captures off or failed), the commit's time decides for it: made while
// it ran (a turn still running, or one whose start and end enclose the
// commit's time; a turn interrupted without a recorded end counts as
// running until the session's end, if known). A turn whose changes are
// known never goes with a commit by time alone: another agent's turn, or
// the user, may have made it meanwhile.
func contributed(c *checkpoint.Checkpoint, commit snapshot.Commit) bool {
	for _, t := range c.Turns {
		if t.Changes != nil {
			for _, p := range t.Changes.Paths() {
				if commit.Paths[p] {
					return true
				}
			}
			continue
		}
		if t.Running {
			return true
		}
		if t.StartedAt.IsZero() || commit.At.Before(t.StartedAt) {
			continue
		}
		end := t.EndedAt
		if end.IsZero() && t.Interrupted {
			end = c.EndedAt
		}
		if end.IsZero() || !commit.At.After(end) {
			return true
		}
	}
	return false
}

// linkable reports whether a checkpoint not linked to this commit may still
// be linked to a later one: while a turn runs, or by a path its turns
// changed that still holds a change no commit has taken (uncommitted asks
// the work tree). One that changed nothing, or whose changes are unknown,
// and whose turns are over, contributed to no commit and never will; nor
// will one whose changes the work tree no longer holds (undone, or taken
// by a commit made where tether's hook did not run). While it waits, each
// commit of its work tree starts a sweep.
func linkable(c *checkpoint.Checkpoint, uncommitted func(paths []string) bool) bool {
	var paths []string
	for _, t := range c.Turns {
		if t.Running {
			return true
		}
		paths = append(paths, t.Changes.Paths()...)
	}
	return len(paths) > 0 && uncommitted(paths)
}

// linkToHead links the unlinked checkpoints of this worktree's sessions
// that contributed to head (contributed), records the link in each
// session, and clears the marker of a session left with no checkpoint that
// a later commit could still take. Sessions of other worktrees wait for a
// commit there.
func linkToHead(st *state.Store, cp *checkpoint.Repo, worktree, head string, commit snapshot.Commit, uncommitted func([]string) bool, ids []string) ([]string, error) {
	var all []string
	perSession := map[string][]string{}
	waiting := map[string]bool{} // sessions with a checkpoint a later commit may take
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
			if len(c.Linked) > 0 {
				continue
			}
			read, err := cp.Read(c.ID)
			if errors.Is(err, checkpoint.ErrNotFound) {
				continue // purged by hand: nothing to link
			}
			if err != nil {
				return nil, fmt.Errorf("checkpoint %s of session %s: %w", c.ID, id, err)
			}
			switch {
			case contributed(read, commit):
				perSession[id] = append(perSession[id], c.ID)
				all = append(all, c.ID)
			case linkable(read, uncommitted):
				waiting[id] = true
			}
		}
		if len(perSession[id]) == 0 && !waiting[id] {
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
		if !waiting[id] {
			if err := st.ClearMark(state.MarkUnlinked, id); err != nil {
				failed = append(failed, err)
				continue
			}
		}
		st.Logger().Info("linked", "session", id, "commit", head, "checkpoints", perSession[id])
	}
	return all, errors.Join(failed...)
}
