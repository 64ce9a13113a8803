package main

import (
	"testing"
	"time"

	"github.com/tetherdev/tether/state"
)

func TestStanding(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.Local)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	warns := []state.Warning{
		{Time: at(0), Msg: "hook failed: lock timeout", Session: "live-session"},
		{Time: at(1), Msg: "self-heal: tether-sweep not found"},
		{Time: at(2), Msg: "hook failed: lock timeout", Session: "live-session"},
		{Time: at(3), Msg: "owner not resolved", Session: "resolved-session"},
		{Time: at(4), Msg: "hook failed: disk full", Session: "cleaned-session"},
		{Time: at(5), Msg: "self-heal: tether-sweep not found"},
		{Time: at(6), Msg: "hook failed: lock timeout", Session: "live-session"},
		{Time: at(7), Msg: "hook failed: disk full", Session: "live-session"},
	}
	sessions := map[string]time.Time{
		"live-session":     at(5),  // started a turn between failures
		"resolved-session": at(10), // started one after its problem
	}
	got := standing(warns, func(id string) (time.Time, bool) {
		last, ok := sessions[id]
		return last, ok
	})
	want := []logged{
		{Session: "live-session", Msg: "hook failed: lock timeout", Count: 3, First: at(0), Last: at(6)},
		{Msg: "self-heal: tether-sweep not found", Count: 2, First: at(1), Last: at(5)},
		{Session: "live-session", Msg: "hook failed: disk full", Count: 1, First: at(7), Last: at(7)},
	}
	if len(got) != len(want) {
		t.Fatalf("standing = %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Session != w.Session || g.Msg != w.Msg || g.Count != w.Count || !g.First.Equal(w.First) || !g.Last.Equal(w.Last) {
			t.Errorf("standing[%d] = %+v, want %+v", i, g, w)
		}
	}
	for _, tt := range []struct {
		l    logged
		want string
	}{
		{got[0], "live-ses: hook failed: lock timeout (3 times, last May 01 12:06)"},
		{got[2], "live-ses: hook failed: disk full (May 01 12:07)"},
		{got[1], "self-heal: tether-sweep not found (2 times, last May 01 12:05)"},
	} {
		if s := tt.l.String(); s != tt.want {
			t.Errorf("String() = %q, want %q", s, tt.want)
		}
	}
}
