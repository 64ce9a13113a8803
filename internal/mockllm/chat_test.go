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

// chatPost posts a Chat Completions request.
func chatPost(t *testing.T, ctx context.Context, c *Server, body map[string]any) *http.Response {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return postTo(t, ctx, c, "/v1/chat/completions", string(data))
}

// chunkEvent is what a client reads of a streamed chunk.
type chunkEvent struct {
	Choices []struct {
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
}

// readStream reads a whole SSE stream: the chunks, and whether it ended
// with [DONE].
func readStream(t *testing.T, r io.Reader) (chunks []chunkEvent, done bool) {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			return chunks, true
		}
		var ev chunkEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		chunks = append(chunks, ev)
	}
	return chunks, false
}

func userMsg(text string) map[string]any { return map[string]any{"role": "user", "content": text} }

// tools declares the named tools; "write(path,content)" gives the tool
// write those properties.
func tools(names ...string) []any {
	var out []any
	for _, n := range names {
		props := map[string]any{}
		if name, list, ok := strings.Cut(n, "("); ok {
			n = name
			for p := range strings.SplitSeq(strings.TrimSuffix(list, ")"), ",") {
				props[p] = map[string]any{"type": "string"}
			}
		}
		out = append(out, map[string]any{"type": "function", "function": map[string]any{"name": n,
			"parameters": map[string]any{"type": "object", "properties": props}}})
	}
	return out
}

func TestChatPlainReply(t *testing.T) {
	c := NewChat(t, "/repo")
	resp := chatPost(t, t.Context(), c, map[string]any{"model": "gpt-4.1", "stream": true,
		"messages": []any{map[string]any{"role": "system", "content": "be brief"}, userMsg("say hi")}})
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, ct)
	}
	chunks, done := readStream(t, resp.Body)
	if !done || len(chunks) != 2 || chunks[0].Choices[0].Delta.Content != "done." || *chunks[1].Choices[0].FinishReason != "stop" {
		t.Fatalf("stream: %+v, done %v", chunks, done)
	}
	if reqs := c.Requests(); len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions" || !c.Saw("say hi") {
		t.Fatalf("recorded %+v", reqs)
	}
}

