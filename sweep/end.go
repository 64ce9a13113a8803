package sweep

import (
	"errors"
	"fmt"
	"time"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/state"
)

// ErrAlreadyEnded is returned when ending a session that has ended.
var ErrAlreadyEnded = errors.New("session has already ended")

// End ends a session by hand (end_reason manual), whatever its owner's
// liveness — a person decided — and condenses its pending turns so nothing
// depends on the transcript surviving.
func End(repo gitdir.Repo, st *state.Store, id, note string, now time.Time) (Transition, []checkpoint.Result, error) {
	var tr Transition
	_, err := st.Mutate(id, func(s *state.Session) error {
		switch s.Phase {
		case state.PhaseNone:
			return state.ErrNotFound
		case state.PhaseEnded:
			return ErrAlreadyEnded
		}
		tr, _ = endSession(s, state.EventManual, now, state.OwnerVerdict(s).Reason)
		s.EndNote = note
		return nil
	})
	if err != nil {
		return tr, nil, fmt.Errorf("end session %s: %w", id, err)
	}
	st.Logger().Info("transition", "session", id, "agent", tr.Agent, "from", string(tr.From),
		"to", string(state.PhaseEnded), "reason", tr.Reason, "note", note)
	cp, err := openCheckpoints(repo, st)
	if err != nil {
		return tr, nil, fmt.Errorf("open repository: %w", err)
	}
	results, err := condense(st, cp, []string{id}, nil)
	return tr, results, err
}
