package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// recordedTranscript copies a recorded transcript into a temporary root,
// cut before the first line holding cut ("" keeps it whole): the
// transcript as the agent had written it when a hook ran.
func recordedTranscript(t *testing.T, name, cut string) (root, path string, data []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "recorded", name))
	if err != nil {
		t.Fatal(err)
	}
	if cut != "" {
		i := bytes.Index(data, []byte(cut))
		if i < 0 {
			t.Fatalf("%s has no %q", name, cut)
		}
		data = data[:bytes.LastIndexByte(data[:i], '\n')+1]
	}
	root = t.TempDir()
	path = filepath.Join(root, filepath.Base(name))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return root, path, data
}

// offsetOf is where the line holding s starts.
func offsetOf(t *testing.T, data []byte, s string) int64 {
	t.Helper()
	i := bytes.Index(data, []byte(s))
	if i < 0 {
		t.Fatalf("no %q", s)
	}
	return int64(bytes.LastIndexByte(data[:i], '\n') + 1)
}

// A turn `droid exec` never announced: its prompt, from its line on, until
// the outcome that ends it; Droid's own context and hook records are not
// prompts.
func TestDroidPendingTurn(t *testing.T) {
	for _, tc := range []struct {
		name, file, cut, prompt string
	}{
		// At its Stop (the outcome comes after the Stop hook ran).
		{"exec at its Stop", "droid/exec_plain_transcript.jsonl", `"hookEventName":"Stop"`, "say hello"},
		{"exec write at its PreToolUse", "droid/exec_write_transcript.jsonl", `"hookEventName":"PreToolUse"`, "make it [[write a.txt]]"},
		{"exec failed at its Stop", "droid/exec_fail_transcript.jsonl", `"hookEventName":"Stop"`, "boom [[fail]]"},
		{"exec stopped by SIGINT", "droid/exec_sigint_transcript.jsonl", "", "wait [[hold]]"},
		{"exec ended", "droid/exec_plain_transcript.jsonl", "", ""},
		{"exec resumed, at its Stop", "droid/exec_resume_transcript.jsonl", `"hookEventName":"Stop","hookCommands":[{"type":"command","command":"tether-hook droid Stop"}],"hookStatus":"completed","hookResults":[{"exitCode":0,"stdout":"","stderr":""}],"hookParentId":"2878f7e8`, "carry on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, path, data := recordedTranscript(t, tc.file, tc.cut)
			got, at, ok := pendingTurn("droid", root, path, 0, -1)
			if ok != (tc.prompt != "") || got.Prompt != tc.prompt {
				t.Fatalf("pendingTurn = %+v at %d, %v; want %q", got, at, ok, tc.prompt)
			}
			if ok && at != offsetOf(t, data, `"text":"`+tc.prompt+`"`) {
				t.Errorf("the prompt's line starts at %d, pendingTurn says %d", offsetOf(t, data, tc.prompt), at)
			}
			if _, _, ok := pendingTurn("claude-code", root, path, 0, -1); ok {
				t.Error("an agent that announces its turns has none pending")
			}
		})
	}
}

// Droid's Stop after a failed model call: the error Droid showed.
func TestDroidTurnFailure(t *testing.T) {
	root, path, _ := recordedTranscript(t, "droid/exec_fail_transcript.jsonl", `"hookEventName":"Stop"`)
	if got := TurnFailure("droid", root, path, 0, -1); got != "BYOK Error: 400 mock failure (MOCK_FAIL)" {
		t.Errorf("at the Stop of a failed turn: %q", got)
	}
	root, path, _ = recordedTranscript(t, "droid/exec_fail_transcript.jsonl", "")
	if got := TurnFailure("droid", root, path, 0, -1); got != "BYOK Error: 400 mock failure (MOCK_FAIL)" {
		t.Errorf("with the turn's outcome (model_request_rejected): %q", got)
	}
	for _, file := range []string{"droid/exec_plain_transcript.jsonl", "droid/exec_write_transcript.jsonl"} {
		root, path, _ := recordedTranscript(t, file, "")
		if got := TurnFailure("droid", root, path, 0, -1); got != "" {
			t.Errorf("%s: %q, want no failure", file, got)
		}
	}
	if got := TurnFailure("claude-code", root, path, 0, -1); got != "" {
		t.Errorf("an agent whose turn end says it failed: %q", got)
	}
}

