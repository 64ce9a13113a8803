package agent

import (
	"bytes"

	"github.com/tetherdev/tether/state"
)

// notifyTurnComplete is the only notification Codex's legacy notify program
// receives for a turn: {"type":"agent-turn-complete","thread-id":...}.
const notifyTurnComplete = "agent-turn-complete"

// codexWire is a Codex payload: a hooks.json event (the snake_case shape
// Claude Code uses, plus turn_id) or the JSON the legacy notify program gets
// as its last argument, with kebab-case keys.
type codexWire struct {
	snakeWire
	Type       string
	ThreadID   string
	NotifyTurn string // notify's turn-id
}

// fields lists codexWire's own keys first: its thread-id hides foreign's.
func (w *codexWire) fields() []wireField {
	return append([]wireField{
		{name: "type", str: &w.Type},
		{name: "thread-id", str: &w.ThreadID},
		{name: "turn-id", str: &w.NotifyTurn},
	}, w.snakeWire.fields()...)
}

// codex is Codex's hook protocol: hooks.json lifecycle hooks on stdin, or
// the legacy notify program, called after every turn.
func codex() adapter {
	const name = "codex"
	return adapter{
		info:   Info{Name: name, Display: "Codex", Binary: "codex"},
		events: codexEvents,
		waits:  codexWaits,
		parse: func(ev *Event, payload []byte, wf *waitFields) error {
			var w codexWire
			if err := decode(payload, w.fields()); err != nil {
				return err
			}
			if w.HookEventName == "" && w.Type != "" {
				// Notify: the thread is the session; only a finished turn
				// is tracked, and only for a session the hooks already
				// record. Notify fires for every thread, the TUI's hidden
				// title-generation thread included, and a thread no hook
				// ever named is not a session of the user's.
				if err := w.foreign.check(name); err != nil {
					return err
				}
				ev.Native = w.Type
				ev.SessionID = w.ThreadID
				ev.Cwd = w.Cwd
				ev.Key = w.NotifyTurn
				if w.Type == notifyTurnComplete {
					ev.Kind = state.EventTurnEnd
					ev.NoCreate = true
				}
				return nil
			}
			if err := w.fill(name, wf); err != nil {
				return err
			}
			w.apply(ev, payload, codexEvents)
			return nil
		},
		reviewer: codexReviewer,
		resume:   resumeWith("codex", "resume", "", ""),
		fresh:    freshWith("codex", "", ""),
		writes:   codexWrites,
	}
}

// codexReviewer reads the turn_context Codex writes into its rollout at
// each turn: {"type":"turn_context","payload":{…,"approvals_reviewer":
// "user"|"auto_review",…}}. With auto_review, its reviewer model answers
// the permission requests, and the user is never asked.
func codexReviewer(line []byte) (auto, found bool) {
	if !bytes.Contains(line, []byte(`"turn_context"`)) {
		return false, false
	}
	var typ string
	var payload []byte
	if decode(line, []wireField{{name: "type", str: &typ}, {name: "payload", raw: &payload}}) != nil || typ != "turn_context" {
		return false, false
	}
	var reviewer string
	if decode(payload, []wireField{{name: "approvals_reviewer", str: &reviewer}}) != nil {
		return false, false
	}
	return reviewer != "" && reviewer != "user", true
}
