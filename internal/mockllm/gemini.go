package mockllm

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// NewGemini starts a mock of the Gemini API as Gemini CLI uses it
// (GOOGLE_GEMINI_BASE_URL): POST /v1beta/models/MODEL:generateContent for
// the CLI's JSON side calls (the model router, the next-speaker check),
// and MODEL:streamGenerateContent?alt=sse for the turn itself. A
// [[write PATH]] turn is one call of Gemini CLI's write_file tool, an
// [[edit PATH]] turn one of its replace, a [[shell PATH]] turn one of its
// run_shell_command (PATH as given: relative to the working directory).
func NewGemini(tb testing.TB) *Server {
	return start(tb, gemini)
}

// geminiRequest is what the mock reads of a generateContent request.
type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             string          `json:"text"`
			FunctionResponse json.RawMessage `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	GenerationConfig struct {
		ResponseMimeType string `json:"responseMimeType"`
	} `json:"generationConfig"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

// geminiSideReply answers every JSON side call: the router's schemas ask
// for model_choice or complexity_score, the next-speaker check for
// next_speaker; each reads its own fields and ignores the rest.
const geminiSideReply = `{"reasoning":"mock","model_choice":"flash","complexity_reasoning":"mock","complexity_score":1,"next_speaker":"user"}`

func gemini(s *Server, w http.ResponseWriter, r *http.Request, body []byte) {
	model, method, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":")
	switch {
	case r.Method != http.MethodPost:
		geminiError(w, http.StatusMethodNotAllowed, "mock: POST only")
		return
	case !ok || !strings.HasPrefix(r.URL.Path, "/v1beta/models/") ||
		method != "generateContent" && method != "streamGenerateContent":
		geminiError(w, http.StatusNotFound, "mock: no such method "+r.URL.Path)
		return
	}
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		geminiError(w, http.StatusBadRequest, "mock: "+err.Error())
		return
	}
	m := Marker{Kind: Plain}
	if req.GenerationConfig.ResponseMimeType != "application/json" {
		if text, toolResult := req.lastUser(); !toolResult {
			m = Parse(text)
		}
	}
	var part map[string]any
	switch m.Kind {
	case Fail:
		geminiError(w, http.StatusBadRequest, "mock: [[fail]] asked for a model error")
		return
	case Write:
		part = map[string]any{"functionCall": map[string]any{
			"name": "write_file", "args": map[string]any{"file_path": m.Path, "content": Content},
		}}
	case Edit:
		part = map[string]any{"functionCall": map[string]any{
			"name": "replace", "args": map[string]any{"file_path": m.Path, "instruction": "Say the agent edited it.",
				"old_string": EditOld, "new_string": EditNew},
		}}
	case Shell, Delete, Move:
		part = map[string]any{"functionCall": map[string]any{
			"name": "run_shell_command", "args": map[string]any{"command": ShellCommand(m), "description": "Change files for the user"},
		}}
	case Ask:
		offered := map[string]json.RawMessage{}
		for _, t := range req.Tools {
			for _, d := range t.FunctionDeclarations {
				offered[d.Name] = d.ParametersJSONSchema
				if len(d.Parameters) > 0 {
					offered[d.Name] = d.Parameters
				}
			}
		}
		part = map[string]any{"text": Reply}
		if name, args, ok := questionCall(offered); ok {
			part = map[string]any{"functionCall": map[string]any{"name": name, "args": args}}
		}
	default:
		part = map[string]any{"text": Reply}
		if req.GenerationConfig.ResponseMimeType == "application/json" {
			part["text"] = geminiSideReply
		}
	}
	if method == "generateContent" {
		if m.Kind == Hold {
			s.hold(r)
			return
		}
		respond(w, http.StatusOK, geminiResponse(model, part, true))
		return
	}
	startStream(w)
	if m.Kind == Hold {
		event(w, "", geminiResponse(model, map[string]any{"text": HoldText}, false))
		s.hold(r)
		return
	}
	event(w, "", geminiResponse(model, part, true))
}

// lastUser is the text of the request's last user message — its last
// part: a resumed session whose last turn was cut off sends that turn's
// prompt and the new one as parts of one message — and whether that
// message carries a tool's result: the request after a tool call.
func (q *geminiRequest) lastUser() (text string, toolResult bool) {
	for i := len(q.Contents) - 1; i >= 0; i-- {
		c := q.Contents[i]
		if c.Role != "user" {
			continue
		}
		for _, p := range c.Parts {
			if len(p.FunctionResponse) > 0 {
				return "", true
			}
			text = p.Text
		}
		return text, false
	}
	return "", false
}

// geminiResponse is a GenerateContentResponse holding one part; the last
// chunk of a stream (or a whole answer) carries the finish reason.
func geminiResponse(model string, part map[string]any, last bool) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "index": 0}
	if last {
		cand["finishReason"] = "STOP"
	}
	return map[string]any{
		"candidates":    []any{cand},
		"usageMetadata": map[string]int{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  model,
	}
}

// geminiError writes the Gemini API's error body.
func geminiError(w http.ResponseWriter, code int, message string) {
	status := map[int]string{
		http.StatusBadRequest:       "INVALID_ARGUMENT",
		http.StatusNotFound:         "NOT_FOUND",
		http.StatusMethodNotAllowed: "INVALID_ARGUMENT",
	}[code]
	respond(w, code, map[string]any{"error": map[string]any{"code": code, "message": message, "status": status}})
}
