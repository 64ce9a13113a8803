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

// The write, edit and shell markers give one call of the tool the agent
// offers for each (an edit reads its file first, where the agent has a
// tool for that), with the path made absolute in the agent's directory
// (the shell's as the marker gives it); the follow-up carrying the last
// result gets a plain reply. The tool sets are the agents' own (their
// names and the properties the mock looks at).
func TestChatWrite(t *testing.T) {
	var (
		copilot  = []string{"bash(command,description)", "view(path)", "create(path,file_text)", "edit(path,old_str,new_str)"}
		opencode = []string{"bash(command,timeout,workdir)", "edit(filePath,oldString,newString)", "read(filePath)", "write(content,filePath)"}
		gpt      = []string{"bash(command,timeout,workdir)", "apply_patch(patchText)", "read(filePath)"}
		pi       = []string{"read(path)", "bash(command,timeout)", "edit(path,edits)", "write(path,content)"}
		droid    = []string{"Read(file_path)", "Execute(summary,command,riskLevel,riskLevelReason)", "Edit(file_path,old_str,new_str)", "Create(file_path,content)"}
		qwen     = []string{"edit(file_path,old_string,new_string)", "read_file(file_path)", "run_shell_command(command,description)", "write_file(file_path,content)"}
		shellA   = ShellWrite("a.txt")
		change   = "Change files for the user"
	)
	type args = map[string]any
	type call struct {
		tool string
		args args
	}
	for _, tc := range []struct {
		name    string
		offered []string
		prompt  string
		want    []call
	}{
		{"copilot write", copilot, "[[write a.txt]]", []call{{"create", args{"path": "/repo/a.txt", "file_text": Content}}}},
		{"copilot edit", copilot, "[[edit a.txt]]", []call{{"view", args{"path": "/repo/a.txt"}},
			{"edit", args{"path": "/repo/a.txt", "old_str": EditOld, "new_str": EditNew}}}},
		{"copilot shell", copilot, "[[shell a.txt]]", []call{{"bash", args{"command": shellA, "description": change}}}},
		{"opencode write", opencode, "[[write a.txt]]", []call{{"write", args{"filePath": "/repo/a.txt", "content": Content}}}},
		{"opencode edit", opencode, "[[edit a.txt]]", []call{{"read", args{"filePath": "/repo/a.txt"}},
			{"edit", args{"filePath": "/repo/a.txt", "oldString": EditOld, "newString": EditNew}}}},
		{"opencode shell", opencode, "[[shell a.txt]]", []call{{"bash", args{"command": shellA}}}},
		{"opencode gpt write", gpt, "[[write a.txt]]", []call{{"apply_patch", args{"patchText": Patch(Marker{Kind: Write, Path: "a.txt"})}}}},
		{"opencode gpt move", gpt, "[[move a.txt b.txt]]", []call{{"apply_patch", args{"patchText": "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n edited by the agent\n*** End Patch\n"}}}},
		{"pi write", pi, "[[write a.txt]]", []call{{"write", args{"path": "/repo/a.txt", "content": Content}}}},
		{"pi edit", pi, "[[edit a.txt]]", []call{{"read", args{"path": "/repo/a.txt"}},
			{"edit", args{"path": "/repo/a.txt", "edits": []any{args{"oldText": EditOld, "newText": EditNew}}}}}},
		{"pi delete", pi, "[[delete a.txt]]", []call{{"bash", args{"command": "rm -- 'a.txt'"}}}},
		{"droid write", droid, "[[write a.txt]]", []call{{"Create", args{"file_path": "/repo/a.txt", "content": Content}}}},
		{"droid edit", droid, "[[edit a.txt]]", []call{{"Read", args{"file_path": "/repo/a.txt"}},
			{"Edit", args{"file_path": "/repo/a.txt", "old_str": EditOld, "new_str": EditNew}}}},
		{"droid move", droid, "[[move a.txt b.txt]]", []call{{"Execute", args{"command": "mv -- 'a.txt' 'b.txt'", "summary": change,
			"riskLevel": "low", "riskLevelReason": "It changes one file of the project."}}}},
		{"qwen write", qwen, "[[write a.txt]]", []call{{"write_file", args{"file_path": "/repo/a.txt", "content": Content}}}},
		{"qwen edit", qwen, "[[edit a.txt]]", []call{{"read_file", args{"file_path": "/repo/a.txt"}},
			{"edit", args{"file_path": "/repo/a.txt", "old_string": EditOld, "new_string": EditNew}}}},
		{"qwen shell", qwen, "[[shell a.txt]]", []call{{"run_shell_command", args{"command": shellA, "description": change}}}},
		{"bash only", []string{"bash(command,description)"}, "[[write a.txt]]", []call{{"bash", args{"command": ShellWrite("/repo/a.txt"), "description": change}}}},
		{"edit with no read tool", []string{"edit(path,old_str,new_str)"}, "[[edit a.txt]]", []call{{"edit", args{"path": "/repo/a.txt", "old_str": EditOld, "new_str": EditNew}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChat(t, "/repo")
			msgs := []any{userMsg("please " + tc.prompt + " now")}
			for i := 0; ; i++ {
				resp := chatPost(t, t.Context(), c, map[string]any{"model": "m", "stream": true, "messages": msgs, "tools": tools(tc.offered...)})
				chunks, done := readStream(t, resp.Body)
				resp.Body.Close()
				if i == len(tc.want) {
					if len(chunks) == 0 || chunks[0].Choices[0].Delta.Content != "done." {
						t.Fatalf("after the last call: %+v", chunks)
					}
					break
				}
				if !done || len(chunks) != 2 || len(chunks[0].Choices[0].Delta.ToolCalls) != 1 || *chunks[1].Choices[0].FinishReason != "tool_calls" {
					t.Fatalf("call %d: stream %+v", i, chunks)
				}
				got := chunks[0].Choices[0].Delta.ToolCalls[0]
				var gotArgs any
				if err := json.Unmarshal([]byte(got.Function.Arguments), &gotArgs); err != nil {
					t.Fatal(err)
				}
				gotJSON, _ := json.Marshal(gotArgs)
				wantJSON, _ := json.Marshal(tc.want[i].args)
				if got.Function.Name != tc.want[i].tool || string(gotJSON) != string(wantJSON) {
					t.Fatalf("call %d: %s %s, want %s %s", i, got.Function.Name, gotJSON, tc.want[i].tool, wantJSON)
				}
				msgs = append(msgs,
					map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": got.ID, "type": "function", "function": got.Function}}},
					map[string]any{"role": "tool", "tool_call_id": got.ID, "content": "ok"})
			}
			if reqs := c.Requests(); len(reqs) != len(tc.want)+1 {
				t.Fatalf("recorded %d requests, want %d", len(reqs), len(tc.want)+1)
			}
		})
	}
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
