//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetherdev/tether/internal/mockllm"
	"github.com/tetherdev/tether/sweep"
)

// claudeKey is the API key the mock is given; the TUI approves it by its
// last 20 characters in ~/.claude.json.
const claudeKey = "sk-ant-e2e-0123456789abcdefghijklmnop"

// claudeRepo is a scratch repository with tether installed for Claude Code
// 2.1.328, which runs offline against mock: onboarding done, the key
// approved and the repository trusted, as the TUI needs.
func claudeRepo(t *testing.T, mock *mockllm.Server) *repo {
	t.Helper()
	bins := npmCLI(t, "@anthropic-ai/claude-code", "2.1.328")
	return newRepo(t, func(r *repo) {
		r.addPath(bins)
		r.setenv("ANTHROPIC_BASE_URL="+mock.URL, "ANTHROPIC_API_KEY="+claudeKey,
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
			"DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_MAX_RETRIES=0")
		cfg, err := json.Marshal(map[string]any{
			"hasCompletedOnboarding": true,
			"customApiKeyResponses":  map[string]any{"approved": []string{claudeKey[len(claudeKey)-20:]}, "rejected": []string{}},
			"projects":               map[string]any{r.Dir: map[string]any{"hasTrustDialogAccepted": true}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(r.Home, ".claude.json"), cfg, 0o600); err != nil {
			t.Fatal(err)
		}
	}, "--agent", "claude-code")
}

// claudePrint starts `claude -p PROMPT` with the tools the mock's write
// turn uses (as root, --dangerously-skip-permissions is refused).
func claudePrint(r *repo, prompt string, extra ...string) *proc {
	return r.start("claude", append([]string{"-p", prompt, "--allowedTools", "Write,Bash"}, extra...)...)
}

// onlyClaudeSession is the one session of the repository.
func onlyClaudeSession(t *testing.T, rows []sweep.Row) sweep.Row {
	t.Helper()
	if len(rows) != 1 || rows[0].Agent != "claude-code" {
		t.Fatalf("want one claude-code session, have %+v", rows)
	}
	return rows[0]
}

// TestClaudePrint runs Claude Code's -p mode: a plain turn, recorded and
// owned by the claude process, ended cleanly; then a turn that writes a
// file, committed: the commit's note names a checkpoint holding the
// prompt and the transcript slice.
func TestClaudePrint(t *testing.T) {
	t.Parallel()
	mock := mockllm.NewAnthropic(t)
	r := claudeRepo(t, mock)

	p := claudePrint(r, "say hello")
	if err := p.wait(4 * time.Minute); err != nil {
		t.Fatalf("claude -p: %v", err)
	}
	if !strings.Contains(p.output(), mockllm.Reply) || !mock.Saw("say hello") {
		t.Fatalf("the prompt did not reach the mock, or its reply did not come back: %q", p.output())
	}
	s := onlyClaudeSession(t, r.sessions(false))
	if s.Phase != "ended" || s.EndReason != "session-end" || s.Interrupted || s.Turns != 1 || s.LastPrompt != "say hello" {
		t.Errorf("after a clean -p turn: %+v", s)
	}
	if s.Owner == nil || s.Owner.PID != p.Cmd.Process.Pid || s.Owner.Name != "claude" {
		t.Errorf("owner %+v, want the claude process %d", s.Owner, p.Cmd.Process.Pid)
	}

	// A turn that writes a file (through Claude Code's Bash tool), then a commit.
	p = claudePrint(r, "make a file [[write a.txt]]")
	if err := p.wait(4 * time.Minute); err != nil {
		t.Fatalf("claude -p: %v", err)
	}
	r.commitWritten("a.txt")
	show := r.show("HEAD", false)
	if !strings.Contains(show, "make a file [[write a.txt]]") {
		t.Errorf("tether-sweep show HEAD lacks the prompt:\n%.2000s", show)
	}
	if strings.Contains(show, "say hello") {
		t.Errorf("the commit links the earlier turn, which changed nothing it commits:\n%.2000s", show)
	}
	transcript := r.show("HEAD", true)
	for _, want := range []string{"make a file [[write a.txt]]", `"name":"Bash"`, "written by the agent", mockllm.Reply} {
		if !strings.Contains(transcript, want) {
			t.Errorf("the transcripts of the commit's checkpoints lack %q", want)
		}
	}
	r.checkClean()
}

// holdTurn starts `claude -p` on a turn the mock holds open, and returns
// once the turn is recorded active and owned by the running claude.
func holdTurn(t *testing.T, r *repo, mock *mockllm.Server) (*proc, sweep.Row) {
	t.Helper()
	p := claudePrint(r, "think hard [[hold]]")
	select {
	case <-mock.Held():
	case <-time.After(4 * time.Minute):
		t.Fatalf("the mock never held a stream; claude said: %s", p.output())
	}
	s := r.waitSession("the held turn recorded active", 90*time.Second, func(s sweep.Row) bool {
		return s.Phase == "active" && s.Turns == 1
	})
	if s.Owner == nil || s.Owner.PID != p.Cmd.Process.Pid || s.Liveness != "alive" {
		t.Fatalf("held turn: owner %+v (%s), want the living claude %d", s.Owner, s.Liveness, p.Cmd.Process.Pid)
	}
	return p, s
}

// TestClaudePrintKilled kills claude -p with SIGKILL mid-turn: no hook
// fires, the sweep ends the session as interrupted, and resuming it with
// the command resume --print gives revives the same session.
func TestClaudePrintKilled(t *testing.T) {
	t.Parallel()
	mock := mockllm.NewAnthropic(t)
	r := claudeRepo(t, mock)
	p, s := holdTurn(t, r, mock)
	// Claude Code writes the turn into its transcript a moment after it
	// sends the request; killed before that, it leaves nothing to resume
	// (resume says so). This is the kill of a session it can resume.
	waitFor(t, "the held turn in claude's transcript", 90*time.Second, func() bool {
		text, _ := readClaudeTranscript(r, s.ID)
		return strings.Contains(text, "think hard [[hold]]")
	})
	signal(t, p.Cmd.Process.Pid, syscall.SIGKILL)
	p.wait(4 * time.Minute) // reaped once all its threads are gone
	if got := onlyClaudeSession(t, r.sessions(false)); got.Phase != "active" {
		t.Fatalf("before a sweep, a killed agent's session is %s", got.Phase)
	}
	r.sweep("run")
	got := onlyClaudeSession(t, r.sessions(false))
	if got.Phase != "ended" || got.EndReason != "interrupted" || !got.Interrupted || !got.Resumable {
		t.Fatalf("after kill -9 and a sweep: %+v", got)
	}

	cmdline := strings.TrimSpace(r.sweep("resume", "--print", s.ID))
	if want := "claude --resume " + s.ID; !strings.HasSuffix(cmdline, want) {
		t.Fatalf("resume --print: %q, want it to end in %q", cmdline, want)
	}
	resumed := r.start("/bin/sh", "-c", cmdline+" -p 'carry on' --allowedTools Write,Bash")
	if err := resumed.wait(4 * time.Minute); err != nil {
		t.Fatalf("%s: %v", cmdline, err)
	}
	got = onlyClaudeSession(t, r.sessions(false))
	if got.ID != s.ID || got.Turns != 2 || got.LastPrompt != "carry on" || got.Phase != "ended" || got.EndReason != "session-end" || got.Interrupted {
		t.Errorf("after resuming: %+v", got)
	}
	if !mock.Saw("think hard [[hold]]") || !mock.Saw("carry on") {
		t.Errorf("the resumed session's request lacks its history")
	}
	r.checkClean()
}

// claudeCancel starts the entry Claude Code writes into its transcript
// when the user cancels a turn.
const claudeCancel = "[Request interrupted by user"

// claudeTranscript is the transcript of a Claude Code session, as it is now.
func claudeTranscript(t *testing.T, r *repo, id string) string {
	t.Helper()
	text, err := readClaudeTranscript(r, id)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// readClaudeTranscript reads the transcript of a Claude Code session, which
// Claude Code may not have written yet.
func readClaudeTranscript(r *repo, id string) (string, error) {
	paths, _ := filepath.Glob(filepath.Join(r.Home, ".claude", "projects", "*", id+".jsonl"))
	if len(paths) != 1 {
		return "", fmt.Errorf("transcript of %s: %v", id, paths)
	}
	b, err := os.ReadFile(paths[0])
	return string(b), err
}

// TestClaudePrintSIGINT interrupts claude -p with SIGINT mid-turn. Claude
// Code writes the user's cancel into its transcript ("[Request interrupted
// by user]", as for Esc in the TUI) and, at the same time, fires SessionEnd
// (reason other), and no Stop. The hook reads the transcript at that
// SessionEnd: when the cancel is already there, the turn was cancelled and
// the session then ended cleanly; when Claude Code has not written it yet
// (seen on a loaded machine), the session ends mid-turn, and the sweep,
// once claude is gone, finds the cancel and settles the record the same
// way. One user action, one record, whichever won the race.
func TestClaudePrintSIGINT(t *testing.T) {
	t.Parallel()
	mock := mockllm.NewAnthropic(t)
	r := claudeRepo(t, mock)
	p, s := holdTurn(t, r, mock)
	signal(t, p.Cmd.Process.Pid, syscall.SIGINT)
	p.wait(90 * time.Second)
	if !strings.Contains(claudeTranscript(t, r, s.ID), claudeCancel) {
		t.Fatal("claude wrote no cancel into its transcript on SIGINT")
	}
	got := onlyClaudeSession(t, r.sessions(true))
	if got.Phase != "ended" || got.Turns != 1 || got.EndReason != "session-end" || got.Interrupted || !strings.HasPrefix(got.EndNote, "claude-code: other") {
		t.Errorf("after SIGINT mid-turn: %+v; want the turn cancelled and the session ended by claude", got)
	}
	t.Logf("SIGINT mid-turn recorded as %s (interrupted %v), %s", got.EndReason, got.Interrupted, r.raceWinner())
	r.checkClean()
}

// claudeTUI starts Claude Code's TUI in tmux and returns it once it
// waits for a prompt, with the claude process's PID.
func claudeTUI(t *testing.T, r *repo) (*tmuxSession, int) {
	t.Helper()
	tm := newTmux(r, "claude --allowedTools Write,Bash")
	pid := findProc(t, tm.pid(), "claude", 90*time.Second)
	tm.waitText("shift+tab to cycle", 3*time.Minute)
	return tm, pid
}

// TestClaudeTUI drives Claude Code's TUI: a turn is recorded and owned by
// the claude process; a turn cancelled with Esc (which fires no hook) is
// over at the next sweep, the session idle and its agent alive; /exit
// afterwards is an ordinary session end, not an interruption.
func TestClaudeTUI(t *testing.T) {
	t.Parallel()
	mock := mockllm.NewAnthropic(t)
	r := claudeRepo(t, mock)
	tm, pid := claudeTUI(t, r)

	tm.prompt("say hello")
	s := r.waitSession("the first TUI turn ended", 2*time.Minute, func(s sweep.Row) bool {
		return s.Turns == 1 && s.Phase == "idle"
	})
	if s.Owner == nil || s.Owner.PID != pid || s.Liveness != "alive" || s.LastPrompt != "say hello" {
		t.Fatalf("after a TUI turn: %+v (owner %+v), want owned by the living claude %d", s, s.Owner, pid)
	}

	tm.prompt("think hard [[hold]]")
	select {
	case <-mock.Held():
	case <-time.After(3 * time.Minute):
		t.Fatal("the mock never held the second turn")
	}
	r.waitSession("the held turn active", 90*time.Second, func(s sweep.Row) bool { return s.Turns == 2 && s.Phase == "active" })
	tm.keys("Escape")
	for deadline := time.Now().Add(90 * time.Second); !strings.Contains(claudeTranscript(t, r, s.ID), claudeCancel); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			tr := claudeTranscript(t, r, s.ID)
			t.Fatalf("no cancel in the transcript after Esc; its end:\n%s", tr[max(0, len(tr)-6000):])
		}
	}
	if got := onlyClaudeSession(t, r.sessions(false)); got.Phase != "active" {
		t.Fatalf("a hook recorded the cancel (phase %s): the sweep has nothing to prove", got.Phase)
	}
	// No hook fired: status (which sweeps) learns the cancel from the transcript.
	var got sweep.Row
	waitFor(t, "status to show the cancelled turn over", 90*time.Second, func() bool {
		got = onlyClaudeSession(t, r.sessions(true))
		return got.Phase == "idle"
	})
	if got.Liveness != "alive" || got.Turns != 2 || got.EndReason != "" {
		t.Fatalf("after Esc: %+v", got)
	}

	// The cancelled prompt is back in the input: Ctrl-C clears it.
	tm.keys("C-c")
	tm.prompt("/exit")
	got = r.waitSession("the session ended by /exit", 2*time.Minute, func(s sweep.Row) bool { return s.Phase == "ended" })
	if got.EndReason != "session-end" || got.Interrupted || got.Turns != 2 {
		t.Errorf("after /exit: %+v", got)
	}
	waitExited(t, pid, 90*time.Second)
	r.checkClean()
}

// TestClaudeTUIKilled kills Claude Code's TUI with SIGKILL mid-turn: the
// next sweep ends the session as interrupted.
func TestClaudeTUIKilled(t *testing.T) {
	t.Parallel()
	mock := mockllm.NewAnthropic(t)
	r := claudeRepo(t, mock)
	tm, pid := claudeTUI(t, r)
	tm.prompt("think hard [[hold]]")
	select {
	case <-mock.Held():
	case <-time.After(3 * time.Minute):
		t.Fatal("the mock never held the turn")
	}
	s := r.waitSession("the held turn active", 90*time.Second, func(s sweep.Row) bool { return s.Turns == 1 && s.Phase == "active" })
	if s.Owner == nil || s.Owner.PID != pid {
		t.Fatalf("owner %+v, want the claude process %d", s.Owner, pid)
	}
	signal(t, pid, syscall.SIGKILL)
	// A sweep ends the session once the kernel has the process gone: on a
	// loaded machine its threads can take minutes to exit after the
	// leader died, and until then it is, rightly, not dead to tether.
	var got sweep.Row
	waitFor(t, "a sweep to end the killed TUI's session", 4*time.Minute, func() bool {
		r.sweep("run")
		got = onlyClaudeSession(t, r.sessions(false))
		return got.Phase != "active"
	})
	if got.Phase != "ended" || got.EndReason != "interrupted" || !got.Interrupted {
		t.Errorf("after kill -9 of the TUI and a sweep: %+v", got)
	}
	if st, _, ok := procStat(pid); ok && st != "Z" {
		t.Errorf("the session ended while its process %d runs (state %s)", pid, st)
	}
	r.checkClean()
}

// TestClaudePrintModelError gives claude -p a model error (HTTP 400):
// Claude Code fires StopFailure, which ends the turn with the error kept,
// then ends the session; nothing was interrupted.
func TestClaudePrintModelError(t *testing.T) {
	t.Parallel()
	mock := mockllm.NewAnthropic(t)
	r := claudeRepo(t, mock)
	p := claudePrint(r, "break [[fail]]")
	if err := p.wait(4 * time.Minute); err == nil {
		t.Errorf("claude -p succeeded on a model error: %s", p.output())
	}
	got := onlyClaudeSession(t, r.sessions(false))
	if got.Phase != "ended" || got.EndReason != "session-end" || got.Interrupted || got.Turns != 1 || got.LastError == "" {
		t.Errorf("after a model error: %+v", got)
	}
	r.checkClean()
}
