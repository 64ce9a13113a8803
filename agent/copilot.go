package agent

import (
	"bytes"
	"path/filepath"

	"github.com/tetherdev/tether/internal/jsontext"
	"github.com/tetherdev/tether/state"
)

// copilotWire is a Copilot CLI hook payload in either of its two formats:
// camelCase (events configured as sessionStart, ...; no event name in the
// payload) or the VS Code compatible one (events configured as SessionStart,
// ...; snake_case keys and hook_event_name).
type copilotWire struct {
	HookEventName       string
	SessionIDCamel      string
	SessionID           string
	Cwd                 string
	TranscriptPathCamel string
	TranscriptPath      string
	Prompt              string
	Source              string // startup | resume | new
	Reason              string // complete | error | abort | timeout | user_exit
	Error               []byte // errorOccurred: {message, name, stack}, raw
	ErrorContextCamel   string // errorOccurred: model_call | tool_execution | ...
	ErrorContext        string
	Timestamp           []byte // epoch milliseconds (camelCase) or an ISO time (VS Code)
	// What a wait signal says (see waitFields), read leniently: raw.
	ToolNameCamel, ToolArgs, ToolName, ToolInput, NotificationType, Message, Title []byte
	foreign
}

// fields lists copilotWire's own keys first: its sessionId hides
// foreign's.
func (w *copilotWire) fields() []wireField {
	return append([]wireField{
		{name: "hook_event_name", str: &w.HookEventName},
		{name: "sessionId", str: &w.SessionIDCamel},
		{name: "session_id", str: &w.SessionID},
		{name: "cwd", str: &w.Cwd},
		{name: "transcriptPath", str: &w.TranscriptPathCamel},
		{name: "transcript_path", str: &w.TranscriptPath},
		{name: "prompt", str: &w.Prompt},
		{name: "source", str: &w.Source},
		{name: "reason", str: &w.Reason},
		{name: "error", raw: &w.Error},
		{name: "errorContext", str: &w.ErrorContextCamel},
		{name: "error_context", str: &w.ErrorContext},
		{name: "timestamp", raw: &w.Timestamp},
		{name: "toolName", raw: &w.ToolNameCamel},
		{name: "toolArgs", raw: &w.ToolArgs},
		{name: "tool_name", raw: &w.ToolName},
		{name: "tool_input", raw: &w.ToolInput},
		{name: "notification_type", raw: &w.NotificationType},
		{name: "message", raw: &w.Message},
		{name: "title", raw: &w.Title},
	}, w.foreign.fields()...)
}

// copilot is GitHub Copilot CLI's hook protocol. In the camelCase format the
// payload does not name its event, so the event argument does.
func copilot() adapter {
	const name = "copilot"
	return adapter{
		info:   Info{Name: name, Display: "Copilot CLI", Binary: "copilot"},
		events: copilotEvents,
		waits:  copilotWaits,
		// -p without --allow-all-tools denies a call that needs approval,
		// with no dialog, yet notifies permission_prompt.
		headlessFlags: []string{"-p", "--prompt"},
		parse: func(ev *Event, payload []byte, wf *waitFields) error {
			var w copilotWire
			if err := decode(payload, w.fields()); err != nil {
				return err
			}
			if err := w.foreign.check(name); err != nil {
				return err
			}
			*wf = waitFields{Tool: firstNonEmpty(stringOf(w.ToolNameCamel), stringOf(w.ToolName)), Input: w.ToolArgs,
				Type: stringOf(w.NotificationType), Message: stringOf(w.Message), Title: stringOf(w.Title), Cwd: w.Cwd}
			if len(wf.Input) == 0 {
				wf.Input = w.ToolInput
			}
			kind, _ := ev.record(copilotEvents, said{native: w.HookEventName, session: firstNonEmpty(w.SessionIDCamel, w.SessionID),
				cwd: w.Cwd, transcript: firstNonEmpty(w.TranscriptPathCamel, w.TranscriptPath), key: rawText(w.Timestamp),
				source: w.Source, prompt: w.Prompt, reason: w.Reason})
			if kind != state.EventError {
				return nil
			}
			// A failed tool call is the model's to handle: the turn goes
			// on. A failed model call ends the turn, whatever "recoverable"
			// says: Copilot CLI 1.0.102 marks a fatal HTTP 400 recoverable
			// and then ends the session.
			if firstNonEmpty(w.ErrorContextCamel, w.ErrorContext) == "tool_execution" {
				ev.Ignore = true
				return nil
			}
			ev.Reason = copilotErrorMessage(w.Error)
			ev.SessionGone = SaysSessionGone(ev.Reason)
			return nil
		},
		resume:    func(id string) []string { return []string{"copilot", "--resume=" + id} },
		cancelled: copilotCancelled,
		writes:    copilotWrites,
		// Only agentStop names the transcript; it is always
		// session-state/<id>/events.jsonl in Copilot's home, so a session
		// killed in its first turn has one too.
		transcript: func(id string, getenv func(string) string) string {
			home := getenv("COPILOT_HOME")
			if home == "" {
				if h := getenv("HOME"); h != "" {
					home = filepath.Join(h, ".copilot")
				}
			}
			if !filepath.IsAbs(home) {
				return ""
			}
			return filepath.Join(home, "session-state", id, "events.jsonl")
		},
		fresh: freshWith("copilot", "-i", "--interactive"),
	}
}

// copilotErrorMessage reads errorOccurred's error, an object with a message
// and a name, or else a string.
func copilotErrorMessage(raw []byte) string {
	var message, name string
	if decode(raw, []wireField{{name: "message", str: &message}, {name: "name", str: &name}}) != nil {
		if v, err := jsontext.Parse(raw); err == nil {
			if s, err := v.Unquote(); err == nil && s != "" {
				return s
			}
		}
		return "error occurred"
	}
	// A failed model call carries the API's error body as its message:
	// its own message says it better.
	var inner string
	if decode([]byte(message), []wireField{{name: "message", str: &inner}}) == nil && inner != "" {
		message = inner
	}
	return firstNonEmpty(joinNonEmpty(name, message), "error occurred")
}

// copilotCancelled tells the entry Copilot CLI 1.0.102 writes into
// events.jsonl when a turn is cancelled (Ctrl-C in the TUI, SIGINT in -p),
// right after the turn's assistant.turn_end and with no agentStop hook:
// {"type":"abort","data":{"reason":"user_initiated"},...} ("user_abort"
// for SIGINT). Whatever the reason, an abort ends the running turn. The
// words inside a message, or a hook's logged input, are not one.
func copilotCancelled(line []byte) bool {
	if !bytes.Contains(line, []byte(`"abort"`)) {
		return false
	}
	var typ string
	return decode(line, []wireField{{name: "type", str: &typ}}) == nil && typ == "abort"
}
