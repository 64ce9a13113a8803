package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tetherdev/tether/state"
)

// What the real agents do that the hook must live with (see the
// recordings in agent/testdata/recorded).

// TestQuietStderrForGemini: Gemini CLI shows a hook's stderr to the user
// when its stdout is empty, so a failure goes to the log only.
func TestQuietStderrForGemini(t *testing.T) {
	r := newRepo(t)
	before := len(r.logLines(t))
	run := runHook(t, r.dir, []byte("{not json"), nil, "gemini", "BeforeAgent")
	if run.stdout != "" || run.stderr != "" {
		t.Errorf("stdout %q, stderr %q; want both empty", run.stdout, run.stderr)
	}
	logs := r.logLines(t)
	if len(logs)-before != 1 || logs[len(logs)-1].Level != "ERROR" || !strings.Contains(logs[len(logs)-1].Err, "not valid JSON") {
		t.Errorf("log = %+v, want one ERROR line saying the payload is not valid JSON", logs[before:])
	}
	// Claude Code keeps its line: it shows stderr only in verbose mode.
	if run := runHook(t, r.dir, []byte("{not json"), nil, "claude-code"); !strings.HasPrefix(run.stderr, "tether-hook: ") {
		t.Errorf("claude-code stderr = %q, want the failure's line", run.stderr)
	}
}

// TestCodexNotifyCreatesNoSession: notify fires for every thread, the TUI's
// hidden title-generation thread included; a thread the hooks never named
// is no session, and leaves nothing behind.
func TestCodexNotifyCreatesNoSession(t *testing.T) {
	r := newRepo(t)
	title, _ := samplePayload(t, r, "recorded/codex", "notify_tui_title_thread.json", "title-thread", "")
	run := runHook(t, r.dir, nil, nil, "codex", string(title))
	if run.stdout != "" || run.stderr != "" {
		t.Fatalf("stdout %q, stderr %q", run.stdout, run.stderr)
	}
	if _, err := os.Stat(filepath.Join(r.common, "tether")); !os.IsNotExist(err) {
		t.Errorf("notify for an unknown thread created the store (%v)", err)
	}
	// For a session the hooks record, notify ends its turn.
	start, _ := samplePayload(t, r, "recorded/codex", "UserPromptSubmit.json", "s1", r.transcript("s1"))
	runHook(t, r.dir, start, nil, "codex", "UserPromptSubmit")
	notify, _ := samplePayload(t, r, "recorded/codex", "notify_exec_argv.json", "s1", "")
	runHook(t, r.dir, nil, nil, "codex", string(notify))
	if s := r.load(t, "s1"); s.Phase != state.PhaseIdle || s.Turns != 1 {
		t.Errorf("after notify: phase %q, %d turns; want idle, 1", s.Phase, s.Turns)
	}
	if _, err := r.store(t).Load("title-thread"); err == nil {
		t.Error("the title thread became a session")
	}
}

// TestDuplicateDeliveries: the same prompt delivered by two configs at
// once (Claude Code runs an event's hooks in parallel) is one turn.
func TestDuplicateDeliveries(t *testing.T) {
	r := newRepo(t)
	prompt := claudePayload(t, r, "s1", "UserPromptSubmit", map[string]any{"prompt": "hi", "prompt_id": "p-1"})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { runHook(t, r.dir, prompt, nil, "claude-code") })
	}
	wg.Wait()
	recs := r.turns(t, "s1")
	if s := r.load(t, "s1"); s.Phase != state.PhaseActive || s.Turns != 1 || len(recs) != 1 || recs[0].Key != "p-1" {
		t.Fatalf("phase %q, %d turns, records %+v; want one running turn keyed p-1", s.Phase, s.Turns, recs)
	}
	// The next prompt is a new turn, and the first one's end comes once.
	runHook(t, r.dir, claudePayload(t, r, "s1", "Stop", map[string]any{"prompt_id": "p-1"}), nil, "claude-code")
	runHook(t, r.dir, claudePayload(t, r, "s1", "Stop", map[string]any{"prompt_id": "p-1"}), nil, "claude-code")
	runHook(t, r.dir, claudePayload(t, r, "s1", "UserPromptSubmit", map[string]any{"prompt": "hi", "prompt_id": "p-2"}), nil, "claude-code")
	recs = r.turns(t, "s1")
	var kinds []string
	for _, rec := range recs {
		kinds = append(kinds, rec.T)
	}
	if got := strings.Join(kinds, ","); got != "turn-start,turn-end,turn-start" {
		t.Errorf("turn log %s, want turn-start,turn-end,turn-start", got)
	}
}

// claudeCancel is what Claude Code writes into its transcript when Esc
// cancels a turn; it fires no hook.
const claudeCancel = `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]}}`

