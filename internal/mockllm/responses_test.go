package mockllm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// postResponses sends a Responses request the way Codex does.
func postResponses(t *testing.T, ctx context.Context, s *Server, body string) *http.Response {
	t.Helper()
	return postTo(t, ctx, s, "/v1/responses", body)
}

// responsesInput is a request whose input is Codex 0.169's: developer
// instructions, the environment as a user message, then items.
func responsesInput(items ...string) string {
	return `{"model":"mock-model","stream":true,"tools":[{"type":"function","name":"exec_command"}],"input":[` +
		`{"type":"message","role":"developer","content":[{"type":"input_text","text":"You are Codex"}]},` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x</environment_context>"}]},` +
		strings.Join(items, ",") + `]}`
}

func userItem(text string) string {
	b, _ := json.Marshal(text)
	return `{"type":"message","role":"user","content":[{"type":"input_text","text":` + string(b) + `}]}`
}

// checkEvents checks that each event's data names its own type.
func checkEvents(t *testing.T, names []string, data []map[string]any) {
	t.Helper()
	for i, n := range names {
		if data[i]["type"] != n {
			t.Errorf("event %s carries type %v", n, data[i]["type"])
		}
	}
}

func TestResponsesPlain(t *testing.T) {
	s := NewResponses(t)
	resp := postResponses(t, context.Background(), s, responsesInput(userItem("say hi")))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	names, data := events(t, resp.Body)
	checkEvents(t, names, data)
	want := "response.created response.output_item.added response.output_text.delta response.output_item.done response.completed"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if data[2]["delta"] != Reply {
		t.Errorf("delta %v, want %q", data[2]["delta"], Reply)
	}
	if id := data[4]["response"].(map[string]any)["id"]; id == "" || id == nil {
		t.Errorf("response.completed without the response's id: %v", data[4])
	}
	if !s.Saw("say hi") || len(s.Requests()) != 1 || s.Requests()[0].Path != "/v1/responses" {
		t.Errorf("requests recorded: %+v", s.Requests())
	}
}

func TestResponsesWriteThenReply(t *testing.T) {
	s := NewResponses(t)
	resp := postResponses(t, context.Background(), s, responsesInput(userItem("go [[write a.txt]]")))
	names, data := events(t, resp.Body)
	resp.Body.Close()
	checkEvents(t, names, data)
	if got := strings.Join(names, " "); got != "response.created response.output_item.added response.output_item.done response.completed" {
		t.Fatalf("events %s", got)
	}
	item := data[2]["item"].(map[string]any)
	if item["type"] != "function_call" || item["name"] != "exec_command" || item["call_id"] == "" {
		t.Fatalf("item %v, want an exec_command function_call", item)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(item["arguments"].(string)), &args); err != nil {
		t.Fatal(err)
	}
	if args["cmd"] != ShellWrite("a.txt") || args["sandbox_permissions"] != "" {
		t.Errorf("args %q", args)
	}

	// The follow-up carries the call and its output after the same prompt.
	resp = postResponses(t, context.Background(), s, responsesInput(userItem("go [[write a.txt]]"),
		`{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_mock"}`,
		`{"type":"function_call_output","call_id":"call_mock","output":"Process exited with code 0"}`))
	names, data = events(t, resp.Body)
	resp.Body.Close()
	if len(names) != 5 || data[2]["delta"] != Reply {
		t.Errorf("follow-up events %v, data %v; want the plain reply", names, data)
	}
}

// [[escalate PATH]] asks to run the write outside Codex's sandbox, which
// its user must approve.
func TestResponsesEscalate(t *testing.T) {
	s := NewResponses(t)
	resp := postResponses(t, context.Background(), s, responsesInput(userItem("go [[escalate e.txt]]")))
	_, data := events(t, resp.Body)
	resp.Body.Close()
	var args map[string]string
	if err := json.Unmarshal([]byte(data[2]["item"].(map[string]any)["arguments"].(string)), &args); err != nil {
		t.Fatal(err)
	}
	if args["cmd"] != ShellWrite("e.txt") || args["sandbox_permissions"] != "require_escalated" || args["justification"] == "" {
		t.Errorf("args %q, want the write, escalated, with a justification", args)
	}
}

// Codex's title-generation thread quotes the user's prompt: it gets a title.
func TestResponsesTitleIgnoresMarkers(t *testing.T) {
	s := NewResponses(t)
	resp := postResponses(t, context.Background(), s, responsesInput(userItem(titlePrompt+" of at most 36 characters.\n\nUser prompt:\nwait [[hold]]")))
	defer resp.Body.Close()
	names, data := events(t, resp.Body)
	if len(names) != 5 || data[2]["delta"] != "Mock title" {
		t.Errorf("title request answered %v %v", names, data)
	}
}

func TestResponsesFail(t *testing.T) {
	s := NewResponses(t)
	resp := postResponses(t, context.Background(), s, responsesInput(userItem("[[fail]]")))
	defer resp.Body.Close()
	var body struct {
		Error map[string]any `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadRequest || body.Error["type"] != "invalid_request_error" || body.Error["message"] == "" {
		t.Errorf("status %d, body %+v", resp.StatusCode, body)
	}
}

func TestResponsesHold(t *testing.T) {
	s := NewResponses(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := postResponses(t, ctx, s, responsesInput(userItem("[[hold]]")))
	defer resp.Body.Close()
	checkHeld(t, s, resp, cancel, "event: response.created\n", "")
}

func TestResponsesBadRequest(t *testing.T) {
	s := NewResponses(t)
	resp := postResponses(t, context.Background(), s, `{not json`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status %d for a bad body, want 400", resp.StatusCode)
	}
	r, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusNotFound {
		t.Errorf("status %d for another endpoint, want 404", r.StatusCode)
	}
}
