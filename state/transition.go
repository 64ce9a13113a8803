package state

// Actions are the side effects a transition asks for. The caller (the hook
// or the sweep) carries them out under the session lock.
type Actions struct {
	// Ignore means the event does not apply in this phase: write nothing.
	Ignore bool
	// CaptureOwner clears the recorded owner and captures it afresh, so a
	// failed capture never leaves an old, possibly dead, owner behind.
	CaptureOwner bool
	// AppendTurnStart and AppendTurnEnd add a record to the turn log.
	AppendTurnStart bool
	AppendTurnEnd   bool
	// InterruptPrevious: a turn started while one was running, so the
	// previous turn was interrupted (its start has no end in the log).
	InterruptPrevious bool
	// Revive: the session was ended and shows life again.
	Revive bool
	// Finalize: the session ends now, with EndReason; Interrupted is set
	// when it ended while a turn was running.
	Finalize    bool
	EndReason   string
	Interrupted bool
	// Warn is a message for the log when the event is suspicious but harmless.
	Warn string
}

// Transition is the phase machine of DESIGN.md ("Events and phases"). It is
// pure: the same phase and event always give the same result.
func Transition(from Phase, ev Event) (Phase, Actions) {
	switch ev {
	case EventSessionStart:
		switch from {
		case PhaseActive:
			return PhaseActive, Actions{CaptureOwner: true, Warn: "session-start while a turn is running"}
		case PhaseEnded:
			return PhaseIdle, Actions{CaptureOwner: true, Revive: true}
		default:
			return PhaseIdle, Actions{CaptureOwner: true}
		}
	case EventTurnStart:
		a := Actions{CaptureOwner: true, AppendTurnStart: true}
		switch from {
		case PhaseActive:
			a.InterruptPrevious = true
		case PhaseEnded:
			a.Revive = true
		}
		return PhaseActive, a
	case EventTurnEnd, EventError:
		switch from {
		case PhaseActive:
			return PhaseIdle, Actions{AppendTurnEnd: true}
		case PhaseEnded:
			return PhaseEnded, Actions{Ignore: true}
		default:
			// A turn end with no turn running (a repeated Stop, or the first
			// event we ever see): the session exists and is idle.
			return PhaseIdle, Actions{}
		}
	case EventSessionEnd:
		switch from {
		case PhaseActive:
			return PhaseEnded, Actions{Finalize: true, EndReason: EndInterrupted, Interrupted: true}
		case PhaseEnded:
			return PhaseEnded, Actions{Ignore: true}
		default:
			return PhaseEnded, Actions{Finalize: true, EndReason: EndSessionEnd}
		}
	case EventOwnerExited:
		switch from {
		case PhaseActive:
			return PhaseEnded, Actions{Finalize: true, EndReason: EndInterrupted, Interrupted: true}
		case PhaseIdle:
			return PhaseEnded, Actions{Finalize: true, EndReason: EndOwnerExited}
		default:
			return from, Actions{Ignore: true}
		}
	case EventStale, EventGitHub, EventManual:
		reason := map[Event]string{EventStale: EndStale, EventGitHub: EndGitHub, EventManual: EndManual}[ev]
		switch from {
		case PhaseActive:
			return PhaseEnded, Actions{Finalize: true, EndReason: reason, Interrupted: true}
		case PhaseIdle:
			return PhaseEnded, Actions{Finalize: true, EndReason: reason}
		default:
			return from, Actions{Ignore: true}
		}
	}
	return from, Actions{Ignore: true, Warn: "unknown event " + string(ev)}
}
