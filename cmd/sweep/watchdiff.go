package main

import (
	"maps"
	"slices"

	"github.com/tetherdev/tether/state"
	"github.com/tetherdev/tether/sweep"
)

// The changes `status --watch --json` reports, one JSON object per line:
// {"change": ..., "session": {the session as status --json has it}}. A
// contract: kinds are added, never renamed.
const (
	changeNew     = "new"     // a session appeared (and, at the start, each one listed)
	changePhase   = "phase"   // its phase changed otherwise: a wait is over
	changeTurn    = "turn"    // a turn started or ended
	changeWaiting = "waiting" // it began to wait, or waits for something else now
	changeEnded   = "ended"   // it ended
	changeGone    = "gone"    // it is no longer listed, and did not end (removed, or its repository dropped)
)

// watchChange is one line of status --watch --json.
type watchChange struct {
	Change  string    `json:"change"`
	Session sweep.Row `json:"session"`
}

// rowChange says how a session's row changed between two looks, "" when
// in nothing a watcher follows (its liveness before a sweep ends it, its
// pending turns, its last activity). before is nil for a session not seen
// before. A change of several kinds reports the one that matters most:
// ended, then waiting, then turn, then phase.
func rowChange(before *sweep.Row, after sweep.Row) string {
	switch {
	case before == nil:
		return changeNew
	case after.Phase == string(state.PhaseEnded):
		if before.Phase != after.Phase {
			return changeEnded
		}
		return ""
	case after.Waiting != nil && (before.Waiting == nil || *before.Waiting != *after.Waiting):
		return changeWaiting
	case after.Turns != before.Turns || after.Phase == string(state.PhaseIdle) && running(before.Phase):
		return changeTurn
	case after.Phase != before.Phase:
		return changePhase
	}
	return ""
}

// running tells the phases in which a turn runs, as status shows them.
func running(phase string) bool {
	return phase == string(state.PhaseActive) || phase == string(state.PhaseWaiting)
}

// rowChanges are the changes from the rows seen before to those listed
// now, in the order of now; then, for each row no longer listed, its end
// (final says how it is stored now; ok false: not at all) or that it is
// gone.
func rowChanges(before map[string]sweep.Row, now []sweep.Row, final func(id string) (sweep.Row, bool)) []watchChange {
	var out []watchChange
	listed := map[string]bool{}
	for _, r := range now {
		listed[r.ID] = true
		var b *sweep.Row
		if prev, ok := before[r.ID]; ok {
			b = &prev
		}
		if c := rowChange(b, r); c != "" {
			out = append(out, watchChange{c, r})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(before)) {
		prev := before[id]
		if listed[id] || prev.Phase == string(state.PhaseEnded) {
			continue
		}
		if r, ok := final(id); ok && r.Phase == string(state.PhaseEnded) {
			out = append(out, watchChange{changeEnded, r})
			continue
		}
		out = append(out, watchChange{changeGone, prev})
	}
	return out
}
