package agent

import (
	"bytes"
	"encoding/json"
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
	if err := os.WriteFile(path, []byte(data+bash+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws, told := TurnWrites("claude-code", root, path, []Span{{0, int64(len(data))}, {int64(len(data)), -1}, {-1, 10}})
	if w := ws[0]; !told[0] || w.Shell || !slices.Equal(w.Paths, []string{"/repo/parser.go", "/repo/main.go", "/repo/n.ipynb"}) {
		t.Fatalf("the file tools' turn: %+v, %v", w, told[0])
	}
	if w := ws[1]; !told[1] || !w.Shell || len(w.Paths) != 0 {
		t.Fatalf("the Bash call's: %+v, %v", w, told[1])
	}
	if told[2] {
		t.Error("a turn with no known start told")
	}
	// A transcript outside the agent's directory is not read; an agent
	// whose transcript is not read for tools cannot tell.
	if _, told := TurnWrites("claude-code", t.TempDir(), path, []Span{{0, -1}}); told[0] {
		t.Error("read a transcript outside the root")
	}
	if _, told := TurnWrites("cursor", root, path, []Span{{0, -1}}); told[0] {
		t.Error("cursor's transcript told")
	}
	if _, told := TurnWrites("opencode", root, path, []Span{{0, -1}}); told[0] {
		t.Error("opencode, which keeps no transcript file, told")
	}
}

// The recorded Claude Code transcripts hold no tool call of a file tool.
func TestTurnWritesRecordedTranscripts(t *testing.T) {
	for _, name := range []string{"transcript_p_model_error.jsonl", "transcript_tui_esc_cancel_then_exit.jsonl"} {
		root, err := filepath.Abs("testdata/recorded/claude-code")
		if err != nil {
			t.Fatal(err)
		}
		ws, told := TurnWrites("claude-code", root, filepath.Join(root, name), []Span{{0, -1}})
		if !told[0] || len(ws[0].Paths) != 0 {
			t.Errorf("%s: %+v, %v", name, ws[0], told[0])
		}
	}
}

// The recordings' prompts (e2e's markers): a file tool writes a new file,
// an edit tool changes it (after reading it, where the agent has a tool
// for that), a shell command writes another; Codex and OpenCode's
// apply_patch also move a file and delete one.
var (
	writePrompt  = "make it [[write a.txt]]"
	editPrompt   = "change it [[edit a.txt]]"
	shellPrompt  = "shell it [[shell b.txt]]"
	movePrompt   = "move it [[move a.txt c.txt]]"
	deletePrompt = "drop it [[delete b.txt]]"
)

// turnWant is what one recorded turn's tools wrote: the files, as paths
// of the project, and whether a tool that may write anything ran.
type turnWant struct {
	prompt string
	files  []string
	shell  bool
}

// Each agent's recorded turns, read as the sweep reads them: every turn's
// part of the transcript (from its prompt to the next), in one call. The
// files a turn's own file tools wrote are its; a shell command's turn may
// have written anything and names nothing; reading a file writes nothing.
// Paths are compared resolved in the project (/home/dev/project), as the
// sweep resolves them: a reader may give one relative (a patch's) and
// absolute (what the agent says it wrote) alike.
func TestTurnWritesRecorded(t *testing.T) {
	a, edit, shell := []string{"a.txt"}, turnWant{editPrompt, []string{"a.txt"}, false}, turnWant{shellPrompt, nil, true}
	for _, tc := range []struct {
		agent, file string
		turns       []turnWant
	}{
		{"codex", "codex/writes_apply_patch_rollout.jsonl", []turnWant{{writePrompt, a, false}, edit, shell,
			{movePrompt, []string{"a.txt", "c.txt"}, false}, {deletePrompt, []string{"b.txt"}, false}}},
		// A model Codex gives no apply_patch tool writes through its shell,
		// and patches with the apply_patch command Codex teaches it, which
		// Codex runs itself: a patch, not a shell.
		{"codex", "codex/writes_exec_command_rollout.jsonl", []turnWant{{writePrompt, nil, true}, edit, shell,
			{movePrompt, nil, true}, {deletePrompt, nil, true}}},
		{"gemini", "gemini/writes_transcript.jsonl", []turnWant{{writePrompt, a, false}, edit, shell}},
		{"copilot", "copilot/writes_events.jsonl", []turnWant{{writePrompt, a, false}, edit, shell}},
		{"droid", "droid/writes_transcript.jsonl", []turnWant{{writePrompt, a, false}, edit, shell}},
		{"pi", "pi/writes_transcript.jsonl", []turnWant{{writePrompt, a, false}, edit, shell}},
		{"qwen", "qwen/writes_transcript.jsonl", []turnWant{{writePrompt, a, false}, edit, shell}},
		// Earlier recordings, a turn each: a write, and a turn that only
		// answered.
		{"droid", "droid/exec_write_transcript.jsonl", []turnWant{{"", a, false}}},
		{"droid", "droid/exec_plain_transcript.jsonl", []turnWant{{"", nil, false}}},
		{"pi", "pi/p_write_transcript.jsonl", []turnWant{{"", a, false}}},
		{"pi", "pi/p_plain_transcript.jsonl", []turnWant{{"", nil, false}}},
		{"qwen", "qwen/headless_write_transcript.jsonl", []turnWant{{"", a, false}}},
		{"qwen", "qwen/tui_transcript.jsonl", []turnWant{{"", nil, false}}},
	} {
		root, path, data := recordedTranscript(t, tc.file, "")
		spans := promptSpans(t, tc.file, data, tc.turns)
		ws, told := TurnWrites(tc.agent, root, path, spans)
		for i, want := range tc.turns {
			if got := projectFiles(ws[i]); !told[i] || ws[i].Shell != want.shell || !slices.Equal(got, want.files) {
				t.Errorf("%s, turn %q: %+v (files %q), told %v; want files %q, shell %v", tc.file, want.prompt, ws[i], got, told[i], want.files, want.shell)
			}
		}
	}
}

// OpenCode keeps its conversation in its database: each turn's messages,
// as `opencode export` gave them and package conversation selects them,
// tell what its tools wrote. With a GPT model OpenCode writes with
// apply_patch.
func TestConversationWritesOpenCode(t *testing.T) {
	edit, shell := turnWant{editPrompt, []string{"a.txt"}, false}, turnWant{shellPrompt, nil, true}
	for _, tc := range []struct {
		file  string
		turns []turnWant
	}{
		{"opencode/writes_export.json", []turnWant{{writePrompt, []string{"a.txt"}, false}, edit, shell}},
		{"opencode/writes_export_apply_patch.json", []turnWant{{writePrompt, []string{"a.txt"}, false}, edit, shell,
			{movePrompt, []string{"a.txt", "c.txt"}, false}, {deletePrompt, []string{"b.txt"}, false}}},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "recorded", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		turns := exportTurns(t, data)
		if len(turns) != len(tc.turns) {
			t.Fatalf("%s: %d turns, want %d", tc.file, len(turns), len(tc.turns))
		}
		for i, want := range tc.turns {
			if !bytes.Contains(turns[i], []byte(want.prompt)) {
				t.Fatalf("%s: turn %d lacks %q", tc.file, i, want.prompt)
			}
			w, ok := ConversationWrites("opencode", turns[i])
			if got := projectFiles(w); !ok || w.Shell != want.shell || !slices.Equal(got, want.files) {
				t.Errorf("%s, turn %q: %+v (files %q), %v; want files %q, shell %v", tc.file, want.prompt, w, got, ok, want.files, want.shell)
			}
		}
	}
	if _, ok := ConversationWrites("claude-code", []byte("{}\n")); ok {
		t.Error("a transcript file's agent read from a conversation")
	}
}

// promptSpans splits a transcript into its turns: each from the first
// line at or after the previous turn's start that holds its prompt (a
// turn with no prompt: the whole file), to the next turn's start.
func promptSpans(t *testing.T, name string, data []byte, turns []turnWant) []Span {
	t.Helper()
	spans := make([]Span, len(turns))
	from := 0
	for i, turn := range turns {
		if turn.prompt == "" {
			spans[i] = Span{0, -1}
			continue
		}
		at := bytes.Index(data[from:], []byte(turn.prompt))
		if at < 0 {
			t.Fatalf("%s: no prompt %q after byte %d", name, turn.prompt, from)
		}
		from += bytes.LastIndexByte(data[:from+at], '\n') + 1 - from
		spans[i] = Span{int64(from), -1}
		if i > 0 {
			spans[i-1].To = int64(from)
		}
		from++
	}
	return spans
}

// projectFiles is what a turn's tools wrote, as paths of the recorded
// project /home/dev/project, sorted.
func projectFiles(w ToolWrites) []string {
	var files []string
	for _, p := range w.Paths {
		if rel, ok := strings.CutPrefix(p, "/home/dev/project/"); ok {
			p = rel
		}
		if !slices.Contains(files, p) {
			files = append(files, p)
		}
	}
	slices.Sort(files)
	return files
}

// exportTurns splits an OpenCode export into its turns' messages, as
// conversation.Select gives a turn's: its prompt and the answers to it,
// one compact JSON object a line.
func exportTurns(t *testing.T, data []byte) [][]byte {
	t.Helper()
	var export struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(data, &export); err != nil {
		t.Fatal(err)
	}
	var turns [][]byte
	prompts := map[string]int{}
	for _, raw := range export.Messages {
		var m struct {
			Info struct{ ID, Role, ParentID string } `json:"info"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		var line bytes.Buffer
		if err := json.Compact(&line, raw); err != nil {
			t.Fatal(err)
		}
		line.WriteByte('\n')
		if m.Info.Role == "user" {
			prompts[m.Info.ID] = len(turns)
			turns = append(turns, line.Bytes())
			continue
		}
		if i, ok := prompts[m.Info.ParentID]; ok {
			turns[i] = append(turns[i], line.Bytes()...)
		}
	}
	return turns
}

// Shell commands, and tools tether does not know, may write anything;
// tools that only read or ask write nothing; a call quoted in another
// kind of line is none.
func TestTurnWritesLines(t *testing.T) {
	for _, tc := range []struct {
		agent, line string
		paths       []string
		shell       bool
	}{
		{"droid", `{"type":"message","message":{"role":"assistant","content":[{"type":"tool_use","name":"Execute","input":{"command":"make"}}]}}`, nil, true},
		{"pi", `{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","name":"bash","arguments":{"command":"make"}}]}}`, nil, true},
		{"qwen", `{"type":"assistant","message":{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"make"}}}]}}`, nil, true},
		{"qwen", `{"type":"system","subtype":"ui_telemetry","systemPayload":{"uiEvent":{"function_name":"write_file","function_args":{"file_path":"/x"},"functionCall":1}}}`, nil, false},
		{"codex", `{"type":"response_item","payload":{"type":"function_call","name":"spawn_agent","arguments":"{}"}}`, nil, true},
		{"codex", `{"type":"response_item","payload":{"type":"function_call","name":"update_plan","arguments":"{}"}}`, nil, false},
		{"codex", `{"type":"response_item","payload":{"type":"local_shell_call","action":{"command":["ls"]}}}`, nil, true},
		{"codex", `{"type":"response_item","payload":{"type":"web_search_call","action":{"query":"x"}}}`, nil, false},
		{"codex", `{"type":"response_item","payload":{"type":"function_call","name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n*** Add File: x.go\\n+package x\\n*** End Patch\"}"}}`, []string{"x.go"}, false},
		{"codex", `{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"apply_patch <<'EOF'\\n*** Begin Patch\\n*** Delete File: y.go\\n*** End Patch\\nEOF\\nrm -rf z\"}"}}`, nil, true},
		{"codex", `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"*** Add File: q.go"}]}}`, nil, false},
		{"gemini", `{"type":"gemini","toolCalls":[{"name":"write_file","args":{"file_path":"rel.txt","content":""}}]}`, []string{"rel.txt"}, false},
		{"gemini", `{"type":"gemini","toolCalls":[{"name":"invoke_agent","args":{"agent_name":"x"}},{"name":"read_file","args":{"file_path":"r"}}]}`, nil, true},
		{"gemini", `{"$set":{"messages":[{"type":"gemini","toolCalls":[{"name":"write_file","args":{"file_path":"old.txt"}}]}]}}`, nil, false},
		{"copilot", `{"type":"tool.execution_start","data":{"toolName":"view","arguments":{"path":"/repo/a"}}}`, nil, false},
		{"copilot", `{"type":"tool.execution_start","data":{"toolName":"task","arguments":{"prompt":"x"}}}`, nil, true},
		{"copilot", `{"type":"assistant.message","data":{"toolRequests":[{"name":"create","arguments":{"path":"/repo/planned"}}]}}`, nil, false},
	} {
		root := t.TempDir()
		path := filepath.Join(root, "t.jsonl")
		if err := os.WriteFile(path, []byte(tc.line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		ws, told := TurnWrites(tc.agent, root, path, []Span{{0, -1}})
		if w := ws[0]; !told[0] || w.Shell != tc.shell || !slices.Equal(w.Paths, tc.paths) {
			t.Errorf("%s %s: %+v, %v; want paths %q, shell %v", tc.agent, tc.line, w, told[0], tc.paths, tc.shell)
		}
	}
}

// Only a command that is apply_patch with its patch in a heredoc, and
// nothing more, is a patch.
func TestCodexHeredocPatch(t *testing.T) {
	const patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch"
	for _, tc := range []struct {
		cmd string
		ok  bool
	}{
		{"apply_patch <<'EOF'\n" + patch + "\nEOF\n", true},
		{"applypatch <<\"PATCH\"\n" + patch + "\nPATCH", true},
		{"apply_patch <<EOF\n" + patch + "\nEOF", true},
		{"apply_patch <<'EOF'\n" + patch + "\nEOF\nrm -rf /", false},
		{"apply_patch <<'EOF' && touch x\n" + patch + "\nEOF", false},
		{"cd sub && apply_patch <<'EOF'\n" + patch + "\nEOF", false},
		{"apply_patch <<'EOF'\n" + patch, false},
		{"apply_patch '" + patch + "'", false},
		{"printf x > a.txt", false},
	} {
		got, ok := codexHeredocPatch(tc.cmd)
		if ok != tc.ok || ok && got != patch {
			t.Errorf("codexHeredocPatch(%q) = %q, %v; want ok %v", tc.cmd, got, ok, tc.ok)
		}
	}
}

// A patch's files are those of its headers, never of its hunks' lines.
func TestPatchPaths(t *testing.T) {
	var w ToolWrites
	patchPaths("*** Begin Patch\n*** Add File: new.go\n+*** Update File: not-a-header\n*** Update File: old.go\n*** Move to: moved.go\n@@\n *** Delete File: context\n-x\n+y\n*** End of File\n*** Delete File: gone.go\r\n*** End Patch\n", &w)
	if want := []string{"new.go", "old.go", "moved.go", "gone.go"}; !slices.Equal(w.Paths, want) || w.Shell {
		t.Errorf("patchPaths = %+v, want %q", w, want)
	}
}

// The transcript lines' readers, on any bytes: no panic, no empty path,
// and nothing from a line that is not JSON.
func fuzzWrites(f *testing.F, writes func([]byte, *ToolWrites), seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var w ToolWrites
		writes(line, &w)
		if slices.Contains(w.Paths, "") {
			t.Fatalf("an empty path from %q", line)
		}
		if !json.Valid(line) && (w.Shell || len(w.Paths) > 0) {
			t.Fatalf("%+v from %q, which is not JSON", w, line)
		}
	})
}

func FuzzClaudeWrites(f *testing.F) {
	fuzzWrites(f, claudeTools.writes,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"Write","input":{"file_path":"/a"}}]}}`,
		`{"type":"assistant","message":{"content":"tool_use"}}`)
}

func FuzzToolCallsWrites(f *testing.F) {
	readers := []func([]byte, *ToolWrites){droidTools.writes, piTools.writes, qwenTools.writes}
	fuzzWrites(f, func(line []byte, w *ToolWrites) {
		for _, r := range readers {
			r(line, w)
		}
	},
		`{"type":"message","message":{"role":"assistant","content":[{"type":"tool_use","name":"Create","input":{"file_path":"/a"}}]}}`,
		`{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","name":"edit","arguments":{"path":"a"}}]}}`,
		`{"type":"assistant","message":{"role":"model","parts":[{"functionCall":{"name":"write_file","args":{"file_path":"/a"}}}]}}`)
}

func FuzzCodexWrites(f *testing.F) {
	fuzzWrites(f, codexWrites,
		`{"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n"}}`,
		`{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"apply_patch <<'EOF'\\n*** Begin Patch\\n*** Delete File: a\\n*** End Patch\\nEOF\"}"}}`,
		`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"FileChange","changes":{"/r/a.txt":{"type":"update","move_path":"/r/b.txt"}}}}}`)
}

func FuzzGeminiWrites(f *testing.F) {
	fuzzWrites(f, geminiWrites,
		`{"type":"gemini","toolCalls":[{"name":"replace","args":{"file_path":"a.txt"},"resultDisplay":{"filePath":"/r/a.txt"}}]}`,
		`{"type":"gemini","toolCalls":[{"name":"write_file","args":{"file_path":"a"},"resultDisplay":""}]}`)
}

func FuzzCopilotWrites(f *testing.F) {
	fuzzWrites(f, copilotWrites,
		`{"type":"tool.execution_start","data":{"toolName":"create","arguments":{"path":"/r/a"}}}`,
		`{"type":"tool.execution_complete","data":{"fileEdits":[{"path":"/r/a","kind":"edit"}]}}`)
}

func FuzzOpencodeWrites(f *testing.F) {
	fuzzWrites(f, opencodeWrites,
		`{"info":{"role":"assistant"},"parts":[{"type":"tool","tool":"write","state":{"input":{"filePath":"/r/a"}}}]}`,
		`{"parts":[{"type":"tool","tool":"apply_patch","state":{"input":{"patchText":"*** Begin Patch\n*** Delete File: a\n*** End Patch"},"metadata":{"files":[{"filePath":"/r/a","movePath":null}]}}}]}`)
}

// FuzzCodexPatch: a patch read from a shell command is in the command,
// and what follows it there is only its delimiter; its headers give no
// empty path.
func FuzzCodexPatch(f *testing.F) {
	f.Add("apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF\n")
	f.Add("apply_patch <<EOF\nEOF")
	f.Fuzz(func(t *testing.T, cmd string) {
		patch, ok := codexHeredocPatch(cmd)
		if !ok {
			return
		}
		if !strings.Contains(cmd, patch) {
			t.Fatalf("patch %q is not in %q", patch, cmd)
		}
		var w ToolWrites
		patchPaths(patch, &w)
		if slices.Contains(w.Paths, "") {
			t.Fatalf("an empty path from %q", patch)
		}
	})
}
