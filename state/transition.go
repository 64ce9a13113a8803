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
	// BeginWait: the agent waits for its user (Session.BeginWait records
	// what for); EndWait: a wait is over (Session.EndWait). Any other move
	// out of PhaseWaiting ends the wait with it (Session.SetPhase).
	BeginWait bool
	EndWait   bool
	// Finalize: the session ends now, with EndReason; Interrupted is set
	// when it ended while a turn was running.
	Finalize    bool
	EndReason   string
	Interrupted bool
	// Warn is a message for the log when the event is suspicious but harmless.
	Warn string
}

// Transition is the phase machine of DESIGN.md ("Events and phases"). It is
// pure: the same phase and event always give the same result. from is the
// session's row of the table (TablePhase): PhaseWaiting is a wait inside a
// running turn, which ends as a running turn does; PhaseAtPrompt a wait at
// the agent's prompt, which ends as an idle session does.
func Transition(from Phase, ev Event) (Phase, Actions) {
	running := from == PhaseActive || from == PhaseWaiting
	idle := from == PhaseIdle || from == PhaseAtPrompt
	switch ev {
	case EventSessionStart:
		switch {
		case running:
			return from, Actions{CaptureOwner: true, Warn: "session-start while a turn is running"}
		case from == PhaseEnded:
			return PhaseIdle, Actions{CaptureOwner: true, Revive: true}
		default:
			return PhaseIdle, Actions{CaptureOwner: true}
		}
	case EventTurnStart:
		a := Actions{CaptureOwner: true, AppendTurnStart: true}
		switch {
		case running:
			a.InterruptPrevious = true
		case from == PhaseEnded:
			a.Revive = true
		}
		return PhaseActive, a
	case EventTurnEnd, EventError:
		switch {
		case running:
			return PhaseIdle, Actions{AppendTurnEnd: true}
		case from == PhaseEnded:
			return PhaseEnded, Actions{Ignore: true}
		default:
			// A turn end with no turn running (a repeated Stop, or the first
			// event we ever see): the session exists and is idle.
			return PhaseIdle, Actions{}
		}
	case EventSessionEnd:
		switch {
		case running:
			return PhaseEnded, Actions{Finalize: true, EndReason: EndInterrupted, Interrupted: true}
		case from == PhaseEnded:
			return PhaseEnded, Actions{Ignore: true}
		default:
			return PhaseEnded, Actions{Finalize: true, EndReason: EndSessionEnd}
		}
	case EventOwnerExited:
		switch {
		case running:
			return PhaseEnded, Actions{Finalize: true, EndReason: EndInterrupted, Interrupted: true}
		case idle:
			return PhaseEnded, Actions{Finalize: true, EndReason: EndOwnerExited}
		default:
			return from, Actions{Ignore: true}
		}
	case EventStale, EventGitHub, EventManual:
		reason := map[Event]string{EventStale: EndStale, EventGitHub: EndGitHub, EventManual: EndManual}[ev]
		switch {
		case running:
			return PhaseEnded, Actions{Finalize: true, EndReason: reason, Interrupted: true}
		case idle:
			return PhaseEnded, Actions{Finalize: true, EndReason: reason}
		default:
			return from, Actions{Ignore: true}
		}
	case EventWait:
		// A dialog is a running turn's: with none running, the signal came
		// late or out of order.
		if running {
			return PhaseWaiting, Actions{BeginWait: true}
		}
		return from, Actions{Ignore: true}
	case EventWaitInput:
		// The agent is idle at its prompt; while a turn runs it is busy,
		// and the turn's end says so.
		if idle {
			return PhaseWaiting, Actions{BeginWait: true}
		}
		return from, Actions{Ignore: true}
	case EventWaitOver:
		switch from {
		case PhaseWaiting:
			return PhaseActive, Actions{EndWait: true}
		case PhaseAtPrompt:
			return PhaseIdle, Actions{EndWait: true}
		default:
			return from, Actions{Ignore: true}
		}
	}
	return from, Actions{Ignore: true, Warn: "unknown event " + string(ev)}
}
