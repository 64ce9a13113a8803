package mockllm

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// Droid's own API: whoami answers, every other /api call is a 404, and
// the model API is NewChat's.
func TestFactory(t *testing.T) {
	f := NewFactory(t, "/repo")
	get := func(path string) (int, []byte) {
		resp, err := http.Get(f.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body
	}
	code, body := get("/api/cli/whoami")
	var who map[string]string
	if code != http.StatusOK || json.Unmarshal(body, &who) != nil || who["userId"] == "" || who["orgId"] == "" {
		t.Fatalf("whoami: %d %s", code, body)
	}
	if code, body := get("/api/feature-flags"); code != http.StatusNotFound {
		t.Fatalf("feature flags: %d %s, want 404", code, body)
	}
	resp := chatPost(t, t.Context(), f, map[string]any{"model": "m", "stream": true, "messages": []any{userMsg("hi")}})
	defer resp.Body.Close()
	if chunks, done := readStream(t, resp.Body); !done || chunks[0].Choices[0].Delta.Content != Reply {
		t.Fatalf("chat: %+v", chunks)
	}
}
