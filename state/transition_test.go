package state

import "testing"

// TestTransition covers every cell of DESIGN.md's table ("Events and
// phases"), the "—" cells as Ignore, and the events outside the table
// (error, stale, github, manual, unknown).
func TestTransition(t *testing.T) {
	capture := Actions{CaptureOwner: true}
	turnStart := Actions{CaptureOwner: true, AppendTurnStart: true}
	ignore := Actions{Ignore: true}
	cases := []struct {
		from Phase
		ev   Event
		to   Phase
		want Actions
	}{
		// (none)
		{PhaseNone, EventSessionStart, PhaseIdle, capture},
		{PhaseNone, EventTurnStart, PhaseActive, turnStart},
		{PhaseNone, EventTurnEnd, PhaseIdle, Actions{}},
		{PhaseNone, EventSessionEnd, PhaseEnded, Actions{Finalize: true, EndReason: EndSessionEnd}},
		{PhaseNone, EventOwnerExited, PhaseNone, ignore},
		// idle
		{PhaseIdle, EventSessionStart, PhaseIdle, capture},
		{PhaseIdle, EventTurnStart, PhaseActive, turnStart},
		{PhaseIdle, EventTurnEnd, PhaseIdle, Actions{}},
		{PhaseIdle, EventSessionEnd, PhaseEnded, Actions{Finalize: true, EndReason: EndSessionEnd}},
		{PhaseIdle, EventOwnerExited, PhaseEnded, Actions{Finalize: true, EndReason: EndOwnerExited}},
		// active
		{PhaseActive, EventSessionStart, PhaseActive, Actions{CaptureOwner: true, Warn: "session-start while a turn is running"}},
		{PhaseActive, EventTurnStart, PhaseActive, Actions{CaptureOwner: true, AppendTurnStart: true, InterruptPrevious: true}},
		{PhaseActive, EventTurnEnd, PhaseIdle, Actions{AppendTurnEnd: true}},
		{PhaseActive, EventSessionEnd, PhaseEnded, Actions{Finalize: true, EndReason: EndInterrupted, Interrupted: true}},
		{PhaseActive, EventOwnerExited, PhaseEnded, Actions{Finalize: true, EndReason: EndInterrupted, Interrupted: true}},
		// waiting inside a turn: it ends as a running turn does.
		{PhaseWaiting, EventSessionStart, PhaseWaiting, Actions{CaptureOwner: true, Warn: "session-start while a turn is running"}},
		{PhaseWaiting, EventTurnStart, PhaseActive, Actions{CaptureOwner: true, AppendTurnStart: true, InterruptPrevious: true}},
		{PhaseWaiting, EventTurnEnd, PhaseIdle, Actions{AppendTurnEnd: true}},
		{PhaseWaiting, EventSessionEnd, PhaseEnded, Actions{Finalize: true, EndReason: EndInterrupted, Interrupted: true}},
		{PhaseWaiting, EventOwnerExited, PhaseEnded, Actions{Finalize: true, EndReason: EndInterrupted, Interrupted: true}},
		// waiting at the prompt: no turn runs, it ends as an idle session does.
		{PhaseAtPrompt, EventSessionStart, PhaseIdle, capture},
		{PhaseAtPrompt, EventTurnStart, PhaseActive, turnStart},
		{PhaseAtPrompt, EventTurnEnd, PhaseIdle, Actions{}},
		{PhaseAtPrompt, EventSessionEnd, PhaseEnded, Actions{Finalize: true, EndReason: EndSessionEnd}},
		{PhaseAtPrompt, EventOwnerExited, PhaseEnded, Actions{Finalize: true, EndReason: EndOwnerExited}},
		// ended
		{PhaseEnded, EventSessionStart, PhaseIdle, Actions{CaptureOwner: true, Revive: true}},
		{PhaseEnded, EventTurnStart, PhaseActive, Actions{CaptureOwner: true, AppendTurnStart: true, Revive: true}},
		{PhaseEnded, EventTurnEnd, PhaseEnded, ignore},
		{PhaseEnded, EventSessionEnd, PhaseEnded, ignore},
		{PhaseEnded, EventOwnerExited, PhaseEnded, ignore},

		// error (a failed turn) ends the turn like turn-end.
		{PhaseNone, EventError, PhaseIdle, Actions{}},
		{PhaseIdle, EventError, PhaseIdle, Actions{}},
		{PhaseActive, EventError, PhaseIdle, Actions{AppendTurnEnd: true}},
		{PhaseEnded, EventError, PhaseEnded, ignore},

		// A dialog waits inside a running turn; a late one changes nothing.
		{PhaseNone, EventWait, PhaseNone, ignore},
		{PhaseIdle, EventWait, PhaseIdle, ignore},
		{PhaseActive, EventWait, PhaseWaiting, Actions{BeginWait: true}},
		{PhaseWaiting, EventWait, PhaseWaiting, Actions{BeginWait: true}},
		{PhaseAtPrompt, EventWait, PhaseAtPrompt, ignore},
		{PhaseEnded, EventWait, PhaseEnded, ignore},
		// The agent idle at its prompt waits for input; a busy one does not.
		{PhaseNone, EventWaitInput, PhaseNone, ignore},
		{PhaseIdle, EventWaitInput, PhaseWaiting, Actions{BeginWait: true}},
		{PhaseAtPrompt, EventWaitInput, PhaseWaiting, Actions{BeginWait: true}},
		{PhaseActive, EventWaitInput, PhaseActive, ignore},
		{PhaseWaiting, EventWaitInput, PhaseWaiting, ignore},
		{PhaseEnded, EventWaitInput, PhaseEnded, ignore},
		// A wait is over: back to the turn, or to the prompt.
		{PhaseWaiting, EventWaitOver, PhaseActive, Actions{EndWait: true}},
		{PhaseAtPrompt, EventWaitOver, PhaseIdle, Actions{EndWait: true}},
		{PhaseNone, EventWaitOver, PhaseNone, ignore},
		{PhaseIdle, EventWaitOver, PhaseIdle, ignore},
		{PhaseActive, EventWaitOver, PhaseActive, ignore},
		{PhaseEnded, EventWaitOver, PhaseEnded, ignore},

		// Sweep and operator decisions end what runs, and nothing else.
		{PhaseNone, EventStale, PhaseNone, ignore},
		{PhaseIdle, EventStale, PhaseEnded, Actions{Finalize: true, EndReason: EndStale}},
		{PhaseActive, EventStale, PhaseEnded, Actions{Finalize: true, EndReason: EndStale, Interrupted: true}},
		{PhaseEnded, EventStale, PhaseEnded, ignore},
		{PhaseNone, EventGitHub, PhaseNone, ignore},
		{PhaseIdle, EventGitHub, PhaseEnded, Actions{Finalize: true, EndReason: EndGitHub}},
		{PhaseActive, EventGitHub, PhaseEnded, Actions{Finalize: true, EndReason: EndGitHub, Interrupted: true}},
		{PhaseEnded, EventGitHub, PhaseEnded, ignore},
		{PhaseNone, EventManual, PhaseNone, ignore},
		{PhaseIdle, EventManual, PhaseEnded, Actions{Finalize: true, EndReason: EndManual}},
		{PhaseActive, EventManual, PhaseEnded, Actions{Finalize: true, EndReason: EndManual, Interrupted: true}},
		{PhaseEnded, EventManual, PhaseEnded, ignore},
		{PhaseWaiting, EventStale, PhaseEnded, Actions{Finalize: true, EndReason: EndStale, Interrupted: true}},
		{PhaseAtPrompt, EventManual, PhaseEnded, Actions{Finalize: true, EndReason: EndManual}},

		// An event this build does not know changes nothing.
		{PhaseIdle, Event("bogus"), PhaseIdle, Actions{Ignore: true, Warn: "unknown event bogus"}},
		{PhaseActive, Event(""), PhaseActive, Actions{Ignore: true, Warn: "unknown event "}},
	}
	for _, c := range cases {
		to, got := Transition(c.from, c.ev)
		if to != c.to || got != c.want {
			t.Errorf("Transition(%q, %q) = %q, %+v; want %q, %+v", c.from, c.ev, to, got, c.to, c.want)
		}
	}
}

