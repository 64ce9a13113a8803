package main

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tetherdev/tether/internal/table"
	"github.com/tetherdev/tether/state"
)

// warningWindow is how far back status looks for problems in the log.
const warningWindow = 24 * time.Hour

// logged is one distinct problem from the log: the same message about the
// same session, however often it was logged.
type logged struct {
	Session     string
	Msg         string
	Count       int
	First, Last time.Time
}

func (l logged) String() string {
	msg := l.Msg
	if l.Session != "" {
		msg = shortID(l.Session) + ": " + msg
	}
	when := l.Last.Local().Format("Jan 02 15:04")
	if l.Count == 1 {
		return fmt.Sprintf("%s (%s)", msg, when)
	}
	return fmt.Sprintf("%s (%d times, last %s)", msg, l.Count, when)
}

// standing groups logged warnings into distinct problems, oldest first, and
// keeps those that still stand: a problem of a session that no longer
// exists went with it (clean removed it), and one of a session that has
// since recorded a turn start is resolved: the hook works for it again. (Any
// later event would be too weak a sign: a turn end can go through where the
// turn's start failed.) lastStart says when a session last recorded a turn
// start, and whether it still exists.
func standing(warns []state.Warning, lastStart func(id string) (time.Time, bool)) []logged {
	var out []logged
	for _, w := range warns {
		i := slices.IndexFunc(out, func(l logged) bool { return l.Session == w.Session && l.Msg == w.Msg })
		if i < 0 {
			out = append(out, logged{Session: w.Session, Msg: w.Msg, First: w.Time})
			i = len(out) - 1
		}
		out[i].Count++
		out[i].Last = w.Time
	}
	return slices.DeleteFunc(out, func(l logged) bool {
		if l.Session == "" {
			return false
		}
		at, ok := lastStart(l.Session)
		return !ok || at.After(l.Last)
	})
}

// loggedProblems reads the problems logged in the last day that still
// stand.
func loggedProblems(st *state.Store, now time.Time) ([]logged, error) {
	warns, err := st.Warnings(now.Add(-warningWindow))
	if err != nil {
		return nil, err
	}
	return standing(warns, func(id string) (time.Time, bool) {
		s, err := st.Load(id)
		if err != nil {
			// Unreadable, or an ID no session can have, is not gone:
			// keep what was logged about it.
			return time.Time{}, !errors.Is(err, state.ErrNotFound)
		}
		return s.LastTurnStartedAt, true
	}), nil
}

// standingWarnings are the warnings status shows besides its sweep's: the
// logged problems that still stand, and the files in quarantine (a
// corrupt session's problem outlives the session: its bytes wait there for
// a person).
func standingWarnings(st *state.Store, now time.Time) []string {
	var out []string
	if ls, err := loggedProblems(st, now); err == nil {
		for _, l := range ls {
			out = append(out, l.String())
		}
	}
	if qs, err := st.Quarantined(); err == nil && len(qs) > 0 {
		files := make([]string, 0, len(qs))
		for _, q := range qs {
			files = append(files, cmp.Or(q.File, q.Name))
		}
		out = append(out, fmt.Sprintf("%s in quarantine (was %s); see tether-sweep doctor",
			count(len(qs), "corrupt file", "corrupt files"), table.Cut(strings.Join(files, ", "), 120)))
	}
	return out
}

// warningProblems is doctor's view of the logged problems that still
// stand. Fixing them is dismissing them: the log keeps them, status and
// doctor stop showing them.
func warningProblems(st *state.Store, now time.Time) []problem {
	ls, err := loggedProblems(st, now)
	if err != nil {
		return []problem{{What: "cannot read tether's log", Detail: err.Error()}}
	}
	if len(ls) == 0 {
		return nil
	}
	lines := make([]string, len(ls))
	for i, l := range ls {
		lines[i] = l.String()
	}
	return []problem{{
		What:    fmt.Sprintf("%s in tether's log from the last day", count(len(ls), "warning", "warnings")),
		Detail:  "status shows them until they are resolved:\n" + listed(lines),
		Fixable: true,
		Hint:    "--fix dismisses them once you have dealt with them",
		fix:     func() error { st.DismissWarnings(); return nil },
	}}
}
