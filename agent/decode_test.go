package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetherdev/tether/state"
)

// The reference adapters: the parse functions as they were on
// encoding/json, with their tagged wire structs, kept as the oracle the
// reflection-free decoding must agree with.

func refDecode(payload []byte, w any) error {
	err := json.Unmarshal(payload, w)
	if err == nil {
		return nil
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("%w: %s is a JSON %s, want %s", ErrBadField, typ.Field, typ.Value, typ.Type)
	}
	return fmt.Errorf("%w: %w", ErrNotJSON, err)
}

func refCheckObject(payload []byte) error {
	p := bytes.TrimSpace(payload)
	switch {
	case len(p) == 0:
		return ErrEmptyPayload
	case p[0] == '{':
		return nil
	case json.Valid(p):
		return fmt.Errorf("%w (it is a JSON %s)", ErrNotObject, jsonKind(p[0]))
	default:
		return ErrNotJSON
	}
}

type refForeign struct {
	ConversationID json.RawMessage `json:"conversation_id"`
	WorkspaceRoots json.RawMessage `json:"workspace_roots"`
	SessionIDCamel json.RawMessage `json:"sessionId"`
	ThreadID       json.RawMessage `json:"thread-id"`
}

func (f refForeign) check(self string) error {
	return foreign{f.ConversationID, f.WorkspaceRoots, f.SessionIDCamel, f.ThreadID}.check(self)
}

type snakeWireRef struct {
	HookEventName  string `json:"hook_event_name"`
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	Prompt         string `json:"prompt"`
	Source         string `json:"source"`
	Trigger        string `json:"trigger"`
	Reason         string `json:"reason"`
	Model          string `json:"model"`
	AgentID        string `json:"agent_id"`
	Error          string `json:"error"`
	ErrorDetails   string `json:"error_details"`
	refForeign
}

func refDecodeSnake(self string, ev *Event, payload []byte) (snakeWireRef, error) {
	var w snakeWireRef
	if err := refDecode(payload, &w); err != nil {
		return w, err
	}
	return w, w.fill(self, ev)
}

func (w *snakeWireRef) fill(self string, ev *Event) error {
	if err := w.refForeign.check(self); err != nil {
		return err
	}
	if w.HookEventName != "" {
		ev.Native = w.HookEventName
	}
	ev.SessionID = w.SessionID
	ev.Cwd = w.Cwd
	ev.TranscriptPath = w.TranscriptPath
	ev.Model = w.Model
	return nil
}

func refStopFailureReason(w snakeWireRef, payload []byte) string {
	detail := w.ErrorDetails
	if detail == "" {
		var m struct {
			LastAssistantMessage string `json:"last_assistant_message"`
		}
		if json.Unmarshal(payload, &m) == nil {
			detail = m.LastAssistantMessage
		}
	}
	switch {
	case w.Error == "":
		return firstNonEmpty(detail, "turn failed")
	case detail == "":
		return w.Error
	}
	return w.Error + ": " + detail
}

func refMapSnake(ev *Event, w snakeWireRef, payload []byte) {
	kind, ok := snakeKind(ev.Native)
	if !ok {
		return
	}
	if w.AgentID != "" {
		ev.Ignore = true
		return
	}
	ev.Kind = kind
	switch kind {
	case state.EventSessionStart:
		ev.Source = w.Source
	case state.EventTurnStart:
		ev.Prompt = w.Prompt
	case state.EventSessionEnd:
		ev.Reason = w.Reason
	case state.EventError:
		ev.Reason = refStopFailureReason(w, payload)
		ev.SessionGone = SaysSessionGone(ev.Reason)
	}
}

type codexWireRef struct {
	snakeWireRef
	Type     string `json:"type"`
	ThreadID string `json:"thread-id"`
}

type cursorWireRef struct {
	HookEventName  string   `json:"hook_event_name"`
	ConversationID string   `json:"conversation_id"`
	SessionID      string   `json:"session_id"`
	WorkspaceRoots []string `json:"workspace_roots"`
	Cwd            string   `json:"cwd"`
	TranscriptPath string   `json:"transcript_path"`
	Model          string   `json:"model"`
	Prompt         string   `json:"prompt"`
	Status         string   `json:"status"`
	Reason         string   `json:"reason"`
	ErrorMessage   string   `json:"error_message"`
	refForeign
}

type copilotWireRef struct {
	HookEventName       string          `json:"hook_event_name"`
	SessionIDCamel      string          `json:"sessionId"`
	SessionID           string          `json:"session_id"`
	Cwd                 string          `json:"cwd"`
	TranscriptPathCamel string          `json:"transcriptPath"`
	TranscriptPath      string          `json:"transcript_path"`
	Prompt              string          `json:"prompt"`
	Source              string          `json:"source"`
	Reason              string          `json:"reason"`
	Error               json.RawMessage `json:"error"`
	Recoverable         *bool           `json:"recoverable"`
	refForeign
}

