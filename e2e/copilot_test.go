//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetherdev/tether/internal/mockllm"
	"github.com/tetherdev/tether/sweep"
)

// copilotConfigHeader starts the config.json Copilot CLI 1.0.102 writes:
// JSON with comments.
const copilotConfigHeader = "// User settings belong in settings.json.\n// This file is managed automatically.\n"

// copilotBins installs Copilot CLI 1.0.102 and unpacks its package once
// into the cache beside it (COPILOT_PKG_CACHE_HOME, returned): the first
// run of the npm loader does that, which takes seconds and must not race.
func copilotBins(t *testing.T) (bins, pkgCache string) {
	t.Helper()
	bins = npmCLI(t, "@github/copilot", "1.0.102")
	pkgCache = filepath.Join(filepath.Dir(filepath.Dir(bins)), "copilot-pkg-cache")
	once(t, pkgCache, func() error {
		cmd := exec.Command(filepath.Join(bins, "copilot"), "--version")
		cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + bins + ":/usr/bin:/bin", "COPILOT_PKG_CACHE_HOME=" + pkgCache, "COPILOT_AUTO_UPDATE=false"}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("copilot --version (unpacking): %w\n%s", err, out)
		}
		return nil
	})
	return bins, pkgCache
}

// copilotRepo is a scratch repository with tether's Copilot CLI hooks,
// the CLI running offline against a Chat Completions mock (its
// bring-your-own-key mode). With trusted, the repository is in
// trustedFolders of ~/.copilot/config.json, written as Copilot writes it
// (with comments); else Copilot loads none of the repository's hooks.
func copilotRepo(t *testing.T, trusted bool) (*repo, *mockllm.Server) {
	t.Helper()
	bins, pkgCache := copilotBins(t)
	var mock *mockllm.Server
	r := newRepo(t, func(r *repo) {
		mock = mockllm.NewChat(t, r.Dir)
		r.addPath(bins)
		r.setenv("COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL="+mock.URL+"/v1", "COPILOT_PROVIDER_API_KEY=dummy",
			"COPILOT_MODEL=gpt-4.1", "COPILOT_PKG_CACHE_HOME="+pkgCache, "COPILOT_AUTO_UPDATE=false")
		if !trusted {
			return
		}
		dir := filepath.Join(r.Home, ".copilot")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		cfg := copilotConfigHeader + "{\n  \"trustedFolders\": [\n    \"" + r.Dir + "\"\n  ]\n}\n"
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}, "--agent", "copilot")
	r.onFailure(func() string {
		var b strings.Builder
		logs, _ := filepath.Glob(filepath.Join(r.Home, ".copilot", "logs", "*.log"))
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			b.WriteString("copilot log " + l + ":\n" + tail(string(data), 4000) + "\n")
		}
		return b.String()
	})
	return r, mock
}

// tail is the end of s, at most n bytes.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// copilotPrint starts `copilot -p PROMPT --output-format json` with every
// tool allowed, as its non-interactive mode needs.
func copilotPrint(r *repo, prompt string, extra ...string) *proc {
	return r.start("copilot", append([]string{"-p", prompt, "--output-format", "json", "--allow-all-tools"}, extra...)...)
}

// copilotSession is the session whose id is id, failing when there is
// none.
func copilotSession(t *testing.T, rows []sweep.Row, id string) sweep.Row {
	t.Helper()
	for _, s := range rows {
		if s.ID == id {
			if s.Agent != "copilot" {
				t.Fatalf("session %s recorded for %s", id, s.Agent)
			}
			return s
		}
	}
	t.Fatalf("no session %s in %+v", id, rows)
	return sweep.Row{}
}

// copilotResultID is the session id in the result line `copilot -p
// --output-format json` prints last.
func copilotResultID(t *testing.T, out string) string {
	t.Helper()
	for line := range strings.SplitSeq(out, "\n") {
		if !strings.HasPrefix(line, `{"type":"result"`) {
			continue
		}
		if _, rest, ok := strings.Cut(line, `"sessionId":"`); ok {
			if id, _, ok := strings.Cut(rest, `"`); ok {
				return id
			}
		}
	}
	t.Fatalf("no result line with a sessionId in:\n%s", out)
	return ""
}