// Esc in Droid's TUI: no Stop, an agent_turn_outcome "cancelled".
func TestDroidCancelled(t *testing.T) {
	root, path, data := recordedTranscript(t, "droid/tui_transcript.jsonl", "")
	held := offsetOf(t, data, `"text":"wait [[hold]]"`)
	if !TurnCancelled("droid", root, path, held) {
		t.Error("the held turn Esc stopped is not cancelled")
	}
	if TurnCancelled("droid", root, path, offsetOf(t, data, `"text":"boom [[fail]]"`)) {
		t.Error("the turn after it is cancelled too")
	}
	root, path, _ = recordedTranscript(t, "droid/tui_transcript.jsonl", `"reason":"cancelled"`)
	if TurnCancelled("droid", root, path, held) {
		t.Error("cancelled before Droid wrote so")
	}
}

// A headless Qwen Code run whose model call failed fires neither Stop nor
// StopFailure: the transcript's api_error record says it.
func TestQwenFailure(t *testing.T) {
	root, path, _ := recordedTranscript(t, "qwen/headless_fail_transcript.jsonl", "")
	if got := readTurnEnd("qwen", root, path, 0, -1, true); got.Failure != "BadRequestError: 400 mock failure (MOCK_FAIL)" {
		t.Errorf("failure = %+v", got)
	}
	for _, file := range []string{"qwen/headless_plain_transcript.jsonl", "qwen/headless_write_transcript.jsonl"} {
		root, path, _ := recordedTranscript(t, file, "")
		if got := readTurnEnd("qwen", root, path, 0, -1, true); got != (TurnEnd{}) {
			t.Errorf("%s: %+v, want no end read", file, got)
		}
	}
	// The TUI's failed turn fired StopFailure; the turn after it, had
	// there been one, answered: the error is the last word here.
	root, path, _ = recordedTranscript(t, "qwen/tui_transcript.jsonl", "")
	if got := readTurnEnd("qwen", root, path, 0, -1, true); got.Failure == "" {
		t.Errorf("the TUI's last turn failed: %+v", got)
	}
}

// The files Droid's, Pi's and Qwen Code's own tools wrote, read from
// their recorded transcripts: the write turns' a.txt, and nothing in a
// turn that only answered.
func TestTurnWritesDroidPiQwen(t *testing.T) {
	for _, tc := range []struct {
		agent, file string
		want        []string
	}{
		{"droid", "droid/exec_write_transcript.jsonl", []string{"/home/dev/project/a.txt"}},
		{"droid", "droid/exec_plain_transcript.jsonl", nil},
		{"pi", "pi/p_write_transcript.jsonl", []string{"/home/dev/project/a.txt"}},
		{"pi", "pi/p_plain_transcript.jsonl", nil},
		{"qwen", "qwen/headless_write_transcript.jsonl", []string{"/home/dev/project/a.txt"}},
		{"qwen", "qwen/tui_transcript.jsonl", nil},
	} {
		root, path, _ := recordedTranscript(t, tc.file, "")
		w, ok := TurnWrites(tc.agent, root, path, 0, -1)
		if !ok || w.Shell || !slices.Equal(w.Paths, tc.want) {
			t.Errorf("%s: %+v, %v; want %q written by its file tools alone", tc.file, w, ok, tc.want)
		}
	}
	// A shell command, or a tool tether does not know, may write anything.
	for _, tc := range []struct{ agent, line string }{
		{"droid", `{"type":"message","message":{"role":"assistant","content":[{"type":"tool_use","name":"Execute","input":{"command":"make"}}]}}`},
		{"pi", `{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","name":"bash","arguments":{"command":"make"}}]}}`},
		{"qwen", `{"type":"assistant","message":{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"make"}}}]}}`},
	} {
		root := t.TempDir()
		path := filepath.Join(root, "t.jsonl")
		if err := os.WriteFile(path, []byte(tc.line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if w, ok := TurnWrites(tc.agent, root, path, 0, -1); !ok || !w.Shell || len(w.Paths) != 0 {
			t.Errorf("%s's shell: %+v, %v", tc.agent, w, ok)
		}
	}
}
