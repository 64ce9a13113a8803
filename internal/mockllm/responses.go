package mockllm

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// NewResponses mocks OpenAI's Responses API as Codex uses it: POST
// /v1/responses with "stream": true, answered in server-sent events. Codex's
// base_url is URL + "/v1". Write turns call Codex's shell tool,
// exec_command {"cmd": ...}. Codex's hidden title-generation thread quotes
// the user's prompt, markers and all: it gets a title, never a marker's
// answer.
func NewResponses(tb testing.TB) *Server {
	return start(tb, serveResponses)
}

// responsesBody is the part of a request the mock reads.
type responsesBody struct {
	Input []struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"input"`
}

// titlePrompt starts the prompt of Codex's title-generation thread.
const titlePrompt = "Generate a concise, single-line task title"

// responsesTurn reads the request: the last user message's text, and whether
// a tool's output follows it (the follow-up of a tool call).
func responsesTurn(body []byte) (prompt string, toolResult bool, err error) {
	var b responsesBody
	if err := json.Unmarshal(body, &b); err != nil {
		return "", false, err
	}
	for _, it := range b.Input {
		switch {
		case it.Type == "message" && it.Role == "user":
			var text strings.Builder
			for _, c := range it.Content {
				if c.Type == "input_text" {
					text.WriteString(c.Text)
				}
			}
			prompt, toolResult = text.String(), false
		case strings.HasSuffix(it.Type, "_call_output"):
			toolResult = true
		}
	}
	return prompt, toolResult, nil
}

func serveResponses(s *Server, w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		responsesError(w, http.StatusNotFound, "mock: no such endpoint "+r.Method+" "+r.URL.Path)
		return
	}
	prompt, toolResult, err := responsesTurn(body)
	if err != nil {
		responsesError(w, http.StatusBadRequest, "mock: bad request body: "+err.Error())
		return
	}
	title := strings.HasPrefix(prompt, titlePrompt)
	mk := Marker{Kind: Plain}
	if !toolResult && !title {
		mk = Parse(prompt)
	}
	if mk.Kind == Fail {
		responsesError(w, http.StatusBadRequest, "mock: the prompt asked for a model error")
		return
	}
	startStream(w)
	responsesEvent(w, "response.created", map[string]any{"response": map[string]any{"id": "resp_mock", "status": "in_progress"}})
	switch mk.Kind {
	case Hold:
		s.hold(r)
		return
	case Ask:
		var req struct {
			Tools []struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"tools"`
		}
		_ = json.Unmarshal(body, &req) // it parsed as a request above
		offered := map[string]json.RawMessage{}
		for _, t := range req.Tools {
			offered[t.Name] = t.Parameters
		}
		if name, call, ok := questionCall(offered); ok {
			args, _ := json.Marshal(call) // built from JSON values
			item := map[string]any{"type": "function_call", "id": "fc_mock", "call_id": "call_mock", "name": name, "arguments": string(args)}
			responsesEvent(w, "response.output_item.added", map[string]any{"output_index": 0, "item": item})
			responsesEvent(w, "response.output_item.done", map[string]any{"output_index": 0, "item": item})
			break
		}
		responsesText(w, Reply)
	case Write:
		call := map[string]string{"cmd": ShellWrite(mk.Path)}
		if mk.Escalate {
			call["sandbox_permissions"], call["justification"] = "require_escalated", "Write "+mk.Path+"?"
		}
		args, _ := json.Marshal(call)
		item := map[string]any{"type": "function_call", "id": "fc_mock", "call_id": "call_mock", "name": "exec_command", "arguments": string(args)}
		responsesEvent(w, "response.output_item.added", map[string]any{"output_index": 0, "item": item})
		responsesEvent(w, "response.output_item.done", map[string]any{"output_index": 0, "item": item})
	default:
		text := Reply
		if title {
			text = "Mock title"
		}
		responsesText(w, text)
	}
	responsesEvent(w, "response.completed", map[string]any{"response": map[string]any{"id": "resp_mock", "status": "completed",
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}})
}

// responsesText streams an assistant message saying text.
func responsesText(w http.ResponseWriter, text string) {
	msg := func(t string) map[string]any {
		return map[string]any{"type": "message", "id": "msg_mock", "role": "assistant", "status": "completed",
			"content": []map[string]any{{"type": "output_text", "text": t, "annotations": []any{}}}}
	}
	responsesEvent(w, "response.output_item.added", map[string]any{"output_index": 0, "item": msg("")})
	responsesEvent(w, "response.output_text.delta", map[string]any{"output_index": 0, "content_index": 0, "item_id": "msg_mock", "delta": text})
	responsesEvent(w, "response.output_item.done", map[string]any{"output_index": 0, "item": msg(text)})
}

// responsesEvent writes one Responses event, its type both the SSE event's
// name and the data's "type", as OpenAI sends them.
func responsesEvent(w http.ResponseWriter, typ string, data map[string]any) {
	data["type"] = typ
	event(w, typ, data)
}

// responsesError answers with OpenAI's error body.
func responsesError(w http.ResponseWriter, status int, msg string) {
	respond(w, status, map[string]any{"error": map[string]any{
		"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
}
