package mockllm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// NewAnthropic starts a mock of Anthropic's Messages API as Claude Code
// uses it: POST /v1/messages (streamed as server-sent events, or whole),
// and /v1/messages/count_tokens. A [[write PATH]] turn is one call of
// Claude Code's Bash tool running ShellWrite(PATH), a [[shell PATH]] turn
// the same, an [[edit PATH]] turn one of its Edit. Requests that offer no
// tools are Claude Code's side calls (titles, quota probes): they get
// Reply whatever their text says.
func NewAnthropic(tb testing.TB) *Server {
	return start(tb, anthropic)
}

// anthropicCall is the tool_use block (name and input) that does what m
// asks: Claude Code's Bash running ShellCommand for a write, a shell
// command, a delete or a move, its Edit for an edit; nil for the others.
func anthropicCall(m Marker) map[string]any {
	switch m.Kind {
	case Write, Shell, Delete, Move:
		if m.Kind == Write {
			m.Kind = Shell
		}
		return map[string]any{"name": "Bash", "input": map[string]any{"command": ShellCommand(m), "description": "Change files for the user"}}
	case Edit:
		return map[string]any{"name": "Edit", "input": map[string]any{"file_path": m.Path, "old_string": EditOld, "new_string": EditNew}}
	}
	return nil
}

// anthropicRequest is what the mock reads of a Messages request.
type anthropicRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// anthropicBlock is one content block of a message.
type anthropicBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func anthropic(s *Server, w http.ResponseWriter, r *http.Request, body []byte) {
	switch {
	case r.Method != http.MethodPost:
		anthropicError(w, http.StatusMethodNotAllowed, "invalid_request_error", "mock: POST only")
		return
	case strings.HasSuffix(r.URL.Path, "/v1/messages/count_tokens"):
		respond(w, http.StatusOK, map[string]int{"input_tokens": 10})
		return
	case !strings.HasSuffix(r.URL.Path, "/v1/messages"):
		anthropicError(w, http.StatusNotFound, "not_found_error", "mock: no such endpoint "+r.URL.Path)
		return
	}
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "mock: "+err.Error())
		return
	}
	m := Marker{Kind: Plain}
	if len(req.Tools) > 0 {
		// The last user message: Claude Code may send a system-role
		// message after it.
		// A tool's result alone is the follow-up of a call: a plain reply.
		// With text beside it, the user said more: after a denied call,
		// Claude Code sends the denial's result and the next prompt in
		// one message.
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if req.Messages[i].Role != "user" {
				continue
			}
			text, _ := anthropicUserText(req.Messages[i].Content)
			m = Parse(text)
			break
		}
	}
	if m.Kind == Fail {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "mock: [[fail]] asked for a model error")
		return
	}
	content := []any{map[string]any{"type": "text", "text": Reply}}
	stop := "end_turn"
	if m.Kind == Ask {
		offered := map[string]json.RawMessage{}
		for _, raw := range req.Tools {
			var t struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"input_schema"`
			}
			if json.Unmarshal(raw, &t) == nil {
				offered[t.Name] = t.Schema
			}
		}
		if name, args, ok := questionCall(offered); ok {
			content = []any{map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_mock%d", len(s.Requests())), "name": name, "input": args}}
			stop = "tool_use"
		}
	}
	if call := anthropicCall(m); call != nil {
		call["type"], call["id"] = "tool_use", fmt.Sprintf("toolu_mock%d", len(s.Requests()))
		content, stop = []any{call}, "tool_use"
	}
	msg := map[string]any{
		"id": fmt.Sprintf("msg_mock%d", len(s.Requests())), "type": "message", "role": "assistant",
		"model": req.Model, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 1},
	}
	if !req.Stream {
		if m.Kind == Hold {
			s.hold(r)
			return
		}
		msg["content"], msg["stop_reason"] = content, stop
		respond(w, http.StatusOK, msg)
		return
	}
	startStream(w)
	msg["content"], msg["stop_reason"] = []any{}, nil
	event(w, "message_start", map[string]any{"type": "message_start", "message": msg})
	if m.Kind == Hold {
		// The reply has begun when it stops: Claude Code writes a cancel
		// into its transcript only for a turn whose reply had begun (Esc
		// before the first words just puts the prompt back).
		event(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		event(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": HoldText}})
		s.hold(r)
		return
	}
	for i, c := range content {
		block := c.(map[string]any)
		switch block["type"] {
		case "text":
			event(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			event(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": block["text"]}})
		case "tool_use":
			input, _ := json.Marshal(block["input"])
			event(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
			event(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		}
		event(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 5}})
	event(w, "message_stop", map[string]any{"type": "message_stop"})
}

// anthropicUserText returns the text of a user message's content (a
// string, or blocks) and whether it carries a tool's result: the request
// that follows a tool call.
func anthropicUserText(content json.RawMessage) (text string, toolResult bool) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, false
	}
	var blocks []anthropicBlock
	if json.Unmarshal(content, &blocks) != nil {
		return "", false
	}
	var texts []string
	for _, b := range blocks {
		switch b.Type {
		case "tool_result":
			toolResult = true
		case "text":
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n"), toolResult
}

// anthropicError writes the Messages API's error body.
func anthropicError(w http.ResponseWriter, status int, typ, message string) {
	respond(w, status, map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": message}})
}