// runCopilot runs copilot -p to its end and returns the session id it
// reports.
func runCopilot(t *testing.T, r *repo, prompt string, extra ...string) string {
	t.Helper()
	p := copilotPrint(r, prompt, extra...)
	if err := p.wait(2 * time.Minute); err != nil {
		t.Fatalf("copilot -p %q: %v\n%s", prompt, err, p.output())
	}
	return copilotResultID(t, p.output())
}

// copilotHeld starts copilot -p with a prompt that holds its turn, and
// returns once the mock holds the stream and the turn is recorded.
func copilotHeld(t *testing.T, r *repo, mock *mockllm.Server, prompt string) (*proc, sweep.Row) {
	t.Helper()
	p := copilotPrint(r, prompt)
	waitHeld(t, mock)
	return p, r.waitSession("the held turn recorded", time.Minute, func(s sweep.Row) bool { return s.Phase == "active" })
}

// copilotAgent is the Copilot CLI process below root: the native binary
// the npm loader starts, whose main thread names it.
func copilotAgent(t *testing.T, root int) int {
	t.Helper()
	return findProc(t, root, "MainThread", time.Minute)
}

// Without folder trust Copilot CLI loads none of the repository's hooks
// and doctor says so; --trust-folder makes them run for one session.
func TestCopilotFolderTrust(t *testing.T) {
	t.Parallel()
	r, mock := copilotRepo(t, false)
	runCopilot(t, r, "say hi")
	if !mock.Saw("say hi") {
		t.Fatal("the prompt did not reach the mock")
	}
	if rows := r.sessions(false); len(rows) != 0 {
		t.Fatalf("an untrusted folder's hooks ran: %+v", rows)
	}
	// Copilot has written its config.json by now, comments and all:
	// doctor reads it, and says what is wrong.
	if cfg, err := os.ReadFile(filepath.Join(r.Home, ".copilot", "config.json")); err != nil || !strings.HasPrefix(string(cfg), "//") {
		t.Fatalf("Copilot's config.json: %q, %v", cfg, err)
	}
	out, err := r.command("tether-sweep", "doctor").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Copilot CLI does not trust this folder") || strings.Contains(string(out), "cannot read") {
		t.Fatalf("doctor in an untrusted folder: %v\n%s", err, out)
	}

	id := runCopilot(t, r, "say hi again", "--trust-folder")
	s := copilotSession(t, r.sessions(false), id)
	if s.Phase != "ended" || s.EndReason != "session-end" || s.Turns != 1 || s.LastPrompt != "say hi again" {
		t.Errorf("a --trust-folder session: %+v", s)
	}
}

// copilot -p: a plain turn, a write turn and its commit, a resume.
func TestCopilotPrintTurns(t *testing.T) {
	t.Parallel()
	r, mock := copilotRepo(t, true)

	id := runCopilot(t, r, "say hello")
	if !mock.Saw("say hello") {
		t.Fatal("the prompt did not reach the mock")
	}
	s := copilotSession(t, r.sessions(false), id)
	if s.Phase != "ended" || s.EndReason != "session-end" || s.Interrupted || s.Turns != 1 || s.LastPrompt != "say hello" || !s.Resumable {
		t.Errorf("after a clean -p turn: %+v", s)
	}
	if s.Owner == nil || s.Owner.Name != "MainThread" {
		t.Errorf("owner %+v, want Copilot's native binary (MainThread)", s.Owner)
	}

	// A write turn, then a commit of what it wrote: the note on HEAD names
	// the checkpoint, which holds the prompt and the transcript slice.
	wid := runCopilot(t, r, "write it [[write a.txt]]")
	r.commitWritten("a.txt")
	show := r.show("HEAD", false)
	if !strings.Contains(show, "write it [[write a.txt]]") || !strings.Contains(show, "session "+wid[:8]+" (copilot)") {
		t.Errorf("show HEAD lacks the write turn's session or prompt:\n%s", show)
	}
	if strings.Contains(show, "say hello") || strings.Contains(show, id[:8]) {
		t.Errorf("the commit links the plain turn, which changed nothing:\n%s", show)
	}
	transcript := r.show("HEAD", true)
	// Copilot's events.jsonl: the prompt, the create call and its result.
	for _, want := range []string{`"type":"user.message"`, "write it [[write a.txt]]", `"toolName":"create"`, mockllm.Reply} {
		if !strings.Contains(transcript, want) {
			t.Errorf("the checkpoint's transcript lacks %q:\n%s", want, tail(transcript, 3000))
		}
	}

	resumeCopilot(t, r, id, "and again")
	r.checkClean()
}

