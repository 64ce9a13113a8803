package agent

import (
	"strconv"

	"github.com/tetherdev/tether/internal/jsontext"
	"github.com/tetherdev/tether/state"
)

// opencodeWire is the payload of tether's own OpenCode plugin (written by
// `tether-sweep install --agent opencode`): OpenCode has no hook file, so
// the plugin, running inside the opencode process, turns OpenCode's bus
// events into these.
type opencodeWire struct {
	HookEventName string
	SessionID     string
	Cwd           string
	Prompt        string
	Source        string // session-start: "new" (OpenCode fires session.created for new sessions only)
	MessageID     string // turn-start: the user message, which names the event
	Reason        string // session-end: "deleted"
	Error         []byte // error: {name, message} as OpenCode's session.error gives it, raw
	OpencodePID   []byte // the opencode process (process.pid in the plugin), raw
	// A permission or question asked or answered: its request's ID, what
	// it asks, and when the plugin heard it. Read leniently: raw.
	RequestID, Permission, Patterns, Questions, At []byte
	foreign
}

func (w *opencodeWire) fields() []wireField {
	return append([]wireField{
		{name: "hook_event_name", str: &w.HookEventName},
		{name: "session_id", str: &w.SessionID},
		{name: "cwd", str: &w.Cwd},
		{name: "prompt", str: &w.Prompt},
		{name: "source", str: &w.Source},
		{name: "message_id", str: &w.MessageID},
		{name: "reason", str: &w.Reason},
		{name: "error", raw: &w.Error},
		{name: "opencode_pid", raw: &w.OpencodePID},
		{name: "request_id", raw: &w.RequestID},
		{name: "permission", raw: &w.Permission},
		{name: "patterns", raw: &w.Patterns},
		{name: "questions", raw: &w.Questions},
		{name: "at", raw: &w.At},
	}, w.foreign.fields()...)
}

// opencode is OpenCode's protocol, as tether's plugin speaks it: the plugin
// maps session.created to sessionStart, the chat.message hook to turnStart,
// session.idle to turnEnd, session.error to error and session.deleted to
// sessionEnd, and passes the opencode process's PID, because in `opencode
// run` the process may be gone before the hook runs. Nothing fires when
// OpenCode exits: the sweep decides that from the owner.
func opencode() adapter {
	const name = "opencode"
	return adapter{
		info:   Info{Name: name, Display: "OpenCode", OwnerEnv: "OPENCODE_PID", Binary: "opencode", Database: true},
		events: pluginEvents,
		waits:  opencodeWaits,
		parse: func(ev *Event, payload []byte, wf *waitFields) error {
			var w opencodeWire
			if err := decode(payload, w.fields()); err != nil {
				return err
			}
			if err := w.foreign.check(name); err != nil {
				return err
			}
			ev.OwnerPID = payloadPID(w.OpencodePID)
			*wf = waitFields{Request: stringOf(w.RequestID), Permission: stringOf(w.Permission), Patterns: w.Patterns,
				Questions: w.Questions, At: w.At, Cwd: w.Cwd}
			switch kind, _ := ev.record(pluginEvents, said{native: w.HookEventName, session: w.SessionID, cwd: w.Cwd,
				source: w.Source, prompt: w.Prompt, reason: w.Reason}); kind {
			case state.EventTurnStart:
				ev.Key = w.MessageID
			case state.EventSessionEnd:
				// session.deleted: the session is gone from OpenCode's
				// database, and with it any way to resume it.
				ev.SessionGone = true
			case state.EventError:
				errName, message := opencodeError(w.Error)
				if errName == "MessageAbortedError" {
					// Esc Esc: the user stopped the turn, which did not
					// fail. It has ended all the same.
					ev.Kind = state.EventTurnEnd
					return nil
				}
				ev.Reason = firstNonEmpty(joinNonEmpty(errName, message), "error")
				ev.SessionGone = SaysSessionGone(ev.Reason)
			}
			return nil
		},
		resume: resumeWith("opencode", "", "-s", "--session"),
		fresh:  freshWith("opencode", "--prompt", "--prompt"),
		writes: opencodeWrites,
	}
}

// payloadPID reads the agent's PID a plugin passes (OpenCode's
// opencode_pid, Pi's pi_pid), a JSON number (a string of digits is taken
// too); 0 when absent or not a PID.
func payloadPID(raw []byte) int {
	pid, err := strconv.Atoi(rawText(raw))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// opencodeError reads session.error's error: {"name", "data": {"message"}}
// as OpenCode sends it, or {"name", "message"}.
func opencodeError(raw []byte) (name, message string) {
	var data []byte
	if decode(raw, []wireField{{name: "name", str: &name}, {name: "message", str: &message}, {name: "data", raw: &data}}) != nil {
		if v, err := jsontext.Parse(raw); err == nil {
			message, _ = v.Unquote()
		}
		return "", message
	}
	if message == "" && len(data) > 0 {
		_ = decode(data, []wireField{{name: "message", str: &message}})
	}
	return name, message
}

// joinNonEmpty joins "name: message", leaving out what is empty.
func joinNonEmpty(name, message string) string {
	switch {
	case name != "" && message != "":
		return name + ": " + message
	case message != "":
		return message
	}
	return name
}
