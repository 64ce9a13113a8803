package mockllm

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// NewResponses mocks OpenAI's Responses API as Codex uses it: POST
// /v1/responses with "stream": true, answered in server-sent events. Codex's
// base_url is URL + "/v1". Write turns call Codex's apply_patch where the
// request offers it (responsesCall), else its shell tool, exec_command
// {"cmd": ...}, as do shell turns. Codex's hidden title-generation thread quotes
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
	case Write, Edit, Shell, Delete, Move:
		item := responsesCall(mk, offersApplyPatch(body))
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

// offersApplyPatch tells whether the request offers Codex's apply_patch
// as a tool of its own (a freeform tool, for the models Codex knows to
// take one).
func offersApplyPatch(body []byte) bool {
	var req struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(body, &req) // it parsed as a request before
	for _, t := range req.Tools {
		if t.Name == "apply_patch" {
			return true
		}
	}
	return false
}

// responsesCall is the output item calling the tool that does what mk
// asks: apply_patch, when offered, for a write, an edit, a delete or a
// move; without it an edit is the patch given to exec_command as the
// apply_patch command Codex's instructions teach (which Codex runs
// itself); the rest is exec_command running ShellCommand (ShellWrite for
// a write).
func responsesCall(mk Marker, applyPatch bool) map[string]any {
	if patch := Patch(mk); patch != "" && applyPatch {
		return map[string]any{"type": "custom_tool_call", "id": "ctc_mock", "call_id": "call_mock", "name": "apply_patch", "input": patch}
	}
	call := map[string]string{"cmd": ShellCommand(mk)}
	switch {
	case mk.Kind == Edit:
		call["cmd"] = "apply_patch <<'EOF'\n" + Patch(mk) + "EOF\n"
	case mk.Escalate:
		call["sandbox_permissions"], call["justification"] = "require_escalated", "Write "+mk.Path+"?"
	}
	args, _ := json.Marshal(call)
	return map[string]any{"type": "function_call", "id": "fc_mock", "call_id": "call_mock", "name": "exec_command", "arguments": string(args)}
}

// Patch is the apply_patch patch that does what mk asks (Codex's patch
// format, which OpenCode's apply_patch takes too: *** Add File, *** Update
// File with a hunk turning Content into Edited, *** Delete File, *** Update
// File with *** Move to and a hunk of context, Edited); "" for a marker
// that writes no file, or a write that asks to escalate.
func Patch(mk Marker) string {
	var body string
	switch {
	case mk.Kind == Write && !mk.Escalate:
		body = "*** Add File: " + mk.Path + "\n+" + EditOld + "\n"
	case mk.Kind == Edit:
		body = "*** Update File: " + mk.Path + "\n@@\n-" + EditOld + "\n+" + EditNew + "\n"
	case mk.Kind == Delete:
		body = "*** Delete File: " + mk.Path + "\n"
	case mk.Kind == Move:
		// apply_patch refuses an update with no hunk: one of context.
		body = "*** Update File: " + mk.Path + "\n*** Move to: " + mk.To + "\n@@\n " + EditNew + "\n"
	default:
		return ""
	}
	return "*** Begin Patch\n" + body + "*** End Patch\n"
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
