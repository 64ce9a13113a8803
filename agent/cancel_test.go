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
	long, _ := write("long.jsonl", ccPromptLine, ccCancelLine, strings.Repeat(ccReplyLine+"\n", maxCancelScan/len(ccReplyLine)+1))
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
