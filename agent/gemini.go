package agent

import "github.com/tetherdev/tether/state"

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
		parse: func(ev *Event, payload []byte) error {
			w, err := decodeSnake(name, ev, payload)
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
		resume: func(id string) []string { return append([]string{"gemini"}, flagValue("--resume", "--resume", id)...) },
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
