package agent

import "github.com/tetherdev/tether/state"

// notifyTurnComplete is the only notification Codex's legacy notify program
// receives for a turn: {"type":"agent-turn-complete","thread-id":...}.
const notifyTurnComplete = "agent-turn-complete"

// codexWire is a Codex payload: a hooks.json event (the snake_case shape
// Claude Code uses, plus turn_id) or the JSON the legacy notify program gets
// as its last argument, with kebab-case keys.
type codexWire struct {
	snakeWire
	Type     string
	ThreadID string
}

// fields lists codexWire's own keys first: its thread-id hides foreign's.
func (w *codexWire) fields() []wireField {
	return append([]wireField{
		{name: "type", str: &w.Type},
		{name: "thread-id", str: &w.ThreadID},
	}, w.snakeWire.fields()...)
}

// codex is Codex's hook protocol: hooks.json lifecycle hooks on stdin, or
// the legacy notify program, called after every turn.
func codex() adapter {
	const name = "codex"
	return adapter{
		info: Info{Name: name, Display: "Codex", Binary: "codex"},
		tracks: func(native string) bool {
			return native == notifyTurnComplete || snakeTracks(native)
		},
		parse: func(ev *Event, payload []byte) error {
			var w codexWire
			if err := decode(payload, w.fields()); err != nil {
				return err
			}
			if w.HookEventName == "" && w.Type != "" {
				// Notify: the thread is the session; only a finished turn
				// is tracked.
				if err := w.foreign.check(name); err != nil {
					return err
				}
				ev.Native = w.Type
				ev.SessionID = w.ThreadID
				ev.Cwd = w.Cwd
				if w.Type == notifyTurnComplete {
					ev.Kind = state.EventTurnEnd
				}
				return nil
			}
			if err := w.fill(name, ev); err != nil {
				return err
			}
			mapSnake(ev, w.snakeWire, payload)
			return nil
		},
		resume: func(id string) []string { return append([]string{"codex", "resume"}, positional(id)...) },
		fresh:  func(prompt string) []string { return append([]string{"codex"}, positional(prompt)...) },
	}
}
