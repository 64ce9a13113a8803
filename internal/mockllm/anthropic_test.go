package mockllm

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// post sends a Messages request the way Claude Code does.
func post(t *testing.T, ctx context.Context, s *Server, body string) *http.Response {
	t.Helper()
	return postTo(t, ctx, s, "/v1/messages?beta=true", body)
}

// postTo posts a JSON body to path.
func postTo(t *testing.T, ctx context.Context, s *Server, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// events reads a whole server-sent event stream into (name, data) pairs.
func events(t *testing.T, r io.Reader) (names []string, data []map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, name)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var v map[string]any
			if err := json.Unmarshal([]byte(d), &v); err != nil {
				t.Fatalf("event data %q: %v", d, err)
			}
			data = append(data, v)
		}
	}
	return names, data
}

// userTurn is a streamed request whose last user message is text, followed
// by a system-role message as Claude Code 2.1.328 sends.
func userTurn(text string) string {
	b, _ := json.Marshal(text)
	return `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":` + string(b) + `}]},` +
		`{"role":"system","content":[{"type":"text","text":"env"}]}]}`
}

func TestAnthropicPlain(t *testing.T) {
	s := NewAnthropic(t)
	resp := post(t, context.Background(), s, userTurn("hello"))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	names, data := events(t, resp.Body)
	want := "message_start content_block_start content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if text := data[2]["delta"].(map[string]any)["text"]; text != Reply {
		t.Errorf("text %v, want %q", text, Reply)
	}
	if stop := data[4]["delta"].(map[string]any)["stop_reason"]; stop != "end_turn" {
		t.Errorf("stop_reason %v", stop)
	}
	if !s.Saw("hello") || len(s.Requests()) != 1 || s.Requests()[0].Path != "/v1/messages?beta=true" {
		t.Errorf("requests recorded: %+v", s.Requests())
	}
}

func TestAnthropicWriteThenReply(t *testing.T) {
	s := NewAnthropic(t)
	resp := post(t, context.Background(), s, userTurn("go [[write a.txt]]"))
	_, data := events(t, resp.Body)
	resp.Body.Close()
	block := data[1]["content_block"].(map[string]any)
	if block["type"] != "tool_use" || block["name"] != "Bash" {
		t.Fatalf("content block %v, want a Bash tool_use", block)
	}
	var input map[string]string
	if err := json.Unmarshal([]byte(data[2]["delta"].(map[string]any)["partial_json"].(string)), &input); err != nil {
		t.Fatal(err)
	}
	if input["command"] != ShellWrite("a.txt") {
		t.Errorf("command %q", input["command"])
	}
	if stop := data[4]["delta"].(map[string]any)["stop_reason"]; stop != "tool_use" {
		t.Errorf("stop_reason %v, want tool_use", stop)
	}

	// The follow-up carries the tool's result under the same prompt: a plain reply.
	follow := `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[` +
		`{"role":"user","content":"go [[write a.txt]]"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}]}`
	resp = post(t, context.Background(), s, follow)
	_, data = events(t, resp.Body)
	resp.Body.Close()
	if text := data[2]["delta"].(map[string]any)["text"]; text != Reply {
		t.Errorf("follow-up text %v, want %q", text, Reply)
	}

	// After a denied call, the denial's result and the next prompt come in
	// one message: the prompt's marker counts.
	next := `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[` +
		`{"role":"user","content":"go [[write a.txt]]"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"denied","is_error":true},` +
		`{"type":"text","text":"[Request interrupted by user for tool use]"},{"type":"text","text":"again [[write b.txt]]"}]}]}`
	resp = post(t, context.Background(), s, next)
	_, data = events(t, resp.Body)
	resp.Body.Close()
	if data[1]["content_block"].(map[string]any)["type"] != "tool_use" {
		t.Errorf("the prompt after a denial: %v, want a tool call", data[1])
	}
}

func TestAnthropicSideCallIgnoresMarkers(t *testing.T) {
	s := NewAnthropic(t)
	resp := post(t, context.Background(), s, `{"model":"m","messages":[{"role":"user","content":"title for: [[hold]]"}]}`)
	defer resp.Body.Close()
	var msg struct {
		Content []anthropicBlock `json:"content"`
		Stop    string           `json:"stop_reason"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != Reply || msg.Stop != "end_turn" {
		t.Errorf("side call answered %+v", msg)
	}
}

func TestAnthropicFail(t *testing.T) {
	s := NewAnthropic(t)
	resp := post(t, context.Background(), s, userTurn("[[fail]]"))
	defer resp.Body.Close()
	var body struct {
		Type  string            `json:"type"`
		Error map[string]string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadRequest || body.Type != "error" || body.Error["type"] != "invalid_request_error" {
		t.Errorf("status %d, body %+v", resp.StatusCode, body)
	}
}

func TestAnthropicHold(t *testing.T) {
	s := NewAnthropic(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := post(t, ctx, s, userTurn("[[hold]]"))
	defer resp.Body.Close()
	checkHeld(t, s, resp, cancel, "event: message_start\n", HoldText)
}

// A stream still held when the test ends must not make Close hang.
func TestAnthropicHoldReleasedAtClose(t *testing.T) {
	var s *Server
	var resp *http.Response
	t.Run("holder", func(t *testing.T) {
		s = NewAnthropic(t)
		resp = post(t, context.Background(), s, userTurn("[[hold]]"))
		<-s.Held()
	})
	// Reaching here means the subtest's cleanup closed the server while
	// the client still held the stream.
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if _, err := http.Get(s.URL); err == nil {
		t.Error("server still answers after its test ended")
	}
}

func TestAnthropicCountTokens(t *testing.T) {
	s := NewAnthropic(t)
	resp, err := http.Post(s.URL+"/v1/messages/count_tokens?beta=true", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]int
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusOK || v["input_tokens"] == 0 {
		t.Errorf("status %d, %v, %v", resp.StatusCode, v, err)
	}
}
