package agent

import "github.com/tetherdev/tether/state"

// piWire is the payload of tether's own Pi extension (written by
// `tether-sweep install --agent pi`): Pi has no hooks, so the extension,
// running inside the pi process, turns Pi's events into these.
type piWire struct {
	HookEventName  string
	SessionID      string
	TranscriptPath string // Pi's session file (null for a session kept in memory)
	Cwd            string
	Prompt         string
	Source         string // startup | resume | new | fork | reload
	Reason         string // session-end: quit | new | resume | fork
	Error          string
	PiPID          []byte // the pi process (process.pid in the extension), raw
	foreign
}

// fields lists piWire's own keys first: its pi_pid hides foreign's.
func (w *piWire) fields() []wireField {
	return append([]wireField{
		{name: "hook_event_name", str: &w.HookEventName},
		{name: "session_id", str: &w.SessionID},
		{name: "transcript_path", str: &w.TranscriptPath},
		{name: "cwd", str: &w.Cwd},
		{name: "prompt", str: &w.Prompt},
		{name: "source", str: &w.Source},
		{name: "reason", str: &w.Reason},
		{name: "error", str: &w.Error},
		{name: "pi_pid", raw: &w.PiPID},
	}, w.foreign.fields()...)
}

// pi is the Pi coding agent's protocol, as tether's extension speaks it:
// session_start is sessionStart (its reason "startup" made "resume" when
// the session already holds a conversation: Pi says startup when `pi
// --session ID` opens one), before_agent_start is turnStart, agent_end
// turnEnd (error when its last message failed; an Esc ends it "aborted"),
// session_shutdown sessionEnd. The extension passes the pi process's PID
// and waits for each hook in turn, so they arrive in order.
func pi() adapter {
	const name = "pi"
	return adapter{
		info:   Info{Name: name, Display: "Pi", Binary: "pi"},
		events: pluginEvents,
		parse: func(ev *Event, payload []byte, _ *waitFields) error {
			var w piWire
			if err := decode(payload, w.fields()); err != nil {
				return err
			}
			if err := w.foreign.check(name); err != nil {
				return err
			}
			ev.OwnerPID = payloadPID(w.PiPID)
			if kind, _ := ev.record(pluginEvents, said{native: w.HookEventName, session: w.SessionID, cwd: w.Cwd,
				transcript: w.TranscriptPath, source: w.Source, prompt: w.Prompt, reason: w.Reason}); kind == state.EventError {
				ev.Reason = firstNonEmpty(w.Error, "model call failed")
				ev.SessionGone = SaysSessionGone(ev.Reason)
			}
			return nil
		},
		resume: resumeWith("pi", "", "--session", "--session"),
		fresh:  freshWith("pi", "", ""),
		writes: piTools.writes,
	}
}