func refCopilotErrorMessage(raw json.RawMessage) string {
	var e struct {
		Message string `json:"message"`
		Name    string `json:"name"`
	}
	if json.Unmarshal(raw, &e) != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
		return "error occurred"
	}
	switch {
	case e.Name != "" && e.Message != "":
		return e.Name + ": " + e.Message
	case e.Message != "":
		return e.Message
	}
	return firstNonEmpty(e.Name, "error occurred")
}

// refParsers are the adapters' parse functions, by agent.
var refParsers = map[string]func(ev *Event, payload []byte) error{
	"claude-code": func(ev *Event, payload []byte) error {
		w, err := refDecodeSnake("claude-code", ev, payload)
		if err != nil {
			return err
		}
		refMapSnake(ev, w, payload)
		return nil
	},
	"gemini": func(ev *Event, payload []byte) error {
		w, err := refDecodeSnake("gemini", ev, payload)
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
	"codex": func(ev *Event, payload []byte) error {
		var w codexWireRef
		if err := refDecode(payload, &w); err != nil {
			return err
		}
		if w.HookEventName == "" && w.Type != "" {
			if err := w.refForeign.check("codex"); err != nil {
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
		if err := w.fill("codex", ev); err != nil {
			return err
		}
		refMapSnake(ev, w.snakeWireRef, payload)
		return nil
	},
	"cursor": func(ev *Event, payload []byte) error {
		var w cursorWireRef
		if err := refDecode(payload, &w); err != nil {
			return err
		}
		id := firstNonEmpty(w.ConversationID, w.SessionID)
		if err := w.refForeign.check("cursor"); err != nil {
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
	"copilot": func(ev *Event, payload []byte) error {
		var w copilotWireRef
		if err := refDecode(payload, &w); err != nil {
			return err
		}
		id := firstNonEmpty(w.SessionIDCamel, w.SessionID)
		if err := w.refForeign.check("copilot"); err != nil {
			return err
		}
		if w.HookEventName != "" {
			ev.Native = w.HookEventName
		}
		ev.SessionID = id
		ev.Cwd = w.Cwd
		ev.TranscriptPath = firstNonEmpty(w.TranscriptPathCamel, w.TranscriptPath)
		kind, ok := copilotKind(ev.Native)
		if !ok {
			return nil
		}
		ev.Kind = kind
		switch kind {
		case state.EventSessionStart:
			ev.Source = w.Source
		case state.EventTurnStart:
			ev.Prompt = w.Prompt
		case state.EventSessionEnd:
			ev.Reason = w.Reason
		case state.EventError:
			if w.Recoverable != nil && *w.Recoverable {
				ev.Ignore = true
				return nil
			}
			ev.Reason = refCopilotErrorMessage(w.Error)
			ev.SessionGone = SaysSessionGone(ev.Reason)
		}
		return nil
	},
}

// parseErrors are the errors Parse's callers tell apart.
var parseErrors = []error{ErrEmptyPayload, ErrNotJSON, ErrNotObject, ErrBadField, ErrWrongAgent}

func errorClass(err error) error {
	for _, e := range parseErrors {
		if errors.Is(err, e) {
			return e
		}
	}
	return err
}

// checkMatchesReference runs every adapter and its reference on payload:
// same event, or the same error class and message.
func checkMatchesReference(t *testing.T, payload []byte, eventArg string) {
	t.Helper()
	err, rerr := checkObject(payload), refCheckObject(payload)
	if fmt.Sprint(err) != fmt.Sprint(rerr) || errorClass(err) != errorClass(rerr) {
		t.Fatalf("checkObject(%q) = %v; reference: %v", payload, err, rerr)
	}
	if err != nil {
		return
	}
	for _, name := range Names() {
		a, _ := find(name)
		got := Event{Agent: name, Native: eventArg}
		want := got
		err := a.parse(&got, payload)
		rerr := refParsers[name](&want, payload)
		// encoding/json named a promoted field by its path through the
		// embedded struct; the decoder names the key.
		rmsg := strings.ReplaceAll(fmt.Sprint(rerr), "snakeWireRef.", "")
		if errorClass(err) != errorClass(rerr) || fmt.Sprint(err) != rmsg {
			t.Fatalf("%s parse of %q: %v; reference: %v", name, payload, err, rerr)
		}
		if err == nil && got != want {
			t.Fatalf("%s parse of %q:\n%+v\nreference:\n%+v", name, payload, got, want)
		}
	}
}

// referenceSeeds exercise the decoding rules the adapters rely on.
var referenceSeeds = []string{
	// Key matching: case-insensitive, escaped, repeated (the last wins, null leaves a string).
	`{"SESSION_ID":"s-1","Hook_Event_Name":"UserPromptSubmit","PROMPT":"p","prompt":"q"}`,
	`{"session_\u0069d":"s-1","hook_event_name":"Stop","session_id":null}`,
	`{"session_id":"s-1","hook_event_name":"SessionStart","ſource":"resume","Model":"m"}`,
	// Foreign keys, null or not, hidden by an adapter's own.
	`{"session_id":"s-1","hook_event_name":"Stop","conversation_id":null,"SessionId":null,"thread-id":null}`,
	`{"session_id":"s-1","hook_event_name":"Stop","WORKSPACE_ROOTS":[]}`,
	`{"session_id":"s-1","hook_event_name":"Stop","sessionid":1}`,
	`{"type":"agent-turn-complete","thread-id":"t-1","THREAD-ID":"t-2","cwd":"/w"}`,
	`{"type":"agent-turn-complete","thread-id":7}`,
	`{"hook_event_name":"stop","conversation_id":"c-1","workspace_roots":["/a","/b"],"workspace_roots":[null]}`,
	`{"hook_event_name":"stop","conversation_id":"c-1","workspace_roots":["/a"],"workspace_roots":null}`,
	`{"hook_event_name":"stop","conversation_id":"c-1","workspace_roots":[]}`,
	`{"hook_event_name":"stop","conversation_id":"c-1","workspace_roots":[1]}`,
	`{"hook_event_name":"stop","conversation_id":"c-1","workspace_roots":"/a"}`,
	`{"hook_event_name":"sessionEnd","conversation_id":"c-1","reason":"error","error_message":"Session not found"}`,
	// Type errors, the first one reported.
	`{"session_id":7,"hook_event_name":"Stop"}`, `{"session_id":"s","hook_event_name":{},"prompt":[]}`,
	`{"session_id":"s","hook_event_name":"Stop","model":true}`, `{"session_id":"s","agent_id":null,"error":1}`,
	// StopFailure details.
	`{"session_id":"s","hook_event_name":"StopFailure","error":"rate_limit","last_assistant_message":"No conversation found"}`,
	`{"session_id":"s","hook_event_name":"StopFailure","last_assistant_message":1}`,
	`{"session_id":"s","hook_event_name":"StopFailure","LAST_ASSISTANT_MESSAGE":"x","last_assistant_message":null}`,
	// Copilot's error and recoverable.
	`{"sessionId":"s","error":{"message":"m","name":"n"}}`, `{"sessionId":"s","error":{"message":"m","name":2}}`,
	`{"sessionId":"s","error":"session not found"}`, `{"sessionId":"s","error":""}`, `{"sessionId":"s","error":null}`,
	`{"sessionId":"s","error":[1]}`, `{"sessionId":"s","error":{"Message":"m"}}`, `{"sessionId":"s","recoverable":false,"error":{}}`,
	`{"sessionId":"s","recoverable":true,"recoverable":null}`, `{"sessionId":"s","recoverable":"yes"}`, `{"sessionId":"s","recoverable":{}}`,
	`{"sessionId":"s","hook_event_name":"ErrorOccurred","error":{"message":"m"}}`,
	// Not JSON, in the ways encoding/json words differently.
	`{"session_id":"s-1","hook_event_name":"Sto`, `{"session_id":"s-1",`, `{"session_id":"s-1"}}`, `{"a":tru}`, `{"a":-}`,
	`{"a":"\u12"}`, "{\"a\":\"\x01\"}", `{"a" 1}`, `{"a":1 "b":2}`, `{1:2}`, "\u00a0{}", "\v{}", "{}\u00a0", `{} {}`,
	`null`, `[]`, `"x"`, `1`, ``, ` `,
}

func TestParseMatchesReference(t *testing.T) {
	for _, seed := range referenceSeeds {
		for _, eventArg := range []string{"", "errorOccurred", "agentStop"} {
			checkMatchesReference(t, []byte(seed), eventArg)
		}
	}
}

// FuzzParseMatchesReference: for any payload, every adapter gives the event
// and the error its encoding/json version gave.
func FuzzParseMatchesReference(f *testing.F) {
	files, err := filepath.Glob("testdata/*/*.json")
	if err != nil {
		f.Fatal(err)
	}
	claude, err := filepath.Glob(claudeFixtures + "/*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range append(files, claude...) {
		f.Add(readFixture(f, file), "")
	}
	for _, seed := range referenceSeeds {
		f.Add([]byte(seed), "errorOccurred")
	}
	f.Fuzz(func(t *testing.T, payload []byte, eventArg string) {
		checkMatchesReference(t, payload, eventArg)
	})
}
