package agent

// snakeWire is the payload shape Claude Code, Gemini CLI and Codex share:
// snake_case keys, the event in hook_event_name. Only the fields tether
// reads are declared; the decoder skips the rest (tool inputs, responses)
// without decoding them.
type snakeWire struct {
	HookEventName  string
	SessionID      string
	TranscriptPath string // null for Codex sessions without a transcript
	Cwd            string
	Prompt         string
	Source         string
	Trigger        string // older Gemini CLI builds name SessionStart's source "trigger"
	Reason         string
	Model          string
	// AgentID is set only when the hook fires inside a subagent.
	AgentID      string
	Error        string // StopFailure: the error type, e.g. rate_limit
	ErrorDetails string
	// What names the event itself (see Event.Key): Codex's turn_id, Claude
	// Code's prompt_id, Gemini CLI's timestamp.
	TurnID    string
	PromptID  string
	Timestamp []byte
	// What a wait signal says (see waitFields), read leniently: raw.
	ToolName, ToolInput, NotificationType, Message, Title, Details []byte
	foreign
}

func (w *snakeWire) fields() []wireField {
	return append([]wireField{
		{name: "hook_event_name", str: &w.HookEventName},
		{name: "session_id", str: &w.SessionID},
		{name: "transcript_path", str: &w.TranscriptPath},
		{name: "cwd", str: &w.Cwd},
		{name: "prompt", str: &w.Prompt},
		{name: "source", str: &w.Source},
		{name: "trigger", str: &w.Trigger},
		{name: "reason", str: &w.Reason},
		{name: "model", str: &w.Model},
		{name: "agent_id", str: &w.AgentID},
		{name: "error", str: &w.Error},
		{name: "error_details", str: &w.ErrorDetails},
		{name: "turn_id", str: &w.TurnID},
		{name: "prompt_id", str: &w.PromptID},
		{name: "timestamp", raw: &w.Timestamp},
		{name: "tool_name", raw: &w.ToolName},
		{name: "tool_input", raw: &w.ToolInput},
		{name: "notification_type", raw: &w.NotificationType},
		{name: "message", raw: &w.Message},
		{name: "title", raw: &w.Title},
		{name: "details", raw: &w.Details},
	}, w.foreign.fields()...)
}

// decodeSnake decodes a snake_case payload and fills ev's common fields
// and wf from it.
func decodeSnake(self string, ev *Event, payload []byte, wf *waitFields) (snakeWire, error) {
	var w snakeWire
	if err := decode(payload, w.fields()); err != nil {
		return w, err
	}
	return w, w.fill(self, ev, wf)
}

// fill copies the common fields into ev and what it says of a wait into
// wf, after refusing another agent's payload.
func (w *snakeWire) fill(self string, ev *Event, wf *waitFields) error {
	if err := w.foreign.check(self); err != nil {
		return err
	}
	*wf = waitFields{Tool: stringOf(w.ToolName), Input: w.ToolInput, Type: stringOf(w.NotificationType),
		Message: stringOf(w.Message), Title: stringOf(w.Title), Details: w.Details, Cwd: w.Cwd}
	if w.HookEventName != "" {
		ev.Native = w.HookEventName
	}
	ev.SessionID = w.SessionID
	ev.Cwd = w.Cwd
	ev.TranscriptPath = w.TranscriptPath
	ev.Model = w.Model
	ev.Key = firstNonEmpty(w.TurnID, w.PromptID, rawText(w.Timestamp))
	return nil
}

// stopFailureReason is the message of a Claude Code or Codex StopFailure:
// the error type with its details, or else the error text the agent showed.
func stopFailureReason(w snakeWire, payload []byte) string {
	detail := w.ErrorDetails
	if detail == "" {
		// last_assistant_message holds the shown error text here, but on a
		// Stop it is the whole reply: decode it only on this rare path.
		var m string
		if decode(payload, []wireField{{name: "last_assistant_message", str: &m}}) == nil {
			detail = m
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
