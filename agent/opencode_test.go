package agent

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/tetherdev/tether/state"
)

// TestOpenCodePlugin maps what tether's plugin sent from inside the real
// OpenCode 1.18.33 (recorded/opencode/tether_plugin: the hook's argv, its
// stdin and its process chain), and payloads of the shapes it sends for the
// events no recording covers.
func TestOpenCodePlugin(t *testing.T) {
	const (
		dir = "testdata/recorded/opencode/tether_plugin"
		id  = "ses_df6079748ffemAqXkUt1Mtb5uQ"
	)
	oc := func(native string) Event {
		return Event{Agent: "opencode", Native: native, SessionID: id, Cwd: devCwd, OwnerPID: 23111}
	}
	resumed := func(native string) Event {
		return Event{Agent: "opencode", Native: native, SessionID: "ses_df50042b5ffebAAwYw49VT3IXP", Cwd: devCwd, OwnerPID: 4304}
	}
	for _, tc := range []struct {
		file, payload, eventArg string
		want                    Event
		err                     error
	}{
		{file: "sessionStart.json", eventArg: "sessionStart", want: set(oc("sessionStart"), func(e *Event) { e.Kind, e.Source = state.EventSessionStart, "new" })},
		{file: "turnStart.json", eventArg: "turnStart", want: set(oc("turnStart"), func(e *Event) {
			e.Kind, e.Prompt, e.Key = state.EventTurnStart, `"say hi via plugin"`, "msg_209f869a4001uyI9QlbEZuQeHa"
		})},
		{file: "turnEnd.json", eventArg: "turnEnd", want: tracked(oc("turnEnd"), state.EventTurnEnd)},
		// `opencode run --session ID`: no session.created, the prompt comes first.
		{file: "turnStart_resumed.json", eventArg: "turnStart", want: set(resumed("turnStart"), func(e *Event) {
			e.Kind, e.Prompt, e.Key = state.EventTurnStart, `"please FAIL now"`, "msg_20b00e49c0015suF2EW8WmSSkD"
		})},
		{file: "error_APIError.json", eventArg: "error", want: failed(resumed("error"), "APIError: mock failure")},
		{file: "turnEnd_after_error.json", eventArg: "turnEnd", want: tracked(resumed("turnEnd"), state.EventTurnEnd)},
		// Esc Esc in the TUI: recorded, it ends the turn and is no error.
		{file: "error_MessageAbortedError_tui.json", eventArg: "error", want: Event{Agent: "opencode", Native: "error",
			Kind: state.EventTurnEnd, SessionID: "ses_df4c603bbffeVwLuESS7ldMopW", Cwd: devCwd, OwnerPID: 3455}},
		// A provider error fails the turn.
		{payload: `{"hook_event_name":"error","session_id":"` + id + `","cwd":"` + devCwd + `","opencode_pid":23111,"error":{"name":"APIError","message":"mock failure (MOCK_FAIL)"}}`,
			eventArg: "error", want: failed(oc("error"), "APIError: mock failure (MOCK_FAIL)")},
		// Esc Esc aborts the turn: it ended, it did not fail.
		{payload: `{"hook_event_name":"error","session_id":"` + id + `","cwd":"` + devCwd + `","opencode_pid":23111,"error":{"name":"MessageAbortedError","message":"Aborted"}}`,
			eventArg: "error", want: tracked(oc("error"), state.EventTurnEnd)},
		// session.error as OpenCode itself shapes it, message under data.
		{payload: `{"hook_event_name":"error","session_id":"` + id + `","cwd":"` + devCwd + `","opencode_pid":23111,"error":{"name":"UnknownError","data":{"message":"Session not found"}}}`,
			eventArg: "error", want: set(failed(oc("error"), "UnknownError: Session not found"), func(e *Event) { e.SessionGone = true })},
		{payload: `{"hook_event_name":"error","session_id":"` + id + `","cwd":"` + devCwd + `","opencode_pid":23111,"error":{}}`,
			eventArg: "error", want: failed(oc("error"), "error")},
		// session.deleted: the end, and no resuming.
		{payload: `{"hook_event_name":"sessionEnd","session_id":"` + id + `","cwd":"` + devCwd + `","opencode_pid":23111,"reason":"deleted"}`,
			eventArg: "sessionEnd", want: set(sessionEnd(oc("sessionEnd"), "deleted"), func(e *Event) { e.SessionGone = true })},
		// A pid that is not one is no hint.
		{payload: `{"hook_event_name":"turnEnd","session_id":"` + id + `","opencode_pid":"x1"}`, eventArg: "turnEnd",
			want: Event{Agent: "opencode", Native: "turnEnd", Kind: state.EventTurnEnd, SessionID: id}},
		{payload: `{"hook_event_name":"turnEnd","session_id":"` + id + `","opencode_pid":-4}`, eventArg: "turnEnd",
			want: Event{Agent: "opencode", Native: "turnEnd", Kind: state.EventTurnEnd, SessionID: id}},
		// An event the plugin does not send is not a turn.
		{payload: `{"hook_event_name":"session.compacted","session_id":"` + id + `"}`,
			want: ignored(Event{Agent: "opencode", Native: "session.compacted", SessionID: id})},
		{payload: `{"hook_event_name":"turnEnd","opencode_pid":1}`, eventArg: "turnEnd", err: ErrMissingSessionID},
		// Another agent's payload is refused.
		{payload: `{"sessionId":"s-1","prompt":"hi"}`, eventArg: "turnStart", err: ErrWrongAgent},
	} {
		name := tc.file
		if name == "" {
			name = tc.want.Native + "/" + string(tc.want.Kind)
		}
		t.Run(name, func(t *testing.T) {
			payload := []byte(tc.payload)
			if tc.file != "" {
				payload = readFixture(t, filepath.Join(dir, tc.file))
			}
			got, err := Parse("opencode", tc.eventArg, payload, nil)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Parse error = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got != tc.want {
				t.Fatalf("Parse =\n  %+v\nwant\n  %+v", got, tc.want)
			}
		})
	}
}

// TestOpenCodePayloadRefusedElsewhere: the plugin's payload has the
// snake_case keys of Claude Code's, Codex's and Gemini CLI's; its
// opencode_pid keeps it from being recorded as theirs.
func TestOpenCodePayloadRefusedElsewhere(t *testing.T) {
	payload := readFixture(t, "testdata/recorded/opencode/tether_plugin/turnStart.json")
	for _, name := range []string{"claude-code", "codex", "gemini", "copilot"} {
		if _, err := Parse(name, "UserPromptSubmit", payload, nil); !errors.Is(err, ErrWrongAgent) {
			t.Errorf("Parse(%s, OpenCode's payload) error = %v, want ErrWrongAgent", name, err)
		}
	}
}
