package agent

import (
	"bytes"

	"github.com/tetherdev/tether/state"
)

// gemini is Gemini CLI's hook protocol: JSON on stdin with the same base
// fields as Claude Code (session_id, transcript_path, cwd, hook_event_name),
// its own event names, and a stdout that must stay silent or hold JSON.
// When a hook's stdout is empty, Gemini CLI shows its stderr to the user as
// a system message: the hook keeps quiet there.
func gemini() adapter {
	const name = "gemini"
	return adapter{
		info:   Info{Name: name, Display: "Gemini CLI", Binary: "gemini", QuietStderr: true},
		tracks: func(native string) bool { _, ok := geminiKind(native); return ok },
		waits:  geminiWaits,
		parse: func(ev *Event, payload []byte, wf *waitFields) error {
			w, err := decodeSnake(name, ev, payload, wf)
			if err != nil {
				return err
			}
			kind, ok := geminiKind(ev.Native)
			switch {
			case !ok:
				return nil
			case w.AgentID != "":
				ev.Ignore = true
				return nil
			}
			ev.Kind = kind
			switch kind {
			case state.EventSessionStart:
				ev.Source = firstNonEmpty(w.Source, w.Trigger)
			case state.EventTurnStart:
				ev.Prompt = w.Prompt
			case state.EventSessionEnd:
				ev.Reason = firstNonEmpty(w.Reason, w.Trigger)
			}
			return nil
		},
		cancelled: geminiCancelled,
		resume:    func(id string) []string { return append([]string{"gemini"}, flagValue("--resume", "--resume", id)...) },
		fresh: func(prompt string) []string {
			if prompt == "" {
				return []string{"gemini"}
			}
			return append([]string{"gemini"}, flagValue("-i", "--prompt-interactive", prompt)...)
		},
	}
}

// geminiKind maps Gemini CLI's events. BeforeAgent fires once the user has
// submitted a prompt and AfterAgent once the turn's final answer is out;
// tool, model, notification and compression hooks are not turns.
func geminiKind(native string) (state.Event, bool) {
	switch native {
	case "SessionStart":
		return state.EventSessionStart, true
	case "BeforeAgent":
		return state.EventTurnStart, true
	case "AfterAgent":
		return state.EventTurnEnd, true
	case "SessionEnd":
		return state.EventSessionEnd, true
	}
	return "", false
}

// geminiCancelled tells the entry Gemini CLI 0.61 writes into its chat
// when the user denies a tool's confirmation (Esc, "No"): the turn stops,
// and no AfterAgent fires. {"type":"info","content":"Request cancelled."}.
// Esc mid-turn writes it too, and fires AfterAgent: that turn has ended
// already when anyone reads this.
func geminiCancelled(line []byte) bool {
	if !bytes.Contains(line, []byte("Request cancelled.")) {
		return false
	}
	var typ, content string
	return decode(line, []wireField{{name: "type", str: &typ}, {name: "content", str: &content}}) == nil &&
		typ == "info" && content == "Request cancelled."
}
