package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/tetherdev/tether/sweep"
)

// TestRowChange covers what status --watch --json reports of one
// session's row, seen before and now.
func TestRowChange(t *testing.T) {
	since := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	row := func(phase string, turns int, wait *sweep.RowWaiting) sweep.Row {
		return sweep.Row{ID: "s", Phase: phase, Turns: turns, Waiting: wait, Liveness: "alive"}
	}
	perm := &sweep.RowWaiting{Since: since, Kind: "permission", Detail: "Bash `ls`"}
	other := &sweep.RowWaiting{Since: since.Add(time.Minute), Kind: "question", Detail: "which?"}
	for _, c := range []struct {
		name   string
		before *sweep.Row
		after  sweep.Row
		want   string
	}{
		{"first seen", nil, row("idle", 0, nil), changeNew},
		{"a turn starts", ptr(row("idle", 1, nil)), row("active", 2, nil), changeTurn},
		{"a turn ends", ptr(row("active", 2, nil)), row("idle", 2, nil), changeTurn},
		{"a turn ends while waiting", ptr(row("waiting", 2, perm)), row("idle", 2, nil), changeTurn},
		{"a wait begins", ptr(row("active", 2, nil)), row("waiting", 2, perm), changeWaiting},
		{"another wait", ptr(row("waiting", 2, perm)), row("waiting", 2, other), changeWaiting},
		{"a wait is over", ptr(row("waiting", 2, perm)), row("active", 2, nil), changePhase},
		{"it ends", ptr(row("active", 2, nil)), row("ended", 2, nil), changeEnded},
		{"ended, and still", ptr(row("ended", 2, nil)), row("ended", 2, nil), ""},
		{"its owner seen dead, before a sweep", ptr(row("active", 2, nil)), func() sweep.Row { r := row("active", 2, nil); r.Liveness = "dead"; return r }(), ""},
		{"the same wait", ptr(row("waiting", 2, perm)), row("waiting", 2, perm), ""},
	} {
		if got := rowChange(c.before, c.after); got != c.want {
			t.Errorf("%s: rowChange = %q, want %q", c.name, got, c.want)
		}
	}
}

func ptr(r sweep.Row) *sweep.Row { return &r }

// TestRowChanges: the changes of the rows listed now, in their order, then
// the rows no longer listed: ended (as stored now) or gone.
func TestRowChanges(t *testing.T) {
	before := map[string]sweep.Row{
		"a": {ID: "a", Phase: "idle"},
		"b": {ID: "b", Phase: "active", Turns: 1},
		"c": {ID: "c", Phase: "active"},
		"d": {ID: "d", Phase: "idle"},
		"e": {ID: "e", Phase: "ended"},
	}
	now := []sweep.Row{{ID: "n", Phase: "idle"}, {ID: "b", Phase: "idle", Turns: 1}, {ID: "a", Phase: "idle"}}
	final := func(id string) (sweep.Row, bool) {
		if id == "c" {
			return sweep.Row{ID: "c", Phase: "ended", EndReason: "interrupted"}, true
		}
		return sweep.Row{}, false
	}
	got := rowChanges(before, now, final)
	want := []watchChange{
		{changeNew, sweep.Row{ID: "n", Phase: "idle"}},
		{changeTurn, sweep.Row{ID: "b", Phase: "idle", Turns: 1}},
		{changeEnded, sweep.Row{ID: "c", Phase: "ended", EndReason: "interrupted"}},
		{changeGone, sweep.Row{ID: "d", Phase: "idle"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rowChanges =\n%+v\nwant\n%+v", got, want)
	}
}
