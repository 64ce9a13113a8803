//go:build unix

package agent

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Lines of a Claude Code transcript around a turn cancelled with Esc.
const (
	ccPromptLine  = `{"type":"user","message":{"role":"user","content":"say hi"},"uuid":"u1"}`
	ccReplyLine   = `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"working"}]},"uuid":"a1"}`
	ccCancelLine  = `{"parentUuid":"a1","type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]},"uuid":"u2"}`
	ccToolCancel  = `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]}}`
	ccStringForm  = `{"type":"user","message":{"role":"user","content":"[Request interrupted by user]"}}`
	ccQuotedReply = `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"[Request interrupted by user]"}]}}`
	ccToolResult  = `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"[Request interrupted by user]"}]}}`
)

func TestTurnCancelled(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lines ...string) (path string, size int64) {
		path = filepath.Join(dir, name)
		data := strings.Join(lines, "\n") + "\n"
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return path, int64(len(data))
	}
	before := int64(len(ccPromptLine) + 1) // the turn started after the prompt line
	cancelled, _ := write("cancelled.jsonl", ccPromptLine, ccReplyLine, ccCancelLine)
	toolCancel, _ := write("tool.jsonl", ccPromptLine, ccReplyLine, ccToolCancel)
	stringForm, _ := write("string.jsonl", ccPromptLine, ccStringForm)
	running, _ := write("running.jsonl", ccPromptLine, ccReplyLine)
	quoted, _ := write("quoted.jsonl", ccPromptLine, ccQuotedReply, ccToolResult)
	old, oldSize := write("old.jsonl", ccPromptLine, ccCancelLine)
	// A cancel more than the scan bound before the end is not seen, and a
	// partial first line is not judged.
	long, _ := write("long.jsonl", ccPromptLine, ccCancelLine, strings.Repeat(ccReplyLine+"\n", maxTurnScan/len(ccReplyLine)+1))
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The same cancel outside the directory the agent keeps transcripts in.
	elsewhere := filepath.Join(t.TempDir(), "cancelled.jsonl")
	if err := os.WriteFile(elsewhere, []byte(ccPromptLine+"\n"+ccCancelLine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, agent, path string
		from              int64
		want              bool
	}{
		{"Esc mid-turn", "claude-code", cancelled, before, true},
		{"Esc during a tool call", "claude", toolCancel, before, true},
		{"content as a string", "claude-code", stringForm, before, true},
		{"still running", "claude-code", running, before, false},
		{"the words quoted, not a cancel", "claude-code", quoted, before, false},
		{"a cancel of an earlier turn", "claude-code", old, oldSize, false},
		{"beyond the scan bound", "claude-code", long, before, false},
		{"from past the end", "claude-code", cancelled, 1 << 30, false},
		{"no such file", "claude-code", filepath.Join(dir, "missing"), 0, false},
		{"a FIFO never blocks", "claude-code", fifo, 0, false},
		{"no path", "claude-code", "", 0, false},
		{"outside the transcript directory", "claude-code", elsewhere, before, false},
		// Agents that fire a hook on a cancel are not read.
		{"codex", "codex", cancelled, before, false},
		{"gemini", "gemini", cancelled, before, false},
		{"unknown agent", "aider", cancelled, before, false},
	} {
		if got := TurnCancelled(tc.agent, dir, tc.path, tc.from); got != tc.want {
			t.Errorf("%s: TurnCancelled = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Copilot CLI's events.jsonl, recorded from the real CLI: a TUI turn
// cancelled with Ctrl-C, then /exit; a -p turn stopped with SIGINT
// (abort "user_abort"); a -p turn that ran to its end.
func TestTurnCancelledCopilot(t *testing.T) {
	rec := filepath.Join("testdata", "recorded", "copilot")
	dir := t.TempDir()
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(rec, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cancelLog := read("events_tui_cancel_then_exit.jsonl")
	sigintLog := read("events_p_sigint.jsonl")
	doneLog := read("events_p_say_hi.jsonl")
	// Where the hook recorded the turn's start: the transcript's size at
	// userPromptSubmitted, before the user.message entry.
	from := func(log string) int64 { return int64(strings.Index(log, `{"type":"user.message"`)) }
	abort := strings.Index(cancelLog, `{"type":"abort"`)
	turnEnd := strings.Index(cancelLog, `{"type":"assistant.turn_end"`)
	if from(cancelLog) < 0 || abort < 0 || turnEnd < 0 || from(doneLog) < 0 || from(sigintLog) < 0 {
		t.Fatal("the recordings lack the entries this test cuts at")
	}
	cancelled := write("cancelled.jsonl", cancelLog)
	sigint := write("sigint.jsonl", sigintLog)
	running := write("running.jsonl", cancelLog[:turnEnd])
	done := write("done.jsonl", doneLog)
	// The user's prompt saying the word, with the entry's own shape.
	quoted := write("quoted.jsonl", cancelLog[:turnEnd]+
		`{"type":"assistant.message","data":{"content":"{\"type\":\"abort\"}"},"id":"x"}`+"\n")
	for _, tc := range []struct {
		name string
		path string
		from int64
		want bool
	}{
		{"cancelled mid-turn", cancelled, from(cancelLog), true},
		{"SIGINT mid-turn in -p", sigint, from(sigintLog), true},
		{"cancelled, read from the entry itself", cancelled, int64(abort), true},
		{"still running", running, from(cancelLog), false},
		{"a turn that ended", done, from(doneLog), false},
		{"an abort of an earlier turn", cancelled, int64(abort + strings.Index(cancelLog[abort:], "\n") + 1), false},
		{"the entry quoted in a message", quoted, from(cancelLog), false},
	} {
		if got := TurnCancelled("copilot", dir, tc.path, tc.from); got != tc.want {
			t.Errorf("%s: TurnCancelled = %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`{"type":"abort","data":{"reason":"user_initiated"},"id":"a","timestamp":"2026-11-24T00:52:26.055Z"}`, true},
		{`{"type":"abort","data":{"reason":"remote"}}`, true},
		{`{"type":"assistant.turn_end","data":{"turnId":"0"}}`, false},
		{`{"type":"user.message","data":{"content":"abort"}}`, false},
		{`{"type":"hook.start","data":{"input":{"type":"abort"}}}`, false},
		{`{"type":"abort"`, false},
		{``, false},
	} {
		if got := copilotCancelled([]byte(tc.line)); got != tc.want {
			t.Errorf("copilotCancelled(%s) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

// Claude Code -p after a model error (recorded from the real CLI,
// e2e/claude_test.go TestClaudePrintModelError): the prompt, the error
// Claude Code wrote as the assistant's message, and its bookkeeping lines.
func TestTurnEndFailure(t *testing.T) {
	recorded, err := os.ReadFile(filepath.Join("testdata", "recorded", "claude-code", "transcript_p_model_error.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, lines ...string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	failedLog := write("failed.jsonl", string(recorded))
	// The turn started where the hook measured the transcript: after the prompt.
	from := int64(strings.Index(string(recorded), "\n") + 1)
	retried := write("retried.jsonl", string(recorded), ccReplyLine) // the conversation went on after it
	toolAfter := write("tool.jsonl", string(recorded), ccToolResult)
	stringForm := write("string.jsonl", ccPromptLine, `{"type":"assistant","isApiErrorMessage":true,"message":{"role":"assistant","content":"API Error: 529 overloaded\nretry later"}}`)
	bare := write("bare.jsonl", ccPromptLine, `{"type":"assistant","isApiErrorMessage":true,"message":{"role":"assistant","content":[]}}`)
	notAnError := write("false.jsonl", ccPromptLine, `{"type":"assistant","isApiErrorMessage":false,"message":{"content":[{"type":"text","text":"API Error: quoted"}]}}`)
	const want = "API Error: 400 mock: [[fail]] asked for a model error"
	for _, tc := range []struct {
		name, agent, path string
		from              int64
		want              string
	}{
		{"the turn's model call failed", "claude-code", failedLog, from, want},
		{"the error of an earlier turn", "claude-code", failedLog, int64(len(recorded)), ""},
		{"the conversation went on after it", "claude-code", retried, from, ""},
		{"a tool result after it", "claude-code", toolAfter, from, ""},
		{"content as a string: its first line", "claude-code", stringForm, 0, "API Error: 529 overloaded"},
		{"no text", "claude-code", bare, 0, "model call failed"},
		{"an assistant quoting an error", "claude-code", notAnError, 0, ""},
		{"a running turn", "claude-code", write("running.jsonl", ccPromptLine, ccReplyLine), 0, ""},
		{"no path", "claude-code", "", 0, ""},
		{"an agent whose hook records it", "codex", failedLog, from, ""},
	} {
		if got := readTurnEnd(tc.agent, dir, tc.path, tc.from, -1, true); got.Failure != tc.want || got.Cancelled {
			t.Errorf("%s: readTurnEnd = %+v, want failure %q", tc.name, got, tc.want)
		}
		if got := readTurnEnd(tc.agent, dir, tc.path, tc.from, -1, false); got != (TurnEnd{}) {
			t.Errorf("%s: without failures, readTurnEnd = %+v", tc.name, got)
		}
	}
	// The user cancelled the turn after the error: the cancel is why it ended.
	if got := readTurnEnd("claude-code", dir, write("cancelled.jsonl", string(recorded), ccCancelLine), from, -1, true); got != (TurnEnd{Cancelled: true}) {
		t.Errorf("an error, then a cancel: readTurnEnd = %+v, want cancelled", got)
	}
}

// Gemini CLI's chat after a tool's confirmation was denied (recorded from
// the real TUI): the call cancelled, then "Request cancelled.", and no
// AfterAgent.
func TestTurnCancelledGemini(t *testing.T) {
	recorded, err := os.ReadFile(filepath.Join("testdata", "recorded", "gemini", "transcript_tui_deny.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	chat := string(recorded)
	info := strings.Index(chat, `{"id":"eced372d`)
	if info < 0 {
		t.Fatal("the recording lacks its info entry")
	}
	denied := filepath.Join(dir, "denied.jsonl")
	waiting := filepath.Join(dir, "waiting.jsonl")
	if err := os.WriteFile(denied, recorded, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(waiting, recorded[:info], 0o600); err != nil {
		t.Fatal(err)
	}
	if !TurnCancelled("gemini", dir, denied, 0) || TurnCancelled("gemini", dir, waiting, 0) {
		t.Error("Gemini's denied confirmation: the cancel is not read, or read where there is none")
	}
	for line, want := range map[string]bool{
		`{"id":"x","timestamp":"2026-11-28T04:56:47.455Z","type":"info","content":"Request cancelled."}`: true,
		`{"type":"user","content":[{"text":"Request cancelled."}]}`:                                      false,
		`{"type":"info","content":"Request cancelled. Retrying"}`:                                        false,
	} {
		if got := geminiCancelled([]byte(line)); got != want {
			t.Errorf("geminiCancelled(%s) = %v, want %v", line, got, want)
		}
	}
}

// ReviewerAnswers reads the turn settings Codex wrote into its rollout
// (recorded from the real TUI: approvals_reviewer "user"); the same line
// with "auto_review" is Codex's automatic reviewer answering.
func TestReviewerAnswers(t *testing.T) {
	recorded, err := os.ReadFile(filepath.Join("testdata", "recorded", "codex", "transcript_tui_turn_context.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(recorded), `"approvals_reviewer":"user"`) {
		t.Fatal("the recording does not say who reviews")
	}
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	auto := strings.Replace(string(recorded), `"approvals_reviewer":"user"`, `"approvals_reviewer":"auto_review"`, 1)
	user := write("user.jsonl", string(recorded))
	reviewed := write("auto.jsonl", auto)
	// The last turn's settings count: a session switched back to its user.
	switched := write("switched.jsonl", auto+string(recorded))
	for _, tc := range []struct {
		name, agent, path string
		want              bool
	}{
		{"the user reviews", "codex", user, false},
		{"the automatic reviewer", "codex", reviewed, true},
		{"switched back to the user", "codex", switched, false},
		{"no transcript", "codex", "", false},
		{"an agent without a reviewer", "claude-code", reviewed, false},
	} {
		if got := ReviewerAnswers(tc.agent, dir, tc.path); got != tc.want {
			t.Errorf("%s: ReviewerAnswers = %v, want %v", tc.name, got, tc.want)
		}
	}
}