// The write marker gives one call of the tool the agent offers for
// writing a file, with the path made absolute in the agent's directory;
// the follow-up carrying its result gets a plain reply.
func TestChatWrite(t *testing.T) {
	for _, tc := range []struct {
		offered  []string
		tool     string
		wantArgs map[string]string
	}{
		{[]string{"bash", "view", "create", "edit"}, "create", map[string]string{"path": "/repo/a.txt", "file_text": "written by the agent\n"}},
		{[]string{"bash", "read", "write(filePath,content)"}, "write", map[string]string{"filePath": "/repo/a.txt", "content": "written by the agent\n"}},
		{[]string{"read", "bash", "edit", "write(path,content)"}, "write", map[string]string{"path": "/repo/a.txt", "content": "written by the agent\n"}},
		{[]string{"Read", "Execute", "Create(file_path,content)"}, "Create", map[string]string{"file_path": "/repo/a.txt", "content": "written by the agent\n"}},
		{[]string{"run_shell_command", "write_file(file_path,content)"}, "write_file", map[string]string{"file_path": "/repo/a.txt", "content": "written by the agent\n"}},
		{[]string{"bash"}, "bash", map[string]string{"command": `printf 'written by the agent\n' > '/repo/a.txt'`, "description": "Write a.txt"}},
	} {
		t.Run(tc.offered[len(tc.offered)-1], func(t *testing.T) {
			c := NewChat(t, "/repo")
			prompt := "please [[write a.txt]] now"
			resp := chatPost(t, t.Context(), c, map[string]any{"model": "m", "stream": true,
				"messages": []any{userMsg(prompt)}, "tools": tools(tc.offered...)})
			chunks, done := readStream(t, resp.Body)
			resp.Body.Close()
			if !done || len(chunks) != 2 || len(chunks[0].Choices[0].Delta.ToolCalls) != 1 || *chunks[1].Choices[0].FinishReason != "tool_calls" {
				t.Fatalf("stream: %+v", chunks)
			}
			call := chunks[0].Choices[0].Delta.ToolCalls[0]
			var args map[string]string
			if err := json.Unmarshal([]byte(call.Function.Arguments), &args); err != nil {
				t.Fatal(err)
			}
			if call.Function.Name != tc.tool || !equalMaps(args, tc.wantArgs) {
				t.Fatalf("call %s %v, want %s %v", call.Function.Name, args, tc.tool, tc.wantArgs)
			}
			resp = chatPost(t, t.Context(), c, map[string]any{"model": "m", "stream": true, "tools": tools(tc.offered...),
				"messages": []any{userMsg(prompt),
					map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": call.ID, "type": "function", "function": call.Function}}},
					map[string]any{"role": "tool", "tool_call_id": call.ID, "content": "Created file"}}})
			chunks, _ = readStream(t, resp.Body)
			resp.Body.Close()
			if len(chunks) == 0 || chunks[0].Choices[0].Delta.Content != "done." {
				t.Fatalf("follow-up: %+v", chunks)
			}
			if reqs := c.Requests(); len(reqs) != 2 {
				t.Fatalf("recorded %+v", reqs)
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A held stream has sent its headers and first chunk, and ends when the
// client goes away.
func TestChatHold(t *testing.T) {
	c := NewChat(t, "/repo")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	resp := chatPost(t, ctx, c, map[string]any{"model": "m", "stream": true, "messages": []any{userMsg("wait [[hold]]")}, "tools": tools("bash")})
	defer resp.Body.Close()
	checkHeld(t, c, resp, cancel, `data: {"choices":[{"delta":{"content":"`+HoldText+`","role":"assistant"}`, HoldText)
}

// A held stream does not keep the test from ending: the cleanup lets it go.
func TestChatHoldReleasedAtCleanup(t *testing.T) {
	var c *Server
	var resp *http.Response
	// The client stays connected past the subtest: only the mock's cleanup
	// can end the stream, or Close would wait forever.
	t.Run("held", func(t *testing.T) {
		c = NewChat(t, "/repo")
		resp = chatPost(t, context.Background(), c, map[string]any{"model": "m", "stream": true, "messages": []any{userMsg("[[hold]]")}, "tools": tools("bash")})
		<-c.Held()
	})
	resp.Body.Close()
}

func TestChatFail(t *testing.T) {
	c := NewChat(t, "/repo")
	resp := chatPost(t, t.Context(), c, map[string]any{"model": "m", "stream": true, "messages": []any{userMsg("[[fail]]")}, "tools": tools("bash")})
	defer resp.Body.Close()
	var body struct {
		Error struct{ Message, Type, Code string } `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadRequest || body.Error.Message != "mock failure (MOCK_FAIL)" || body.Error.Type != "invalid_request_error" {
		t.Fatalf("status %d, body %+v", resp.StatusCode, body)
	}
}

// A request without stream gets one chat.completion; one that offers no
// tools is a side call (a title), whose markers are not acted on.
func TestChatWhole(t *testing.T) {
	c := NewChat(t, "/repo")
	resp := chatPost(t, t.Context(), c, map[string]any{"model": "m", "messages": []any{
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "title this [[hold]]"}}}}})
	defer resp.Body.Close()
	var body struct {
		Object  string
		Choices []struct {
			Message      struct{ Role, Content string }
			FinishReason string `json:"finish_reason"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Object != "chat.completion" || len(body.Choices) != 1 || body.Choices[0].Message.Content != "done." || body.Choices[0].FinishReason != "stop" {
		t.Fatalf("body %+v", body)
	}
	if !c.Saw("title this") {
		t.Fatalf("recorded %+v", c.Requests())
	}
}
