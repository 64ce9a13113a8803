package agent

import (
	"encoding/json"

	"github.com/tetherdev/tether/state"
)

// copilotWire is a Copilot CLI hook payload in either of its two formats:
// camelCase (events configured as sessionStart, ...; no event name in the
// payload) or the VS Code compatible one (events configured as SessionStart,
// ...; snake_case keys and hook_event_name).
type copilotWire struct {
	HookEventName       string          `json:"hook_event_name"`
	SessionIDCamel      string          `json:"sessionId"`
	SessionID           string          `json:"session_id"`
	Cwd                 string          `json:"cwd"`
	TranscriptPathCamel string          `json:"transcriptPath"`
	TranscriptPath      string          `json:"transcript_path"`
	Prompt              string          `json:"prompt"`
	Source              string          `json:"source"` // startup | resume | new
	Reason              string          `json:"reason"` // complete | error | abort | timeout | user_exit
	Error               json.RawMessage `json:"error"`  // errorOccurred: {message, name, stack}
	Recoverable         *bool           `json:"recoverable"`
	foreign
}

// copilot is GitHub Copilot CLI's hook protocol. In the camelCase format the
// payload does not name its event, so the event argument does.
func copilot() adapter {
	const name = "copilot"
	return adapter{
		info:   Info{Name: name, Display: "Copilot CLI", Binary: "copilot"},
		tracks: func(native string) bool { _, ok := copilotKind(native); return ok },
		parse: func(ev *Event, payload []byte) error {
			var w copilotWire
			if err := decode(payload, &w); err != nil {
				return err
			}
			id := firstNonEmpty(w.SessionIDCamel, w.SessionID)
			if err := w.foreign.check(name); err != nil {
				return err
			}
			if w.HookEventName != "" {
				ev.Native = w.HookEventName
			}
			ev.SessionID = id
			ev.Cwd = w.Cwd
			ev.TranscriptPath = firstNonEmpty(w.TranscriptPathCamel, w.TranscriptPath)
			kind, ok := copilotKind(ev.Native)
			if !ok {
				return nil
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
				if w.Recoverable != nil && *w.Recoverable {
					// The agent carries on with the turn.
					ev.Ignore = true
					return nil
				}
				ev.Reason = copilotErrorMessage(w.Error)
				ev.SessionGone = SaysSessionGone(ev.Reason)
			}
			return nil
		},
		resume: func(id string) []string { return []string{"copilot", "--resume=" + id} },
		fresh: func(prompt string) []string {
			if prompt == "" {
				return []string{"copilot"}
			}
			return append([]string{"copilot"}, flagValue("-i", "--interactive", prompt)...)
		},
	}
}

// copilotErrorMessage reads errorOccurred's error, an object with a message
// and a name.
func copilotErrorMessage(raw json.RawMessage) string {
	var e struct {
		Message string `json:"message"`
		Name    string `json:"name"`
	}
	if json.Unmarshal(raw, &e) != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
		return "error occurred"
	}
	switch {
	case e.Name != "" && e.Message != "":
		return e.Name + ": " + e.Message
	case e.Message != "":
		return e.Message
	}
	return firstNonEmpty(e.Name, "error occurred")
}

// copilotKind maps Copilot CLI's events, in both formats. userPromptSubmitted
// may arrive before sessionStart. Tool, permission, subagent, notification
// and compaction hooks are not turns.
func copilotKind(native string) (state.Event, bool) {
	switch native {
	case "sessionStart", "SessionStart":
		return state.EventSessionStart, true
	case "userPromptSubmitted", "UserPromptSubmit":
		return state.EventTurnStart, true
	case "agentStop", "Stop":
		return state.EventTurnEnd, true
	case "sessionEnd", "SessionEnd":
		return state.EventSessionEnd, true
	case "errorOccurred", "ErrorOccurred":
		return state.EventError, true
	}
	return "", false
}
