package mockllm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// geminiPost sends a request to a model method the way Gemini CLI does.
func geminiPost(t *testing.T, ctx context.Context, s *Server, method, body string) *http.Response {
	t.Helper()
	path := "/v1beta/models/gemini-mock:" + method
	if method == "streamGenerateContent" {
		path += "?alt=sse"
	}
	return postTo(t, ctx, s, path, body)
}

// geminiTurn is a request whose last user message is Gemini CLI's session
// context, then text, as the CLI sends a session's first request.
func geminiTurn(text string) string {
	b, _ := json.Marshal(text)
	return `{"contents":[{"role":"user","parts":[{"text":"<session_context>\nThis is the Gemini CLI.\n</session_context>"},{"text":` + string(b) + `}]}],` +
		`"tools":[{"functionDeclarations":[{"name":"write_file"}]}]}`
}

// geminiParts are the parts of the first candidate of each response.
func geminiParts(t *testing.T, data []map[string]any) []map[string]any {
	t.Helper()
	var parts []map[string]any
	for _, d := range data {
		cand := d["candidates"].([]any)[0].(map[string]any)
		for _, p := range cand["content"].(map[string]any)["parts"].([]any) {
			parts = append(parts, p.(map[string]any))
		}
	}
	return parts
}

func TestGeminiPlain(t *testing.T) {
	s := NewGemini(t)
	resp := geminiPost(t, context.Background(), s, "streamGenerateContent", geminiTurn("hello"))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	_, data := events(t, resp.Body)
	parts := geminiParts(t, data)
	if len(parts) != 1 || parts[0]["text"] != Reply {
		t.Fatalf("parts %v, want one text %q", parts, Reply)
	}
	if finish := data[len(data)-1]["candidates"].([]any)[0].(map[string]any)["finishReason"]; finish != "STOP" {
		t.Errorf("finishReason %v", finish)
	}
	if !s.Saw("hello") || s.Requests()[0].Path != "/v1beta/models/gemini-mock:streamGenerateContent?alt=sse" {
		t.Errorf("requests recorded: %+v", s.Requests())
	}
}

func TestGeminiWriteThenReply(t *testing.T) {
	s := NewGemini(t)
	resp := geminiPost(t, context.Background(), s, "streamGenerateContent", geminiTurn("go [[write a.txt]]"))
	_, data := events(t, resp.Body)
	resp.Body.Close()
	parts := geminiParts(t, data)
	call, _ := parts[0]["functionCall"].(map[string]any)
	args, _ := call["args"].(map[string]any)
	if call["name"] != "write_file" || args["file_path"] != "a.txt" || args["content"] != Content {
		t.Fatalf("part %v, want a write_file call of a.txt", parts[0])
	}

	// The follow-up carries the tool's result after the prompt: a plain reply.
	follow := `{"contents":[{"role":"user","parts":[{"text":"go [[write a.txt]]"}]},` +
		`{"role":"model","parts":[{"functionCall":{"name":"write_file","args":{}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"write_file","response":{"output":"ok"}}}]}]}`
	resp = geminiPost(t, context.Background(), s, "streamGenerateContent", follow)
	_, data = events(t, resp.Body)
	resp.Body.Close()
	if parts := geminiParts(t, data); len(parts) != 1 || parts[0]["text"] != Reply {
		t.Errorf("follow-up parts %v, want %q", parts, Reply)
	}
}

// A resumed session whose last turn was cut off sends that turn's prompt
// and the new one as parts of one user message: the new one counts.
func TestGeminiResumedAfterCutTurn(t *testing.T) {
	s := NewGemini(t)
	body := `{"contents":[{"role":"user","parts":[{"text":"<session_context></session_context>"},{"text":"wait [[hold]]"},{"text":"again"}]}]}`
	resp := geminiPost(t, context.Background(), s, "streamGenerateContent", body)
	defer resp.Body.Close()
	_, data := events(t, resp.Body)
	if parts := geminiParts(t, data); len(parts) != 1 || parts[0]["text"] != Reply {
		t.Errorf("parts %v, want %q", parts, Reply)
	}
}

// The router and the next-speaker check ask for JSON: they get an answer
// to their schemas whatever the prompt's marker says.
func TestGeminiSideCallIgnoresMarkers(t *testing.T) {
	s := NewGemini(t)
	resp := geminiPost(t, context.Background(), s, "generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"[[hold]]"}]}],"generationConfig":{"responseMimeType":"application/json"}}`)
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	var choice struct {
		ModelChoice     string `json:"model_choice"`
		ComplexityScore *int   `json:"complexity_score"`
		NextSpeaker     string `json:"next_speaker"`
	}
	text, _ := geminiParts(t, []map[string]any{body})[0]["text"].(string)
	if err := json.Unmarshal([]byte(text), &choice); err != nil || choice.ModelChoice == "" || choice.ComplexityScore == nil || choice.NextSpeaker != "user" {
		t.Errorf("side call answered %q (%v)", text, err)
	}
}

func TestGeminiFail(t *testing.T) {
	s := NewGemini(t)
	resp := geminiPost(t, context.Background(), s, "streamGenerateContent", geminiTurn("[[fail]]"))
	defer resp.Body.Close()
	var body struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadRequest || body.Error.Code != 400 || body.Error.Status != "INVALID_ARGUMENT" || body.Error.Message == "" {
		t.Errorf("status %d, body %+v", resp.StatusCode, body)
	}
}

func TestGeminiUnknownMethod(t *testing.T) {
	s := NewGemini(t)
	resp := geminiPost(t, context.Background(), s, "countTokens", `{}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status %d, want 404", resp.StatusCode)
	}
}

func TestGeminiHold(t *testing.T) {
	s := NewGemini(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := geminiPost(t, ctx, s, "streamGenerateContent", geminiTurn("[[hold]]"))
	defer resp.Body.Close()
	// The first chunk, before the hold, says HoldText.
	checkHeld(t, s, resp, cancel, "data: ", HoldText)
	if reqs := s.Requests(); len(reqs) != 1 || !strings.Contains(reqs[0].Path, ":streamGenerateContent") {
		t.Errorf("requests %+v", reqs)
	}
}
