package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/state"
)

// TestWaitSignals runs a Claude Code session's wait signals through the
// real binary: a dialog and its reminder are one wait, since the dialog
// opened; another tool's end ends nothing; the tool's own does; a late
// dialog after the turn changes nothing; idle at the prompt waits for
// input until the next prompt; a session ended while it waits was
// interrupted.
func TestWaitSignals(t *testing.T) {
	r := newRepo(t)
	const id = "waits"
	appendLine(t, r.transcript(id), `{"type":"user"}`)
	call := func(event string, extra map[string]any) *state.Session {
		t.Helper()
		run := runHook(t, r.dir, claudePayload(t, r, id, event, extra), nil, "claude-code", event)
		if run.stdout != "" || run.stderr != "" {
			t.Fatalf("%s: stdout %q, stderr %q", event, run.stdout, run.stderr)
		}
		return r.load(t, id)
	}
	bash := map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "npm test\nand more", "description": "run the tests"}}
	check := func(s *state.Session, phase state.Phase, want *state.Wait) {
		t.Helper()
		if s.Phase != phase || (s.Waiting == nil) != (want == nil) ||
			want != nil && (s.Waiting.Kind != want.Kind || s.Waiting.Detail != want.Detail || s.Waiting.Key != want.Key || s.Waiting.Since.IsZero()) {
			t.Fatalf("phase %s, waiting %+v; want %s, %+v", s.Phase, s.Waiting, phase, want)
		}
	}
	permission := &state.Wait{Kind: state.WaitPermission, Detail: "Bash `npm test …`", Key: "Bash"}

	call("SessionStart", map[string]any{"source": "startup"})
	check(call("UserPromptSubmit", map[string]any{"prompt": "test it"}), state.PhaseActive, nil)
	s := call("PermissionRequest", bash)
	check(s, state.PhaseWaiting, permission)
	since := s.Waiting.Since
	time.Sleep(10 * time.Millisecond)
	s = call("Notification", map[string]any{"notification_type": "permission_prompt", "message": "Claude needs your permission"})
	check(s, state.PhaseWaiting, permission)
	if !s.Waiting.Since.Equal(since) {
		t.Fatalf("the reminder moved the wait's start from %v to %v", since, s.Waiting.Since)
	}
	check(call("PostToolUse", map[string]any{"tool_name": "Read"}), state.PhaseWaiting, permission)
	check(call("PostToolUse", bash), state.PhaseActive, nil)
	check(call("Stop", nil), state.PhaseIdle, nil)
	// A dialog's signal after its turn ended is a late one.
	check(call("PermissionRequest", bash), state.PhaseIdle, nil)
	check(call("Notification", map[string]any{"notification_type": "idle_prompt", "message": "Claude is waiting for your input"}),
		state.PhaseWaiting, &state.Wait{Kind: state.WaitInput})
	check(call("UserPromptSubmit", map[string]any{"prompt": "again"}), state.PhaseActive, nil)
	check(call("PermissionRequest", map[string]any{"tool_name": "AskUserQuestion",
		"tool_input": map[string]any{"questions": []any{map[string]any{"question": "Which one?"}}}}),
		state.PhaseWaiting, &state.Wait{Kind: state.WaitQuestion, Detail: "Which one?", Key: "AskUserQuestion"})
	s = call("SessionEnd", map[string]any{"reason": "other"})
	if s.Phase != state.PhaseEnded || !s.Interrupted || s.EndReason != state.EndInterrupted || s.Waiting != nil {
		t.Fatalf("ended while waiting: %+v", s)
	}
	for _, l := range r.logLines(t) {
		if l.Level != "INFO" {
			t.Errorf("log: %+v", l)
		}
	}
}