// TestTransitionInvariants checks properties that must hold in every cell,
// over all phases and events.
func TestTransitionInvariants(t *testing.T) {
	phases := []Phase{PhaseNone, PhaseIdle, PhaseActive, PhaseWaiting, PhaseAtPrompt, PhaseEnded}
	events := []Event{EventSessionStart, EventTurnStart, EventTurnEnd, EventSessionEnd, EventError,
		EventOwnerExited, EventStale, EventGitHub, EventManual, EventWait, EventWaitInput, EventWaitOver}
	for _, p := range phases {
		for _, ev := range events {
			to, a := Transition(p, ev)
			if a.Ignore && (to != p || a.CaptureOwner || a.AppendTurnStart || a.AppendTurnEnd || a.Finalize || a.Revive || a.BeginWait || a.EndWait) {
				t.Errorf("%s/%s: ignored yet acts: %q %+v", p, ev, to, a)
			}
			if a.Finalize != (to == PhaseEnded && p != PhaseEnded) {
				t.Errorf("%s/%s: Finalize=%v but %s -> %s", p, ev, a.Finalize, p, to)
			}
			if a.Finalize && a.EndReason == "" {
				t.Errorf("%s/%s: finalizes without a reason", p, ev)
			}
			if a.Revive != (p == PhaseEnded && to != PhaseEnded) {
				t.Errorf("%s/%s: Revive=%v but %s -> %s", p, ev, a.Revive, p, to)
			}
			if a.Interrupted && p != PhaseActive && p != PhaseWaiting {
				t.Errorf("%s/%s: interrupted with no turn running", p, ev)
			}
			// Only a wait's own signals start or end one; it is stored as
			// PhaseWaiting, never as the table's PhaseAtPrompt.
			if a.BeginWait != (!a.Ignore && to == PhaseWaiting && (ev == EventWait || ev == EventWaitInput)) || to == PhaseAtPrompt && !a.Ignore {
				t.Errorf("%s/%s: %q %+v", p, ev, to, a)
			}
			if a.EndWait && ev != EventWaitOver {
				t.Errorf("%s/%s: ends a wait", p, ev)
			}
			// Only the agent's own events are evidence of life.
			if a.CaptureOwner && ev != EventSessionStart && ev != EventTurnStart {
				t.Errorf("%s/%s: captures the owner", p, ev)
			}
		}
	}
}
