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
		events: cursorEvents,
		parse: func(ev *Event, payload []byte, _ *waitFields) error {
			var w cursorWire
			if err := decode(payload, w.fields()); err != nil {
				return err
			}
			if err := w.foreign.check(name); err != nil {
				return err
			}
			cwd := w.Cwd
			if cwd == "" && len(w.WorkspaceRoots) > 0 {
				cwd = w.WorkspaceRoots[0]
			}
			kind, _ := ev.record(cursorEvents, said{native: w.HookEventName, session: firstNonEmpty(w.ConversationID, w.SessionID),
				cwd: cwd, transcript: w.TranscriptPath, model: w.Model, key: w.GenerationID, prompt: w.Prompt, reason: w.Reason})
			switch {
			case kind == state.EventTurnEnd && w.Status == "error":
				ev.Kind = state.EventError
				ev.Reason = "agent loop ended with an error"
			case kind == state.EventSessionEnd && w.ErrorMessage != "":
				ev.Reason = fmt.Sprintf("%s: %s", firstNonEmpty(w.Reason, "error"), w.ErrorMessage)
				ev.SessionGone = SaysSessionGone(w.ErrorMessage)
			}
			return nil
		},
		howTo: func(id string) string {
			return fmt.Sprintf("open the project in Cursor and continue conversation %s from the chat history; "+
				"a conversation started by the Cursor CLI resumes with `cursor-agent --resume %s`", id, id)
		},
		fresh: freshWith("cursor-agent", "", ""),
		respond: func(ev Event) []byte {
			if ev.Native == "beforeSubmitPrompt" {
				// Cursor waits for a verdict on the prompt: let it through.
				return []byte(`{"continue":true}` + "\n")
			}
			return nil
		},
	}
}