// resumeCopilot checks that resume --print gives Copilot's own command
// for session id, which has taken one turn, and runs it with prompt: it
// takes the second turn of the same session, which ends cleanly.
func resumeCopilot(t *testing.T, r *repo, id, prompt string) {
	t.Helper()
	if out := r.sweep("resume", "--print", id[:8]); !strings.Contains(out, "copilot --resume="+id) {
		t.Fatalf("resume --print: %q", out)
	}
	if got := runCopilot(t, r, prompt, "--resume="+id); got != id {
		t.Fatalf("copilot --resume=%s ran session %s", id, got)
	}
	s := copilotSession(t, r.sessions(false), id)
	if s.Phase != "ended" || s.EndReason != "session-end" || s.Turns != 2 || s.LastPrompt != prompt {
		t.Errorf("session %s, resumed: %+v", id, s)
	}
}

// A model error in -p: the turn fails with the API's message in
// last_error, and Copilot ends its session; nothing crashed, nothing was
// interrupted.
func TestCopilotPrintModelError(t *testing.T) {
	t.Parallel()
	r, _ := copilotRepo(t, true)
	p := copilotPrint(r, "break [[fail]]")
	if err := p.wait(2 * time.Minute); err == nil {
		t.Errorf("copilot -p exited 0 after a model error:\n%s", p.output())
	}
	s := copilotSession(t, r.sessions(false), copilotResultID(t, p.output()))
	if !strings.Contains(s.LastError, "mock failure (MOCK_FAIL)") || s.Phase != "ended" || s.EndReason != "session-end" || s.Interrupted {
		t.Errorf("after a model error: %+v", s)
	}
	r.checkClean()
}

// kill -9 in the first turn: interrupted at the next sweep, its
// transcript (derived: agentStop never came) in the checkpoint, and
// Copilot resumes it.
func TestCopilotPrintKill(t *testing.T) {
	t.Parallel()
	r, mock := copilotRepo(t, true)
	p, s := copilotHeld(t, r, mock, "take your time [[hold]]")
	agentPID := copilotAgent(t, p.Cmd.Process.Pid)
	if s.Owner == nil || s.Owner.PID != agentPID || s.Liveness != "alive" {
		t.Fatalf("owner %+v (%s), want the copilot process %d", s.Owner, s.Liveness, agentPID)
	}
	// Copilot writes the prompt into its events.jsonl a moment after its
	// hook and the request (CI, under load, killed it before): this is the
	// kill of a turn its transcript holds.
	events := filepath.Join(r.Home, ".copilot", "session-state", s.ID, "events.jsonl")
	waitFor(t, "the held turn in copilot's events.jsonl", 90*time.Second, func() bool {
		b, _ := os.ReadFile(events)
		return strings.Contains(string(b), `"type":"user.message"`)
	})
	signal(t, agentPID, syscall.SIGKILL)
	p.wait(30 * time.Second)
	s = r.sweepUntilEnded(s.ID)
	if s.Phase != "ended" || s.EndReason != "interrupted" || !s.Interrupted || !s.Resumable || len(s.Checkpoints) != 1 {
		t.Fatalf("after kill -9 and a sweep: %+v", s)
	}
	transcript := r.show(s.Checkpoints[0], true)
	if !strings.Contains(transcript, "take your time [[hold]]") || !strings.Contains(transcript, `"type":"user.message"`) {
		t.Errorf("the interrupted turn's checkpoint lacks its transcript:\n%s", tail(transcript, 3000))
	}
	resumeCopilot(t, r, s.ID, "go on")
	r.checkClean()
}

