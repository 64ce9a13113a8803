package agent

import "github.com/tetherdev/tether/state"

// claudeCode is Claude Code's hook protocol: JSON on stdin, snake_case, the
// event in hook_event_name. Claude Code exports CLAUDE_PID to its hooks.
func claudeCode() adapter {
	const name = "claude-code"
	return adapter{
		info:   Info{Name: name, Display: "Claude Code", OwnerEnv: "CLAUDE_PID", Binary: "claude"},
		tracks: snakeTracks,
		waits:  claudeWaits,
		parse: func(ev *Event, payload []byte, wf *waitFields) error {
			w, err := decodeSnake(name, ev, payload, wf)
			if err != nil {
				return err
			}
			mapSnake(ev, w, payload, snakeKind)
			return nil
		},
		resume:    func(id string) []string { return append([]string{"claude"}, flagValue("--resume", "--resume", id)...) },
		fresh:     func(prompt string) []string { return append([]string{"claude"}, positional(prompt)...) },
		cancelled: claudeCancelled,
		failure:   claudeFailure,
		writes:    claudeWrites,
	}
}

// snakeTracks reports whether Claude Code or Codex maps native to a tether
// event.
func snakeTracks(native string) bool { _, ok := snakeKind(native); return ok }

// snakeKind is the event mapping Claude Code and Codex share (Codex adds
// Interrupt, see codexKind). Everything else they report —
// SubagentStart/SubagentStop, tool, permission, compaction and notification
// events — is not a turn of the main session.
func snakeKind(native string) (state.Event, bool) {
	switch native {
	case "SessionStart":
		return state.EventSessionStart, true
	case "UserPromptSubmit":
		return state.EventTurnStart, true
	case "Stop":
		return state.EventTurnEnd, true
	case "StopFailure":
		return state.EventError, true
	case "SessionEnd":
		return state.EventSessionEnd, true
	}
	return "", false
}

// mapSnake sets Kind and the event's own fields for Claude Code and Codex,
// whose events kindOf maps.
func mapSnake(ev *Event, w snakeWire, payload []byte, kindOf func(string) (state.Event, bool)) {
	kind, ok := kindOf(ev.Native)
	if !ok {
		return // Parse decides between Ignore and another agent's event
	}
	if w.AgentID != "" {
		// Fired inside a subagent: its turns are not the main session's.
		ev.Ignore = true
		return
	}
	ev.Kind = kind
	switch kind {
	case state.EventSessionStart:
		ev.Source = w.Source
	case state.EventTurnStart:
		ev.Prompt = w.Prompt
	case state.EventSessionEnd:
		ev.Reason = w.Reason
	case state.EventError:
		ev.Reason = stopFailureReason(w, payload)
		ev.SessionGone = SaysSessionGone(ev.Reason)
	}
}
