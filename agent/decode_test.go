package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// The oracle for decode is encoding/json itself: each wire table becomes,
// by reflection, the tagged struct it stands for (one field per key, the
// first of a name only: an adapter's own key hides foreign's, as embedding
// did), and json.Unmarshal into it must agree with decode, value for value
// and error class for error class. Nothing of the adapters is copied here:
// their tables are the ones Parse uses.
func wireTables() map[string]func() []wireField {
	return map[string]func() []wireField{
		"snake":   func() []wireField { var w snakeWire; return w.fields() },
		"codex":   func() []wireField { var w codexWire; return w.fields() },
		"cursor":  func() []wireField { var w cursorWire; return w.fields() },
		"copilot": func() []wireField { var w copilotWire; return w.fields() },
		"stop failure": func() []wireField {
			var m string
			return []wireField{{name: "last_assistant_message", str: &m}}
		},
		"copilot error": func() []wireField {
			var m, n string
			return []wireField{{name: "message", str: &m}, {name: "name", str: &n}}
		},
	}
}

// target is where a wire field puts its value, and the Go type
// json.Unmarshal would have decoded it into.
func (f wireField) target() (reflect.Value, reflect.Type) {
	switch {
	case f.str != nil:
		return reflect.ValueOf(f.str).Elem(), reflect.TypeFor[string]()
	case f.strs != nil:
		return reflect.ValueOf(f.strs).Elem(), reflect.TypeFor[[]string]()
	default:
		return reflect.ValueOf(f.raw).Elem(), reflect.TypeFor[json.RawMessage]()
	}
}

// checkDecode decodes payload with decode and with encoding/json into the
// struct the table stands for, and compares.
func checkDecode(t *testing.T, table string, fields []wireField, payload []byte) {
	t.Helper()
	var (
		structFields []reflect.StructField
		used         []int // index in fields of each struct field
		seen         = map[string]bool{}
	)
	for i, f := range fields {
		if seen[f.name] {
			continue
		}
		seen[f.name] = true
		_, typ := f.target()
		structFields = append(structFields, reflect.StructField{
			Name: fmt.Sprintf("F%d", i), Type: typ, Tag: reflect.StructTag(fmt.Sprintf(`json:%q`, f.name)),
		})
		used = append(used, i)
	}
	ref := reflect.New(reflect.StructOf(structFields))
	rerr := json.Unmarshal(payload, ref.Interface())
	err := decode(payload, fields)

	var typ *json.UnmarshalTypeError
	switch {
	case rerr == nil && err != nil, rerr != nil && err == nil:
		t.Fatalf("%s: decode(%q) = %v; json.Unmarshal: %v", table, payload, err, rerr)
	case errors.As(rerr, &typ) && !errors.Is(err, ErrBadField):
		t.Fatalf("%s: decode(%q) = %v; json.Unmarshal reports a bad field: %v", table, payload, err, rerr)
	case rerr != nil && !errors.As(rerr, &typ) && !errors.Is(err, ErrNotJSON):
		t.Fatalf("%s: decode(%q) = %v; json.Unmarshal reports bad JSON: %v", table, payload, err, rerr)
	case rerr != nil:
		return // json.Unmarshal goes on after a type error; decode stops: values differ
	}
	for j, i := range used {
		got, _ := fields[i].target()
		want := ref.Elem().Field(j)
		if fields[i].raw != nil {
			// A raw value is kept as written; json.RawMessage is too.
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("%s: %q of %q = %q; json.Unmarshal: %q", table, fields[i].name, payload, got.Bytes(), want.Bytes())
			}
			continue
		}
		if !reflect.DeepEqual(got.Interface(), want.Interface()) {
			t.Fatalf("%s: %q of %q = %#v; json.Unmarshal: %#v", table, fields[i].name, payload, got.Interface(), want.Interface())
		}
	}
}

func checkAllTables(t *testing.T, payload []byte) {
	t.Helper()
	if bytes.HasPrefix(bytes.TrimSpace(payload), []byte("{")) || bytes.Equal(bytes.TrimSpace(payload), []byte("null")) {
		for name, table := range wireTables() {
			checkDecode(t, name, table(), payload)
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

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, seed := range referenceSeeds {
		checkAllTables(t, []byte(seed))
	}
}

// FuzzDecodeMatchesEncodingJSON: for any payload, every wire table decodes
// what json.Unmarshal decodes into the tagged struct it stands for.
func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, file := range payloadFiles(f) {
		f.Add(readFixture(f, file))
	}
	for _, seed := range referenceSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		checkAllTables(t, payload)
	})
}
