package mockllm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// NewChat starts a mock of an OpenAI-compatible Chat Completions API:
// POST <base>/chat/completions, streamed as server-sent events or whole,
// and GET <base>/models. It is what Copilot CLI's bring-your-own-key mode,
// OpenCode's openai-compatible provider, Pi's openai-completions provider
// and Qwen Code's openai auth call: give them URL+"/v1". The agent works
// in dir: a [[write PATH]] turn is one call of the tool the request offers
// for writing a file, with PATH made absolute in dir (Copilot CLI's
// create, OpenCode's and Pi's write, Droid's Create, Qwen Code's
// write_file, else a bash tool running ShellWrite). Requests that offer no
// tools are side calls (titles): they get Reply whatever their text says.
func NewChat(tb testing.TB, dir string) *Server {
	return start(tb, func(s *Server, w http.ResponseWriter, r *http.Request, body []byte) {
		chat(s, w, r, body, dir)
	})
}

// chatRequest is what the mock reads of a Chat Completions request.
type chatRequest struct {
	Stream   bool   `json:"stream"`
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

func chat(s *Server, w http.ResponseWriter, r *http.Request, body []byte, dir string) {
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		respond(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": "gpt-4.1", "object": "model", "owned_by": "mock"}}})
		return
	case r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions"):
		chatError(w, http.StatusNotFound, "mock: no such endpoint "+r.Method+" "+r.URL.Path)
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		chatError(w, http.StatusBadRequest, "mock: "+err.Error())
		return
	}
	m := Marker{Kind: Plain}
	if len(req.Tools) > 0 {
		// The last user message, unless a tool's result came after it:
		// then this is the follow-up of a write, answered plainly.
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if role := req.Messages[i].Role; role == "tool" {
				break
			} else if role == "user" {
				m = Parse(chatText(req.Messages[i].Content))
				break
			}
		}
	}
	model := req.Model
	if model == "" {
		model = "mock"
	}
	switch m.Kind {
	case Fail:
		chatError(w, http.StatusBadRequest, "mock failure (MOCK_FAIL)")
	case Hold:
		if !req.Stream {
			// A whole answer cannot be held open half-sent: the client
			// waits for it all the same.
			s.hold(r)
			return
		}
		startStream(w)
		event(w, "", chatChunk(model, map[string]any{"role": "assistant", "content": HoldText}, nil))
		s.hold(r)
	case Write:
		name, args := chatWriteCall(req, dir, m.Path)
		chatToolCall(s, w, req.Stream, model, name, args)
	case Ask:
		offered := map[string]json.RawMessage{}
		for _, t := range req.Tools {
			offered[t.Function.Name] = t.Function.Parameters
		}
		if name, args, ok := questionCall(offered); ok {
			b, _ := json.Marshal(args) // built from JSON values
			chatToolCall(s, w, req.Stream, model, name, string(b))
			return
		}
		chatAnswer(w, req.Stream, model, map[string]any{"role": "assistant", "content": Reply}, "stop")
	default:
		chatAnswer(w, req.Stream, model, map[string]any{"role": "assistant", "content": Reply}, "stop")
	}
}

// chatToolCall answers with one call of tool name.
func chatToolCall(s *Server, w http.ResponseWriter, stream bool, model, name, args string) {
	chatAnswer(w, stream, model, map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
		"id": fmt.Sprintf("call_mock%d", len(s.Requests())), "type": "function",
		"function": map[string]string{"name": name, "arguments": args}}}}, "tool_calls")
}

// chatText flattens a message's content: a string, or parts of which the
// text ones count.
func chatText(raw json.RawMessage) string {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text
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

// chatWriteCall is the tool call that makes the agent write path (made
// absolute in dir) with Content, in the tool the request offers for it.
func chatWriteCall(req chatRequest, dir, path string) (name, args string) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	offered := map[string]bool{}
	var writeParams json.RawMessage
	for _, t := range req.Tools {
		offered[t.Function.Name] = true
		if t.Function.Name == "write" {
			writeParams = t.Function.Parameters
		}
	}
	var a map[string]string
	switch {
	case offered["create"]: // Copilot CLI
		name, a = "create", map[string]string{"path": path, "file_text": Content}
	case offered["write"] && hasProperty(writeParams, "filePath"): // OpenCode
		name, a = "write", map[string]string{"filePath": path, "content": Content}
	case offered["write"]: // Pi
		name, a = "write", map[string]string{"path": path, "content": Content}
	case offered["Create"]: // Factory's Droid
		name, a = "Create", map[string]string{"file_path": path, "content": Content}
	case offered["write_file"]: // Qwen Code
		name, a = "write_file", map[string]string{"file_path": path, "content": Content}
	default:
		name, a = "bash", map[string]string{"command": ShellWrite(path), "description": "Write " + filepath.Base(path)}
	}
	b, _ := json.Marshal(a) // a map of strings always marshals
	return name, string(b)
}

// hasProperty tells whether a tool's JSON schema declares property name.
func hasProperty(schema json.RawMessage, name string) bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	return json.Unmarshal(schema, &s) == nil && s.Properties[name] != nil
}

// chatAnswer sends one assistant message: as two chunks and [DONE] when
// streamed, else as one chat.completion.
func chatAnswer(w http.ResponseWriter, stream bool, model string, msg map[string]any, finish string) {
	usage := map[string]int{"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
	if !stream {
		respond(w, http.StatusOK, map[string]any{
			"id": "chatcmpl-mock", "object": "chat.completion", "created": 1, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	if calls, ok := msg["tool_calls"].([]any); ok {
		// A streamed tool call carries its index.
		for i, c := range calls {
			c.(map[string]any)["index"] = i
		}
		delete(msg, "content")
	}
	startStream(w)
	event(w, "", chatChunk(model, msg, nil))
	last := chatChunk(model, map[string]any{}, &finish)
	last["usage"] = usage
	event(w, "", last)
	w.Write([]byte("data: [DONE]\n\n"))
}

func chatChunk(model string, delta map[string]any, finish *string) map[string]any {
	return map[string]any{
		"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1, "model": model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
	}
}

// chatError is the API's error: an OpenAI error body.
func chatError(w http.ResponseWriter, status int, msg string) {
	respond(w, status, map[string]any{"error": map[string]string{
		"message": msg, "type": "invalid_request_error", "code": "mock_fail"}})
}