// SIGINT mid-turn in -p: Copilot ends its session without agentStop
// (sessionEnd "complete") and writes an abort into events.jsonl at the
// same time. When the hook at sessionEnd already reads the abort, the turn
// was cancelled and the session ended cleanly; when Copilot has not
// written it yet (seen on a loaded machine), the session ends mid-turn,
// and the sweep, once copilot is gone, finds the abort and settles the
// record the same way: one record whichever won the race.
func TestCopilotPrintSIGINT(t *testing.T) {
	t.Parallel()
	r, mock := copilotRepo(t, true)
	p, s := copilotHeld(t, r, mock, "stop me [[hold]]")
	signal(t, copilotAgent(t, p.Cmd.Process.Pid), syscall.SIGINT)
	p.wait(time.Minute)
	s = r.waitSession("the session ended", 30*time.Second, func(row sweep.Row) bool { return row.ID == s.ID && row.Phase == "ended" })
	s = sessionByID(t, r.sessions(true), s.ID)
	if s.EndReason != "session-end" || s.Interrupted || s.Turns != 1 || s.EndNote != "copilot: complete" || !s.Resumable {
		t.Errorf("after SIGINT mid-turn: %+v; want the turn cancelled and the session ended by copilot", s)
	}
	t.Logf("SIGINT mid-turn recorded as %s (interrupted %v), %s", s.EndReason, s.Interrupted, r.raceWinner())
	r.checkClean()
}

// The TUI: the folder trusted from its own dialog (Copilot writes that
// into its config.json, with comments, which doctor reads), a turn, a
// turn cancelled and then /exit: a clean end, not an interruption.
// Copilot CLI 1.0.102 cancels a running turn on Ctrl-C; Esc, once or
// twice, does not stop it.
func TestCopilotTUI(t *testing.T) {
	t.Parallel()
	r, mock := copilotRepo(t, false)
	tm := newTmux(r, "copilot")
	tm.waitText("Do you trust the files in this folder?", 2*time.Minute)
	tm.text("2") // Yes, and remember this folder for future sessions
	tm.keys("Enter")
	tm.waitText("has been added to trusted folders", time.Minute)

	tm.text("say hello")
	tm.keys("Enter")
	s := r.waitSession("the TUI's turn ended", time.Minute, func(s sweep.Row) bool { return s.Phase == "idle" && s.Turns == 1 })
	agentPID := copilotAgent(t, tm.pid())
	if s.Owner == nil || s.Owner.PID != agentPID || s.LastPrompt != "say hello" {
		t.Errorf("after a TUI turn: %+v, want owner %d", s, agentPID)
	}

	tm.text("wait for me [[hold]]")
	tm.keys("Enter")
	r.waitSession("the held turn recorded", time.Minute, func(row sweep.Row) bool { return row.ID == s.ID && row.Phase == "active" })
	waitHeld(t, mock)
	tm.keys("C-c")
	tm.waitText("Operation cancelled by user", 30*time.Second)
	// No hook fires on a cancel: status's sweep reads it from events.jsonl.
	waitFor(t, "the cancelled turn ended (status)", 30*time.Second, func() bool {
		return copilotSession(t, r.sessions(true), s.ID).Phase == "idle"
	})
	if s := copilotSession(t, r.sessions(false), s.ID); s.Liveness != "alive" || s.Turns != 2 {
		t.Errorf("after the cancel: %+v", s)
	}

	tm.text("/exit")
	tm.waitText("❯ /exit", 30*time.Second)
	tm.keys("Enter")
	waitExited(t, agentPID, 3*time.Minute)
	s = r.waitSession("the session ended", time.Minute, func(row sweep.Row) bool { return row.ID == s.ID && row.Phase == "ended" })
	if s.EndReason != "session-end" || s.Interrupted || s.Turns != 2 {
		t.Errorf("/exit after a cancelled turn: %+v", s)
	}
	r.checkClean()
}

// kill -9 of the TUI mid-turn: interrupted at the next sweep.
func TestCopilotTUIKill(t *testing.T) {
	t.Parallel()
	r, mock := copilotRepo(t, true)
	tm := newTmux(r, "copilot")
	tm.waitText("/ commands", 2*time.Minute)
	tm.text("take your time [[hold]]")
	tm.keys("Enter")
	waitHeld(t, mock)
	s := r.waitSession("the held turn recorded", time.Minute, func(s sweep.Row) bool { return s.Phase == "active" })
	agentPID := copilotAgent(t, tm.pid())
	signal(t, agentPID, syscall.SIGKILL)
	s = r.sweepUntilEnded(s.ID)
	if s.Phase != "ended" || s.EndReason != "interrupted" || !s.Interrupted || !s.Resumable {
		t.Errorf("after kill -9 of the TUI and a sweep: %+v", s)
	}
	r.checkClean()
}
