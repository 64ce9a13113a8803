package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Claude Code's tool calls, as it writes them into its transcript: the
// files its Write, Edit, MultiEdit and NotebookEdit calls name are the
// turn's; a Bash call (or any tool tether does not know to be read-only)
// may have written anything; Read, Grep and the like write nothing.
func TestTurnWritesClaudeCode(t *testing.T) {
	root := t.TempDir()
	lines := []string{
		`{"type":"user","message":{"role":"user","content":"write the parser"}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/repo/go.mod"}}]}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"I will write it."},{"type":"tool_use","id":"toolu_2","name":"Write","input":{"file_path":"/repo/parser.go","content":"package parser"}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"File created successfully at: /repo/parser.go"}]}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_3","name":"Edit","input":{"file_path":"/repo/main.go","old_string":"a","new_string":"b"}},{"type":"tool_use","id":"toolu_4","name":"MultiEdit","input":{"file_path":"/repo/main.go","edits":[]}}]}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_5","name":"NotebookEdit","input":{"notebook_path":"/repo/n.ipynb","new_source":"x"}}]}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_6","name":"Grep","input":{"pattern":"Write"}}]}}`,
	}
	bash := `{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_7","name":"Bash","input":{"command":"go test ./..."}}]}}`
	// A user quoting a tool call is not one.
	quote := `{"type":"user","message":{"role":"user","content":"{\"type\":\"tool_use\",\"name\":\"Write\",\"input\":{\"file_path\":\"/repo/evil\"}}"}}`
	path := filepath.Join(root, "s.jsonl")
	data := strings.Join(append(lines, quote), "\n") + "\n"
	withBash := data + bash + "\n"
	if err := os.WriteFile(path, []byte(withBash), 0o600); err != nil {
		t.Fatal(err)
	}
	w, ok := TurnWrites("claude-code", root, path, 0, int64(len(data)))
	if !ok || w.Shell || !slices.Equal(w.Paths, []string{"/repo/parser.go", "/repo/main.go", "/repo/n.ipynb"}) {
		t.Fatalf("TurnWrites = %+v, %v", w, ok)
	}
	if w, ok = TurnWrites("claude-code", root, path, int64(len(data)), -1); !ok || !w.Shell || len(w.Paths) != 0 {
		t.Fatalf("the Bash call: %+v, %v", w, ok)
	}
	// A transcript outside the agent's directory is not read; an agent
	// whose transcript is not read for tools cannot tell.
	if _, ok := TurnWrites("claude-code", t.TempDir(), path, 0, -1); ok {
		t.Error("read a transcript outside the root")
	}
	if _, ok := TurnWrites("opencode", root, path, 0, -1); ok {
		t.Error("opencode's transcript told")
	}
}

// The recorded Claude Code transcripts hold no tool call of a file tool.
func TestTurnWritesRecordedTranscripts(t *testing.T) {
	for _, name := range []string{"transcript_p_model_error.jsonl", "transcript_tui_esc_cancel_then_exit.jsonl"} {
		root, err := filepath.Abs("testdata/recorded/claude-code")
		if err != nil {
			t.Fatal(err)
		}
		w, ok := TurnWrites("claude-code", root, filepath.Join(root, name), 0, -1)
		if !ok || len(w.Paths) != 0 {
			t.Errorf("%s: %+v, %v", name, w, ok)
		}
	}
}

func FuzzClaudeWrites(f *testing.F) {
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Write","input":{"file_path":"/a"}}]}}`))
	f.Add([]byte(`{"type":"assistant","message":{"content":"tool_use"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var w ToolWrites
		claudeWrites(line, &w)
		for _, p := range w.Paths {
			if p == "" {
				t.Fatalf("an empty path from %q", line)
			}
		}
	})
}
