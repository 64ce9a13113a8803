package state

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tetherdev/tether/proclive"
)

// OwnerVerdict is the liveness of a session's owner; a session with no
// recorded owner is Unknown, never Dead.
func OwnerVerdict(s *Session) proclive.Verdict {
	if s.Owner == nil {
		reason := "no owner recorded"
		if s.LastError != "" {
			reason += " (" + s.LastError + ")"
		}
		return proclive.Verdict{Liveness: proclive.Unknown, Reason: reason}
	}
	return proclive.Check(*s.Owner)
}

// Decide says whether a live session should be finalized, and by which
// event, from its phase, its owner's liveness and the stale-after policy
// (zero: off). It is pure: the sweep calls it on the scan and again on the
// state loaded under the lock, and the post-commit gate uses it to skip
// the sweep when there is nothing to do.
func Decide(s *Session, v proclive.Verdict, now time.Time, staleAfter time.Duration) (Event, bool) {
	if !s.Phase.Live() {
		return "", false
	}
	switch v.Liveness {
	case proclive.Dead:
		return EventOwnerExited, true
	case proclive.Unknown:
		if staleAfter > 0 && now.Sub(s.LastActivity()) > staleAfter {
			return EventStale, true
		}
	}
	return "", false
}

// ParseAge reads a duration as people write ages and thresholds: Go's
// units, days ("30d"), and "0"/"off" for none.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" || s == "off" {
		return 0, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(d, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad duration %q (want e.g. 30d, 12h, 90m)", s)
		}
		return time.Duration(n * 24 * float64(time.Hour)), nil
	}
	dur, err := time.ParseDuration(s)
	if err != nil || dur < 0 {
		return 0, fmt.Errorf("bad duration %q (want e.g. 30d, 12h, 90m)", s)
	}
	return dur, nil
}
