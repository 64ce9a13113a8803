package agent

import (
	"fmt"

	"github.com/tetherdev/tether/state"
)

// cursorWire is a Cursor hook payload. Every hook gets conversation_id (the
// session), generation_id, hook_event_name and workspace_roots; sessionStart
// and sessionEnd also carry the same ID as session_id. Only some events
// carry a cwd.
type cursorWire struct {
	HookEventName  string
	ConversationID string
	SessionID      string
	WorkspaceRoots []string
	Cwd            string
	TranscriptPath string
	Model          string
	Prompt         string // beforeSubmitPrompt
	Status         string // stop: completed | aborted | error
	Reason         string // sessionEnd: completed | aborted | error | window_close | user_close
	ErrorMessage   string // sessionEnd with reason error
	GenerationID   string // one per prompt and its response
	foreign
}

// fields lists cursorWire's own keys first: its conversation_id and
// workspace_roots hide foreign's.
func (w *cursorWire) fields() []wireField {
	return append([]wireField{
		{name: "hook_event_name", str: &w.HookEventName},
		{name: "conversation_id", str: &w.ConversationID},
		{name: "session_id", str: &w.SessionID},
		{name: "workspace_roots", strs: &w.WorkspaceRoots},
		{name: "cwd", str: &w.Cwd},
		{name: "transcript_path", str: &w.TranscriptPath},
		{name: "model", str: &w.Model},
		{name: "prompt", str: &w.Prompt},
		{name: "status", str: &w.Status},
		{name: "reason", str: &w.Reason},
		{name: "error_message", str: &w.ErrorMessage},
		{name: "generation_id", str: &w.GenerationID},
	}, w.foreign.fields()...)
}

// cursor is Cursor's hook protocol (editor and CLI): JSON on stdin with
// camelCase event names, and a JSON answer on stdout for the hooks that can
// block, such as beforeSubmitPrompt.
func cursor() adapter {
	const name = "cursor"
	return adapter{
		info:   Info{Name: name, Display: "Cursor", Binary: "cursor-agent"},
		tracks: func(native string) bool { _, ok := cursorKind(native); return ok },
		parse: func(ev *Event, payload []byte, _ *waitFields) error {
			var w cursorWire
			if err := decode(payload, w.fields()); err != nil {
				return err
			}
			id := firstNonEmpty(w.ConversationID, w.SessionID)
			if err := w.foreign.check(name); err != nil {
				return err
			}
			if w.HookEventName != "" {
				ev.Native = w.HookEventName
			}
			ev.SessionID = id
			ev.Cwd = w.Cwd
			if ev.Cwd == "" && len(w.WorkspaceRoots) > 0 {
				ev.Cwd = w.WorkspaceRoots[0]
			}
			ev.TranscriptPath = w.TranscriptPath
			ev.Model = w.Model
			ev.Key = w.GenerationID
			kind, ok := cursorKind(ev.Native)
			if !ok {
				return nil
			}
			ev.Kind = kind
			switch kind {
			case state.EventTurnStart:
				ev.Prompt = w.Prompt
			case state.EventTurnEnd:
				if w.Status == "error" {
					ev.Kind = state.EventError
					ev.Reason = "agent loop ended with an error"
				}
			case state.EventSessionEnd:
				ev.Reason = w.Reason
				if w.ErrorMessage != "" {
					ev.Reason = fmt.Sprintf("%s: %s", firstNonEmpty(w.Reason, "error"), w.ErrorMessage)
					ev.SessionGone = SaysSessionGone(w.ErrorMessage)
				}
			}
			return nil
		},
		howTo: func(id string) string {
			return fmt.Sprintf("open the project in Cursor and continue conversation %s from the chat history; "+
				"a conversation started by the Cursor CLI resumes with `cursor-agent --resume %s`", id, id)
		},
		fresh: func(prompt string) []string { return append([]string{"cursor-agent"}, positional(prompt)...) },
		respond: func(ev Event) []byte {
			if ev.Native == "beforeSubmitPrompt" {
				// Cursor waits for a verdict on the prompt: let it through.
				return []byte(`{"continue":true}` + "\n")
			}
			return nil
		},
	}
}

// cursorKind maps Cursor's events. Tool, file, shell, MCP, subagent,
// response and thought hooks are not turns.
func cursorKind(native string) (state.Event, bool) {
	switch native {
	case "sessionStart":
		return state.EventSessionStart, true
	case "beforeSubmitPrompt":
		return state.EventTurnStart, true
	case "stop":
		return state.EventTurnEnd, true
	case "sessionEnd":
		return state.EventSessionEnd, true
	}
	return "", false
}
