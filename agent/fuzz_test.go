package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tetherdev/tether/state"
)

// FuzzParse feeds arbitrary bytes to every adapter, on stdin and as Codex's
// notify argument, and checks Parse's promises.
func FuzzParse(f *testing.F) {
	for _, file := range payloadFiles(f) {
		f.Add(readFixture(f, file), "")
	}
	for _, seed := range []struct{ payload, eventArg string }{
		{`{"session_id":"..","hook_event_name":"Stop"}`, ""},
		{`{"sessionId":"s-1"}`, "agentStop"},
		{`{"session_id":"s-1","hook_event_name":"StopFailure","error":"invalid_request","error_details":"No conversation found"}`, ""},
		{`{"conversation_id":"c-1","hook_event_name":"stop","status":"error"}`, "beforeSubmitPrompt"},
		{`{"type":"agent-turn-complete","thread-id":"t-1"}`, `{"type":"agent-turn-complete","thread-id":"t-2"}`},
		{`{"sessionId":"s","error":"x","recoverable":true}`, "errorOccurred"},
		{"\xff\xfe{", "Stop"},
		{`[]`, ""},
	} {
		f.Add([]byte(seed.payload), seed.eventArg)
	}
	f.Fuzz(func(t *testing.T, payload []byte, eventArg string) {
		for _, name := range Names() {
			ev, err := Parse(name, eventArg, payload, nil)
			checkParsed(t, name, ev, err)
			ev, err = Parse(name, eventArg, nil, []string{string(payload)})
			checkParsed(t, name, ev, err)
		}
	})
}

// checkParsed asserts what Parse promises about any result.
func checkParsed(t *testing.T, agent string, ev Event, err error) {
	t.Helper()
	if out := Response(agent, ev); out != nil && !json.Valid(out) {
		t.Fatalf("%s: Response(%q) = %q is not JSON", agent, ev.Native, out)
	}
	if err != nil {
		return
	}
	if verr := state.ValidateID(ev.SessionID); verr != nil {
		t.Fatalf("%s: accepted session ID %q: %v", agent, ev.SessionID, verr)
	}
	if ev.Agent != agent || ev.Native == "" {
		t.Fatalf("%s: event %+v lacks its agent or native name", agent, ev)
	}
	switch {
	case ev.Ignore && ev.Kind != "":
		t.Fatalf("%s: ignored event has kind %q", agent, ev.Kind)
	case ev.Ignore:
	case ev.Kind == state.EventSessionStart, ev.Kind == state.EventTurnStart, ev.Kind == state.EventTurnEnd,
		ev.Kind == state.EventSessionEnd, ev.Kind == state.EventError:
	case ev.Kind == state.EventWait, ev.Kind == state.EventWaitInput:
		if k := ev.Wait.Kind; k != state.WaitPermission && k != state.WaitQuestion && k != state.WaitInput {
			t.Fatalf("%s: a wait for %q", agent, k)
		}
		if len(ev.Wait.Detail) > maxDetail || strings.ContainsAny(ev.Wait.Detail, "\r\n") {
			t.Fatalf("%s: wait detail %q is not one short line", agent, ev.Wait.Detail)
		}
	case ev.Kind == state.EventWaitOver:
	default:
		t.Fatalf("%s: event kind %q is neither tracked nor ignored", agent, ev.Kind)
	}
}

func BenchmarkParse(b *testing.B) {
	payload := readFixture(b, claudeFixtures+"/UserPromptSubmit.json")
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		ev, err := Parse("claude-code", "", payload, nil)
		if err != nil || ev.Kind != state.EventTurnStart {
			b.Fatalf("Parse = %+v, %v", ev, err)
		}
	}
}

// FuzzTranscriptLine feeds arbitrary lines to the transcript readers that
// end a turn no hook ended: no panic, a failure only from a JSON line and
// as one line of text, a cancel never also a failure.
func FuzzTranscriptLine(f *testing.F) {
	for _, seed := range []string{
		`{"type":"assistant","isApiErrorMessage":true,"message":{"content":[{"type":"text","text":"API Error: 400 x"}]}}`,
		`{"type":"assistant","isApiErrorMessage":true,"message":{"content":"API Error: 529\nretry"}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]}}`,
		`{"type":"abort","data":{"reason":"user_abort"}}`,
		`{"type":"assistant","isApiErrorMessage":"true"}`, `{"type":"user"`, `null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		msg, ok := claudeFailure(line)
		switch {
		case msg != "" && !ok:
			t.Fatalf("claudeFailure(%q) = %q, not a line of the conversation", line, msg)
		case msg != "" && !json.Valid(line):
			t.Fatalf("claudeFailure(%q) = %q from a line that is not JSON", line, msg)
		case strings.Contains(msg, "\n"):
			t.Fatalf("claudeFailure(%q) = %q, more than one line", line, msg)
		case msg != "" && claudeCancelled(line):
			t.Fatalf("%q is both a cancel and a failure", line)
		}
		copilotCancelled(line)
	})
}
