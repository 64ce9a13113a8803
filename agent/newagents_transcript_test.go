package agent

import (
	"bytes"
	"os"
	"path/filepath"
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
	root, path, data := recordedTranscript(t, "qwen/tui_transcript.jsonl", "")
	if got := readTurnEnd("qwen", root, path, 0, -1, true); got.Failure == "" {
		t.Errorf("the TUI's last turn failed: %+v", got)
	}
	// Its idle_prompt, landing before its StopFailure, ends the failed
	// turn: the turn end reads the failure; the turn before failed not.
	failed := offsetOf(t, data, `"text":"boom [[fail]]"`)
	if got := TurnFailure("qwen", root, path, failed, -1); got != "BadRequestError: 400 mock failure (MOCK_FAIL)" {
		t.Errorf("the failed turn's end: %q", got)
	}
	if got := TurnFailure("qwen", root, path, offsetOf(t, data, `"text":"wait [[hold]]"`), failed); got != "" {
		t.Errorf("the held turn's end: %q, want no failure", got)
	}
}

// The call a Droid dialog asks about, which its notification does not
// name: the last call in the transcript as Droid had written it when the
// notification came, from the turn's prompt on. Qwen Code's notification
// names its tool.
func TestDialogCall(t *testing.T) {
	for _, tc := range []struct {
		name, agent, file, prompt, cut string
		detail, tool                   string
	}{
		{"write", "droid", "droid/tui_wait_transcript.jsonl", `"text":"make a file [[write a.txt]]"`, `"hookEventName":"Notification"`,
			"Create `a.txt`", "Create"},
		{"shell", "droid", "droid/tui_wait_transcript.jsonl", `"text":"run [[shell c.txt]]"`, `"tool_use_id":"call_mock37"`,
			"Execute `printf 'written by the agent\\n' > 'c.txt'`", "Execute"},
		{"before the call", "droid", "droid/tui_wait_transcript.jsonl", `"text":"make a file [[write a.txt]]"`, `"id":"call_mock21"`, "", ""},
		{"an agent whose signal names the tool", "qwen", "qwen/tui_wait_transcript.jsonl", `"text":"write [[write e.txt]]"`, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, path, data := recordedTranscript(t, tc.file, "")
			from := offsetOf(t, data, tc.prompt)
			to := int64(len(data))
			if tc.cut != "" {
				i := bytes.Index(data[from:], []byte(tc.cut))
				if i < 0 {
					t.Fatalf("no %q after the prompt", tc.cut)
				}
				to = int64(bytes.LastIndexByte(data[:from+int64(i)], '\n') + 1)
			}
			detail, tool := DialogCall(tc.agent, root, path, "/home/dev/project", from, to)
			if detail != tc.detail || tool != tc.tool {
				t.Errorf("DialogCall = %q, %q; want %q, %q", detail, tool, tc.detail, tc.tool)
			}
		})
	}
}
