package sweep

import (
	"time"

	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// Decide says whether a live session should be finalized, and with which
// event, from its state, its owner's liveness and the stale-after policy.
// It is pure; the sweep calls it once on the scan and again on the state
// loaded under the lock.
func Decide(s *state.Session, v proclive.Verdict, now time.Time, staleAfter time.Duration) (state.Event, bool) {
	if s.Phase != state.PhaseIdle && s.Phase != state.PhaseActive {
		return "", false
	}
	switch v.Liveness {
	case proclive.Dead:
		return state.EventOwnerExited, true
	case proclive.Unknown:
		if staleAfter > 0 && now.Sub(s.LastActivity()) > staleAfter {
			return state.EventStale, true
		}
	}
	return "", false
}

// Verdict is the liveness of a session's owner; a session with no recorded
// owner is Unknown, never Dead.
func Verdict(s *state.Session) proclive.Verdict {
	if s.Owner == nil {
		reason := "no owner recorded"
		if s.LastError != "" {
			reason += " (" + s.LastError + ")"
		}
		return proclive.Verdict{Liveness: proclive.Unknown, Reason: reason}
	}
	return proclive.Check(*s.Owner)
}
