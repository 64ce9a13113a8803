package sweep

import (
	"testing"
	"time"

	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	hourAgo := now.Add(-time.Hour)
	alive := proclive.Verdict{Liveness: proclive.Alive}
	dead := proclive.Verdict{Liveness: proclive.Dead, Reason: "no such process"}
	unknown := proclive.Verdict{Liveness: proclive.Unknown, Reason: "other host"}

	tests := []struct {
		name       string
		phase      state.Phase
		verdict    proclive.Verdict
		staleAfter time.Duration
		wantEvent  state.Event
		wantOK     bool
	}{
		{"alive idle stays", state.PhaseIdle, alive, 0, "", false},
		{"alive active stays even past stale", state.PhaseActive, alive, time.Minute, "", false},
		{"dead idle ends", state.PhaseIdle, dead, 0, state.EventOwnerExited, true},
		{"dead active ends", state.PhaseActive, dead, 0, state.EventOwnerExited, true},
		{"unknown without policy stays", state.PhaseActive, unknown, 0, "", false},
		{"unknown within threshold stays", state.PhaseIdle, unknown, 2 * time.Hour, "", false},
		{"unknown past threshold is stale", state.PhaseIdle, unknown, 30 * time.Minute, state.EventStale, true},
		{"ended is never touched", state.PhaseEnded, dead, 0, "", false},
		{"no phase is never touched", state.PhaseNone, dead, 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &state.Session{Phase: tt.phase, StartedAt: hourAgo, LastHookAt: hourAgo}
			ev, ok := Decide(s, tt.verdict, now, tt.staleAfter)
			if ev != tt.wantEvent || ok != tt.wantOK {
				t.Fatalf("Decide = (%q, %v), want (%q, %v)", ev, ok, tt.wantEvent, tt.wantOK)
			}
		})
	}
}

func TestVerdictWithoutOwnerIsUnknown(t *testing.T) {
	v := Verdict(&state.Session{Phase: state.PhaseActive, LastError: "owner: no owner"})
	if v.Liveness != proclive.Unknown {
		t.Fatalf("liveness = %v, want unknown", v.Liveness)
	}
}