// TestCancelledTurnFromTranscript: a turn cancelled with Esc is over when
// the next event comes; /exit after it is a clean end, and the next prompt
// does not interrupt it.
func TestCancelledTurnFromTranscript(t *testing.T) {
	for _, tc := range []struct {
		name, next string
		cancel     bool
		phase      state.Phase
		endReason  string
		records    string
	}{
		{"exit after Esc", "SessionEnd", true, state.PhaseEnded, state.EndSessionEnd, "turn-start,turn-end"},
		{"exit mid-turn", "SessionEnd", false, state.PhaseEnded, state.EndInterrupted, "turn-start"},
		{"prompt after Esc", "UserPromptSubmit", true, state.PhaseActive, "", "turn-start,turn-end,turn-start"},
		{"prompt mid-turn", "UserPromptSubmit", false, state.PhaseActive, "", "turn-start,turn-start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			appendLine(t, r.transcript("s1"), `{"type":"user","message":{"role":"user","content":"an earlier prompt"}}`)
			appendLine(t, r.transcript("s1"), claudeCancel) // an earlier turn's cancel: not this one's
			runHook(t, r.dir, claudePayload(t, r, "s1", "UserPromptSubmit", map[string]any{"prompt": "go", "prompt_id": "p-1"}), nil, "claude-code")
			appendLine(t, r.transcript("s1"), `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"working"}]}}`)
			if tc.cancel {
				appendLine(t, r.transcript("s1"), claudeCancel)
			}
			runHook(t, r.dir, claudePayload(t, r, "s1", tc.next, map[string]any{"prompt": "next", "prompt_id": "p-2", "reason": "prompt_input_exit"}), nil, "claude-code")
			s := r.load(t, "s1")
			var kinds []string
			for _, rec := range r.turns(t, "s1") {
				kinds = append(kinds, rec.T)
			}
			if s.Phase != tc.phase || s.EndReason != tc.endReason || s.Interrupted != (tc.endReason == state.EndInterrupted) ||
				strings.Join(kinds, ",") != tc.records {
				t.Errorf("phase %q, end %q (interrupted %v), records %v; want %q, %q, %s",
					s.Phase, s.EndReason, s.Interrupted, kinds, tc.phase, tc.endReason, tc.records)
			}
		})
	}
}

// TestFailedTurnFromTranscript: after a model error Claude Code fires
// StopFailure and SessionEnd as it exits, and kills the hooks still
// running: StopFailure's may record nothing. The SessionEnd hook reads the
// error Claude Code wrote into its transcript (recorded from the real CLI):
// the turn ended in that error, and the session ended cleanly, not
// interrupted. Whichever hook comes first, the session reads the same.
func TestFailedTurnFromTranscript(t *testing.T) {
	recorded, err := os.ReadFile(filepath.Join("..", "..", "agent", "testdata", "recorded", "claude-code", "transcript_p_model_error.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	prompt, rest, _ := strings.Cut(string(recorded), "\n")
	const failure = "API Error: 400 mock: [[fail]] asked for a model error"
	for _, tc := range []struct {
		name      string
		events    []string
		lastError string
	}{
		{"StopFailure killed before it recorded", []string{"SessionEnd"}, failure},
		{"StopFailure first", []string{"StopFailure", "SessionEnd"}, "invalid_request: mock"},
		{"StopFailure after the session ended", []string{"SessionEnd", "StopFailure"}, failure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			appendLine(t, r.transcript("s1"), prompt)
			runHook(t, r.dir, claudePayload(t, r, "s1", "UserPromptSubmit", map[string]any{"prompt": "break [[fail]]"}), nil, "claude-code")
			appendLine(t, r.transcript("s1"), strings.TrimSuffix(rest, "\n"))
			for _, ev := range tc.events {
				runHook(t, r.dir, claudePayload(t, r, "s1", ev, map[string]any{"error": "invalid_request", "error_details": "mock", "reason": "other"}), nil, "claude-code")
			}
			s := r.load(t, "s1")
			recs := r.turns(t, "s1")
			if s.Phase != state.PhaseEnded || s.EndReason != state.EndSessionEnd || s.Interrupted || s.LastError != tc.lastError ||
				len(recs) != 2 || recs[1].T != state.RecTurnEnd || recs[1].Error != tc.lastError {
				t.Errorf("phase %q, end %q (interrupted %v), error %q, records %+v; want ended by its SessionEnd, the turn ended in %q",
					s.Phase, s.EndReason, s.Interrupted, s.LastError, recs, tc.lastError)
			}
		})
	}
}

// TestCodexResumeJoinsTheRunningTurn: Codex's app-server daemon runs a turn
// on after its TUI is killed, so the session ends as interrupted at the next
// sweep; `codex resume ID` then joins that turn, and its first prompt comes
// under the same turn_id (recorded from the real CLI). It revives the
// session with a new turn, and the turn's Stop ends it.
func TestCodexResumeJoinsTheRunningTurn(t *testing.T) {
	r := newRepo(t)
	const id = "codex-resumed"
	tr := r.transcriptOf("codex", id)
	held, _ := samplePayload(t, r, "recorded/codex", "UserPromptSubmit_tui_held.json", id, tr)
	runHook(t, r.dir, held, nil, "codex", "UserPromptSubmit")
	end := exec.Command(bins.sweep, "end", id, "--reason", "the TUI was killed")
	end.Dir, end.Env = r.dir, cleanEnv()
	if out, err := end.CombinedOutput(); err != nil {
		t.Fatalf("tether-sweep end: %v\n%s", err, out)
	}
	joined, _ := samplePayload(t, r, "recorded/codex", "UserPromptSubmit_tui_resume_joins_turn.json", id, tr)
	runHook(t, r.dir, joined, nil, "codex", "UserPromptSubmit")
	s := r.load(t, id)
	recs := r.turns(t, id)
	if s.Phase != state.PhaseActive || s.Turns != 2 || s.LastPrompt != "after resume two" || len(recs) == 0 ||
		recs[len(recs)-1].T != state.RecTurnStart || recs[len(recs)-1].Prompt != "after resume two" {
		t.Fatalf("after the resumed TUI's prompt: phase %q, %d turns, last prompt %q, records %+v; want active, 2, the new prompt",
			s.Phase, s.Turns, s.LastPrompt, recs)
	}
	stop, _ := samplePayload(t, r, "recorded/codex", "Stop_tui_resume_joins_turn.json", id, tr)
	runHook(t, r.dir, stop, nil, "codex", "Stop")
	if s := r.load(t, id); s.Phase != state.PhaseIdle || s.Turns != 2 {
		t.Errorf("after Stop: phase %q, %d turns; want idle, 2", s.Phase, s.Turns)
	}
}
