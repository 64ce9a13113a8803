package mockllm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Chat is a mock of an OpenAI-compatible Chat Completions API (POST
// <base>/chat/completions, streamed as SSE or answered whole), the API
// Copilot CLI's bring-your-own-key mode and OpenCode's openai-compatible
// provider call. Point the agent at URL()+"/v1".
type Chat struct {
	srv  *httptest.Server
	dir  string
	done chan struct{} // closed at cleanup: held streams let go

	mu       sync.Mutex
	requests []ChatRequest
}

// ChatRequest is one request the mock received.
type ChatRequest struct {
	Method, Path string
	Body         []byte
	// LastUser is the text of the last user message: where the markers
	// are read, and where a test finds its prompt.
	LastUser string
	// ToolResult tells a follow-up carrying a tool's result (the last
	// message is the tool's).
	ToolResult bool
}

// chatMessage is a message of a request; content is a string or a list
// of parts.
type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type chatTool struct {
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

type chatBody struct {
	Stream   bool          `json:"stream"`
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Tools    []chatTool    `json:"tools"`
}

// NewChat starts the mock for an agent working in dir, the directory the
// paths of [[write PATH]] are relative to; it is closed when the test
// ends.
func NewChat(t testing.TB, dir string) *Chat {
	t.Helper()
	c := &Chat{dir: dir, done: make(chan struct{})}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	// Cleanups run last-registered first: held streams are let go before
	// Close waits for them.
	t.Cleanup(c.srv.Close)
	t.Cleanup(func() { close(c.done) })
	return c
}

// URL is the server's base URL, without the /v1 the agents are given.
func (c *Chat) URL() string { return c.srv.URL }

// Requests returns the requests received so far.
func (c *Chat) Requests() []ChatRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ChatRequest(nil), c.requests...)
}

func (c *Chat) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := ChatRequest{Method: r.Method, Path: r.URL.Path, Body: body}
	var b chatBody
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions") {
		if err := json.Unmarshal(body, &b); err != nil {
			c.record(req)
			chatError(w, "mock: request body is not JSON: "+err.Error())
			return
		}
		req.LastUser, req.ToolResult = lastUser(b.Messages)
	}
	c.record(req)
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		writeJSON(w, map[string]any{"object": "list", "data": []any{map[string]any{"id": "gpt-4.1", "object": "model", "owned_by": "mock"}}})
		return
	case req.LastUser == "" && !req.ToolResult:
		http.NotFound(w, r)
		return
	}
	m := chatMarkersOf(req.LastUser)
	switch {
	case m.fail:
		chatError(w, "mock failure (MOCK_FAIL)")
	case m.hold && !req.ToolResult:
		c.hold(w, r, b.Model)
	case m.write != "" && !req.ToolResult:
		name, args := c.writeCall(b.Tools, m.write)
		c.reply(w, b, "", &toolCall{name: name, args: args})
	default:
		c.reply(w, b, "done.", nil)
	}
}

func (c *Chat) record(req ChatRequest) {
	c.mu.Lock()
	c.requests = append(c.requests, req)
	c.mu.Unlock()
}

// lastUser finds the text of the last user message, and whether a tool's
// result came after it.
func lastUser(msgs []chatMessage) (text string, toolResult bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		switch msgs[i].Role {
		case "tool":
			toolResult = true
		case "user":
			return contentText(msgs[i].Content), toolResult
		}
	}
	return "", toolResult
}

// contentText flattens a message's content: a string, or parts of which
// the text ones count.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// writeCall is the tool call that makes the agent write path with
// chatWritten, in the tool the agent offers for it: Copilot CLI's
// create, OpenCode's write, else a shell command.
func (c *Chat) writeCall(tools []chatTool, path string) (name, args string) {
	abs := path
	if !filepath.IsAbs(abs) && c.dir != "" {
		abs = filepath.Join(c.dir, path)
	}
	offered := map[string]bool{}
	for _, t := range tools {
		offered[t.Function.Name] = true
	}
	var a map[string]string
	switch {
	case offered["create"]:
		name, a = "create", map[string]string{"path": abs, "file_text": chatWritten}
	case offered["write"]:
		name, a = "write", map[string]string{"filePath": abs, "content": chatWritten}
	default:
		name, a = "bash", map[string]string{
			"command":     fmt.Sprintf("printf '%%s\\n' %s > %s", shellQuote(strings.TrimSuffix(chatWritten, "\n")), shellQuote(abs)),
			"description": "write " + path,
		}
	}
	out, _ := json.Marshal(a)
	return name, string(out)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

type toolCall struct{ name, args string }

// reply answers with text or one tool call, streamed when asked to.
func (c *Chat) reply(w http.ResponseWriter, b chatBody, text string, call *toolCall) {
	model := b.Model
	if model == "" {
		model = "mock"
	}
	finish := "stop"
	if call != nil {
		finish = "tool_calls"
	}
	usage := map[string]int{"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
	if !b.Stream {
		msg := map[string]any{"role": "assistant", "content": text}
		if call != nil {
			msg["content"] = nil
			msg["tool_calls"] = []any{map[string]any{"id": "call_1", "type": "function",
				"function": map[string]string{"name": call.name, "arguments": call.args}}}
		}
		writeJSON(w, map[string]any{
			"id": "chatcmpl-mock", "object": "chat.completion", "created": 1, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	sse(w)
	delta := map[string]any{"role": "assistant", "content": text}
	if call != nil {
		delta = map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
			"index": 0, "id": "call_1", "type": "function",
			"function": map[string]string{"name": call.name, "arguments": call.args}}}}
	}
	chunk(w, model, delta, nil, nil)
	chunk(w, model, map[string]any{}, &finish, usage)
	fmt.Fprint(w, "data: [DONE]\n\n")
	flush(w)
}

// hold starts the stream, with the assistant's role and no content yet,
// and keeps it open until the client goes away or the test ends.
func (c *Chat) hold(w http.ResponseWriter, r *http.Request, model string) {
	sse(w)
	chunk(w, model, map[string]any{"role": "assistant", "content": ""}, nil, nil)
	flush(w)
	select {
	case <-r.Context().Done():
	case <-c.done:
	}
}

func sse(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

func chunk(w io.Writer, model string, delta map[string]any, finish *string, usage map[string]int) {
	ev := map[string]any{
		"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1, "model": model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
	}
	if usage != nil {
		ev["usage"] = usage
	}
	data, _ := json.Marshal(ev)
	fmt.Fprintf(w, "data: %s\n\n", data)
}

// chatError is the API's error: HTTP 400 with an OpenAI error body.
func chatError(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	data, _ := json.Marshal(map[string]any{"error": map[string]string{
		"message": msg, "type": "invalid_request_error", "code": "mock_fail"}})
	w.Write(data)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	data, _ := json.Marshal(v)
	w.Write(data)
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// chatWritten is what a [[write PATH]] turn writes.
const chatWritten = "written by the agent\n"

type chatMarkers struct {
	write      string
	hold, fail bool
}

// chatMarkersOf reads the markers of a prompt: [[write PATH]], [[hold]],
// [[fail]].
func chatMarkersOf(prompt string) chatMarkers {
	var m chatMarkers
	m.hold = strings.Contains(prompt, "[[hold]]")
	m.fail = strings.Contains(prompt, "[[fail]]")
	if _, rest, ok := strings.Cut(prompt, "[[write "); ok {
		if p, _, ok := strings.Cut(rest, "]]"); ok {
			m.write = strings.TrimSpace(p)
		}
	}
	return m
}