// TestUnattendedNoWait: Claude Code's -p fires PermissionRequest too, with
// no dialog: its hooks get CLAUDE_CODE_SESSION_ATTENDED=0 (recorded from
// the real CLI), and no wait is recorded.
func TestUnattendedNoWait(t *testing.T) {
	r := newRepo(t)
	const id = "unattended"
	appendLine(t, r.transcript(id), `{"type":"user"}`)
	bash := map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}}
	for _, ev := range []struct {
		name  string
		extra map[string]any
	}{{"SessionStart", nil}, {"UserPromptSubmit", map[string]any{"prompt": "p"}}, {"PermissionRequest", bash}} {
		runHook(t, r.dir, claudePayload(t, r, id, ev.name, ev.extra), []string{"CLAUDE_CODE_SESSION_ATTENDED=0"}, "claude-code", ev.name)
	}
	if s := r.load(t, id); s.Phase != state.PhaseActive || s.Waiting != nil {
		t.Fatalf("unattended: %s, waiting %+v; want active, no wait", s.Phase, s.Waiting)
	}
	runHook(t, r.dir, claudePayload(t, r, id, "PermissionRequest", bash), []string{"CLAUDE_CODE_SESSION_ATTENDED=1"}, "claude-code", "PermissionRequest")
	if s := r.load(t, id); s.Phase != state.PhaseWaiting {
		t.Fatalf("attended: %s, want waiting", s.Phase)
	}
}

