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
// in dir: a [[write PATH]], [[edit PATH]] or [[shell PATH]] turn is one
// call of the tool the request offers for it, with PATH made absolute in
// dir (chatCall). Requests that offer no tools are side calls (titles):
// they get Reply whatever their text says.
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
	m, step := Marker{Kind: Plain}, 0
	if len(req.Tools) > 0 {
		// The last user message, and how many tools' results came after
		// it: the steps of its turn done.
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if role := req.Messages[i].Role; role == "tool" {
				step++
			} else if role == "user" {
				m = Parse(chatText(req.Messages[i].Content))
				break
			}
		}
	}
	// An edit reads its file first where the agent has a tool for that
	// (Qwen Code edits only a file its session has read), then edits it;
	// any other marker's turn is one call. What follows is answered plainly.
	readName, readArgs, reads := chatRead(req, dir, m)
	if step > 0 && !(m.Kind == Edit && reads && step == 1) {
		m = Marker{Kind: Plain}
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
	case Write, Edit, Shell, Delete, Move:
		name, args := chatCall(req, dir, m)
		if m.Kind == Edit && reads && step == 0 {
			name, args = readName, readArgs
		}
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

// chatCall is the tool call that does what m asks, with m's paths made
// absolute in dir, in the tool the request offers for it: a write with
// Content (Copilot CLI's create, OpenCode's and Pi's write, Droid's
// Create, Qwen Code's write_file), an edit of Content into Edited (their
// edit tools), else, and for Shell, Delete and Move, their shell tool
// running ShellCommand.
func chatCall(req chatRequest, dir string, m Marker) (name, args string) {
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	path := abs(m.Path)
	offered := map[string]json.RawMessage{}
	for _, t := range req.Tools {
		offered[t.Function.Name] = t.Function.Parameters
	}
	has := func(tool, prop string) bool {
		params, ok := offered[tool]
		return ok && (prop == "" || hasProperty(params, prop))
	}
	var a map[string]any
	switch patch := Patch(m); {
	case patch != "" && has("apply_patch", "patchText"): // OpenCode, for the models it gives apply_patch
		name, a = "apply_patch", map[string]any{"patchText": patch}
	case m.Kind == Write:
		switch {
		case has("create", ""): // Copilot CLI
			name, a = "create", map[string]any{"path": path, "file_text": Content}
		case has("write", "filePath"): // OpenCode
			name, a = "write", map[string]any{"filePath": path, "content": Content}
		case has("write", ""): // Pi
			name, a = "write", map[string]any{"path": path, "content": Content}
		case has("Create", ""): // Factory's Droid
			name, a = "Create", map[string]any{"file_path": path, "content": Content}
		case has("write_file", ""): // Qwen Code
			name, a = "write_file", map[string]any{"file_path": path, "content": Content}
		}
	case m.Kind == Edit:
		switch {
		case has("edit", "edits"): // Pi
			name, a = "edit", map[string]any{"path": path, "edits": []any{map[string]string{"oldText": EditOld, "newText": EditNew}}}
		case has("edit", "filePath"): // OpenCode
			name, a = "edit", map[string]any{"filePath": path, "oldString": EditOld, "newString": EditNew}
		case has("edit", "old_str"): // Copilot CLI
			name, a = "edit", map[string]any{"path": path, "old_str": EditOld, "new_str": EditNew}
		case has("Edit", ""): // Factory's Droid
			name, a = "Edit", map[string]any{"file_path": path, "old_str": EditOld, "new_str": EditNew}
		case has("edit", "old_string"): // Qwen Code
			name, a = "edit", map[string]any{"file_path": path, "old_string": EditOld, "new_string": EditNew}
		}
	}
	if name == "" {
		shell := m
		if m.Kind == Write || m.Kind == Edit {
			shell = Marker{Kind: Shell, Path: path}
		}
		command := ShellCommand(shell)
		switch {
		case has("Execute", ""): // Factory's Droid
			name, a = "Execute", map[string]any{"command": command, "summary": "Change files for the user",
				"riskLevel": "low", "riskLevelReason": "It changes one file of the project."}
		case has("run_shell_command", ""): // Qwen Code
			name, a = "run_shell_command", map[string]any{"command": command, "description": "Change files for the user"}
		default: // Copilot CLI, OpenCode, Pi
			name, a = "bash", map[string]any{"command": command}
			if has("bash", "description") {
				a["description"] = "Change files for the user"
			}
		}
	}
	b, _ := json.Marshal(a) // strings, and lists and maps of them
	return name, string(b)
}

// chatRead is the call of the agent's tool for reading a file that an
// edit marker's turn makes first (Copilot CLI's view, OpenCode's and Pi's
// read, Droid's Read, Qwen Code's read_file); ok is false for another
// marker, or when the request offers none.
func chatRead(req chatRequest, dir string, m Marker) (name, args string, ok bool) {
	if m.Kind != Edit {
		return "", "", false
	}
	path := m.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	var a map[string]string
	for _, t := range req.Tools {
		switch n := t.Function.Name; {
		case n == "view": // Copilot CLI
			a = map[string]string{"path": path}
		case n == "read" && hasProperty(t.Function.Parameters, "filePath"): // OpenCode
			a = map[string]string{"filePath": path}
		case n == "read": // Pi
			a = map[string]string{"path": path}
		case n == "Read", n == "read_file": // Factory's Droid, Qwen Code
			a = map[string]string{"file_path": path}
		default:
			continue
		}
		b, _ := json.Marshal(a) // a map of strings
		return t.Function.Name, string(b), true
	}
	return "", "", false
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
