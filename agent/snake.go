package agent

import "encoding/json"

// snakeWire is the payload shape Claude Code, Gemini CLI and Codex share:
// snake_case keys, the event in hook_event_name. Only the fields tether
// reads are declared; the decoder skips the rest (tool inputs, responses)
// without allocating them.
type snakeWire struct {
	HookEventName  string `json:"hook_event_name"`
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"` // null for Codex sessions without a transcript
	Cwd            string `json:"cwd"`
	Prompt         string `json:"prompt"`
	Source         string `json:"source"`
	Trigger        string `json:"trigger"` // older Gemini CLI builds name SessionStart's source "trigger"
	Reason         string `json:"reason"`
	Model          string `json:"model"`
	// AgentID is set only when the hook fires inside a subagent.
	AgentID      string `json:"agent_id"`
	Error        string `json:"error"` // StopFailure: the error type, e.g. rate_limit
	ErrorDetails string `json:"error_details"`
	foreign
}

// decodeSnake decodes a snake_case payload and fills ev's common fields
// from it.
func decodeSnake(self string, ev *Event, payload []byte) (snakeWire, error) {
	var w snakeWire
	if err := decode(payload, &w); err != nil {
		return w, err
	}
	return w, w.fill(self, ev)
}

// fill copies the common fields into ev, after refusing another agent's
// payload.
func (w *snakeWire) fill(self string, ev *Event) error {
	if err := w.foreign.check(self); err != nil {
		return err
	}
	if w.HookEventName != "" {
		ev.Native = w.HookEventName
	}
	ev.SessionID = w.SessionID
	ev.Cwd = w.Cwd
	ev.TranscriptPath = w.TranscriptPath
	ev.Model = w.Model
	return nil
}

// stopFailureReason is the message of a Claude Code or Codex StopFailure:
// the error type with its details, or else the error text the agent showed.
func stopFailureReason(w snakeWire, payload []byte) string {
	detail := w.ErrorDetails
	if detail == "" {
		// last_assistant_message holds the shown error text here, but on a
		// Stop it is the whole reply: decode it only on this rare path.
		var m struct {
			LastAssistantMessage string `json:"last_assistant_message"`
		}
		if json.Unmarshal(payload, &m) == nil {
			detail = m.LastAssistantMessage
		}
	}
	switch {
	case w.Error == "":
		return firstNonEmpty(detail, "turn failed")
	case detail == "":
		return w.Error
	}
	return w.Error + ": " + detail
}
