package agent

import "github.com/tetherdev/tether/state"

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

// snakeParse is the parse of an agent that speaks Claude Code's protocol
// with the events of t. differs, when not nil, takes the events the agent
// sends differently (true: it took this one).
func snakeParse(self string, t eventTable, differs func(ev *Event, payload []byte) bool) func(*Event, []byte, *waitFields) error {
	return func(ev *Event, payload []byte, wf *waitFields) error {
		var w snakeWire
		if err := decode(payload, w.fields()); err != nil {
			return err
		}
		if err := w.fill(self, wf); err != nil {
			return err
		}
		if differs != nil {
			ev.record(nil, w.said())
			if differs(ev, payload) {
				return nil
			}
		}
		w.apply(ev, payload, t)
		return nil
	}
}

// fill reads what the payload says of a wait into wf, after refusing
// another agent's payload.
func (w *snakeWire) fill(self string, wf *waitFields) error {
	if err := w.foreign.check(self); err != nil {
		return err
	}
	*wf = waitFields{Tool: stringOf(w.ToolName), Input: w.ToolInput, Type: stringOf(w.NotificationType),
		Message: stringOf(w.Message), Title: stringOf(w.Title), Details: w.Details, Cwd: w.Cwd}
	return nil
}

// said is what the payload says of its event: a session end's reason (or
// an older Gemini CLI's trigger); its key, Codex's turn_id, Claude Code's
// and Qwen Code's prompt_id, Gemini CLI's timestamp.
func (w *snakeWire) said() said {
	return said{native: w.HookEventName, session: w.SessionID, cwd: w.Cwd, transcript: w.TranscriptPath, model: w.Model,
		key: firstNonEmpty(w.TurnID, w.PromptID, rawText(w.Timestamp)), source: firstNonEmpty(w.Source, w.Trigger),
		prompt: w.Prompt, reason: firstNonEmpty(w.Reason, w.Trigger)}
}

// apply records the event as t maps it: one fired inside a subagent is not
// a turn of the main session; a StopFailure's reason is its error.
func (w *snakeWire) apply(ev *Event, payload []byte, t eventTable) {
	kind, ok := ev.record(t, w.said())
	switch {
	case !ok:
	case w.AgentID != "":
		ev.Ignore, ev.Source, ev.Prompt, ev.Reason = true, "", "", ""
	case kind == state.EventError:
		ev.Reason = stopFailureReason(*w, payload)
		ev.SessionGone = SaysSessionGone(ev.Reason)
	}
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
