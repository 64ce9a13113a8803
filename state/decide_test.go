package state

import (
	"testing"
	"time"

	"github.com/tetherdev/tether/proclive"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	hourAgo := now.Add(-time.Hour)
	alive := proclive.Verdict{Liveness: proclive.Alive}
	dead := proclive.Verdict{Liveness: proclive.Dead, Reason: "no such process"}
	unknown := proclive.Verdict{Liveness: proclive.Unknown, Reason: "other host"}

	tests := []struct {
		name       string
		phase      Phase
		verdict    proclive.Verdict
		staleAfter time.Duration
		wantEvent  Event
		wantOK     bool
	}{
		{"alive idle stays", PhaseIdle, alive, 0, "", false},
		{"alive active stays even past stale", PhaseActive, alive, time.Minute, "", false},
		{"dead idle ends", PhaseIdle, dead, 0, EventOwnerExited, true},
		{"dead active ends", PhaseActive, dead, 0, EventOwnerExited, true},
		{"unknown without policy stays", PhaseActive, unknown, 0, "", false},
		{"unknown within threshold stays", PhaseIdle, unknown, 2 * time.Hour, "", false},
		{"unknown past threshold is stale", PhaseIdle, unknown, 30 * time.Minute, EventStale, true},
		{"ended is never touched", PhaseEnded, dead, 0, "", false},
		{"no phase is never touched", PhaseNone, dead, 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Session{Phase: tt.phase, StartedAt: hourAgo, LastHookAt: hourAgo}
			ev, ok := Decide(s, tt.verdict, now, tt.staleAfter)
			if ev != tt.wantEvent || ok != tt.wantOK {
				t.Fatalf("Decide = (%q, %v), want (%q, %v)", ev, ok, tt.wantEvent, tt.wantOK)
			}
		})
	}
}

func TestVerdictWithoutOwnerIsUnknown(t *testing.T) {
	v := OwnerVerdict(&Session{Phase: PhaseActive, LastError: "owner: no owner"})
	if v.Liveness != proclive.Unknown {
		t.Fatalf("liveness = %v, want unknown", v.Liveness)
	}
}