// TestCodexReviewerNoWait: Codex fires PermissionRequest before its
// automatic reviewer decides (approvals_reviewer auto_review, in the
// turn's settings in its rollout): no user waits for it. With the user as
// reviewer, the same request is a wait.
func TestCodexReviewerNoWait(t *testing.T) {
	recorded, err := os.ReadFile(filepath.Join("..", "..", "agent", "testdata", "recorded", "codex", "transcript_tui_turn_context.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, reviewer := range []string{"user", "auto_review"} {
		t.Run(reviewer, func(t *testing.T) {
			r := newRepo(t)
			const id = "01a2207e-7b9a-7a50-9ad5-1b63f8d40ab4"
			rollout := r.transcriptOf("codex", id)
			appendLine(t, rollout, strings.TrimSpace(strings.Replace(string(recorded), `"approvals_reviewer":"user"`, `"approvals_reviewer":"`+reviewer+`"`, 1)))
			call := func(file, event string) *state.Session {
				t.Helper()
				payload, _ := samplePayload(t, r, "recorded/codex", file, id, rollout)
				runHook(t, r.dir, payload, nil, "codex", event)
				return r.load(t, id)
			}
			call("UserPromptSubmit_tui.json", "UserPromptSubmit")
			s := call("PermissionRequest_tui_escalated.json", "PermissionRequest")
			want := state.PhaseWaiting
			if reviewer == "auto_review" {
				want = state.PhaseActive
			}
			if s.Phase != want {
				t.Fatalf("approvals_reviewer %s: phase %s after PermissionRequest, want %s", reviewer, s.Phase, want)
			}
		})
	}
}

// TestPromptWaits replays the dialogs recorded in Droid's and Qwen Code's
// TUIs through the real binary. Droid's permission_prompt names no call:
// the wait's tool is the last call the transcript held when the
// notification came; Qwen Code's names the tool. The call's PostToolUse
// ends the wait (approved); a
// denial's turn end does too (Droid's Stop, Qwen Code's idle_prompt), and
// the denied turn did not fail. Qwen Code's PermissionRequest, which also
// fires where no dialog follows, is no wait; nor is a call its auto mode
// ran with no dialog.
func TestPromptWaits(t *testing.T) {
	r := newRepo(t)
	// A step writes the transcript up to the line holding upTo, or through
	// the line holding through (neither: as it was), fires hook n, and
	// checks the session: its phase, and the wait's detail and key.
	type step struct {
		n, event, upTo, through string
		phase                   state.Phase
		detail, key             string
	}
	const qwenAsks = "Qwen Code needs your permission to use write_file"
	for _, run := range []struct {
		agent string
		steps []step
	}{
		{"droid", []step{
			{n: "01", event: "SessionStart", upTo: `"text":"make a file [[write a.txt]]"`, phase: state.PhaseIdle},
			{n: "02", event: "UserPromptSubmit", phase: state.PhaseActive},
			{n: "03", event: "PreToolUse", through: `"id":"call_mock21"`, phase: state.PhaseActive},
			{n: "04", event: "Notification", phase: state.PhaseWaiting, detail: "Create `a.txt`", key: "Create"},
			{n: "05", event: "PostToolUse", phase: state.PhaseActive},
			{n: "06", event: "Stop", upTo: `"text":"another [[write b.txt]]"`, phase: state.PhaseIdle},
			// The shell command, denied with "No, cancel".
			{n: "11", event: "UserPromptSubmit", phase: state.PhaseActive},
			{n: "12", event: "PreToolUse", through: `"id":"call_mock37"`, phase: state.PhaseActive},
			{n: "13", event: "Notification", phase: state.PhaseWaiting,
				detail: "Execute `printf 'written by the agent\\n' > 'c.txt'`", key: "Execute"},
			{n: "14", event: "Stop", through: `"turnId":"77c1f0de`, phase: state.PhaseIdle},
		}},
		{"qwen", []step{
			{n: "01", event: "SessionStart", upTo: `"text":"make a file [[write a.txt]]"`, phase: state.PhaseIdle},
			{n: "02", event: "UserPromptSubmit", phase: state.PhaseActive},
			// Auto mode ran the write with no dialog.
			{n: "03", event: "PreToolUse", through: `"id":"call_mock1"`, phase: state.PhaseActive},
			{n: "04", event: "PostToolUse", phase: state.PhaseActive},
			{n: "05", event: "UserPromptSubmit", phase: state.PhaseActive},
			{n: "06", event: "Stop", upTo: `"text":"write [[write d.txt]]"`, phase: state.PhaseIdle},
			{n: "21", event: "UserPromptSubmit", phase: state.PhaseActive},
			{n: "22", event: "PermissionRequest", through: `"id":"call_mock11"`, phase: state.PhaseActive},
			{n: "23", event: "Notification", phase: state.PhaseWaiting, detail: qwenAsks},
			{n: "24", event: "PreToolUse", phase: state.PhaseWaiting, detail: qwenAsks},
			{n: "25", event: "PostToolUse", phase: state.PhaseActive},
			{n: "27", event: "Stop", upTo: `"text":"write [[write e.txt]]"`, phase: state.PhaseIdle},
			// Denied with Esc.
			{n: "29", event: "UserPromptSubmit", phase: state.PhaseActive},
			{n: "30", event: "PermissionRequest", through: `"id":"call_mock14"`, phase: state.PhaseActive},
			{n: "31", event: "Notification", phase: state.PhaseWaiting, detail: qwenAsks},
			{n: "32", event: "Notification", through: `"functionResponse":{"id":"call_mock14"`, phase: state.PhaseIdle},
		}},
	} {
		d := newRecordedRun(t, r, run.agent, run.agent+"-wait", "tui_wait")
		for _, st := range run.steps {
			switch {
			case st.upTo != "":
				d.upTo(st.upTo)
			case st.through != "":
				d.through(st.through)
			}
			d.fire(st.n, st.event)
			s := r.load(t, d.id)
			if s.Phase != st.phase || (s.Waiting == nil) != (st.detail == "") || s.LastError != "" ||
				st.detail != "" && (s.Waiting.Kind != state.WaitPermission || s.Waiting.Detail != st.detail || s.Waiting.Key != st.key) {
				t.Fatalf("%s after %s %s: phase %s, waiting %+v, error %q; want %s, a permission for %q",
					run.agent, st.n, st.event, s.Phase, s.Waiting, s.LastError, st.phase, st.detail)
			}
		}
		if s := r.load(t, d.id); run.agent == "qwen" && s.Turns != 3 {
			t.Errorf("qwen: %d turns, want 3", s.Turns)
		}
	}
}
