//go:build e2e

package e2e

import (
	"errors"
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

// Gemini CLI, the version docs/agents.md says is verified.
const (
	geminiPkg     = "@google/gemini-cli"
	geminiVersion = "0.61.0"
	// geminiWait bounds every wait on the CLI: a node start on a busy
	// two-core machine takes seconds.
	geminiWait = 3 * time.Minute
)

// geminiSettings is the user's ~/.gemini/settings.json: API-key auth
// against the mock, one attempt per model call, nothing phoned home.
const geminiSettings = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true, "maxAttempts": 1},
  "telemetry": {"enabled": false},
  "privacy": {"usageStatisticsEnabled": false}
}
`

// newGeminiRepo is a scratch repository with tether installed for Gemini
// CLI, the CLI on PATH talking to a fresh mock and, when trusted, the
// repository in ~/.gemini/trustedFolders.json.
func newGeminiRepo(t *testing.T, trusted bool) (*repo, *mockllm.Server) {
	t.Helper()
	bins := npmCLI(t, geminiPkg, geminiVersion)
	mock := mockllm.NewGemini(t)
	r := newRepo(t, func(r *repo) {
		r.addPath(bins)
		r.setenv("GEMINI_API_KEY=dummy", "GOOGLE_GEMINI_BASE_URL="+mock.URL, "NO_BROWSER=true")
		geminiWriteHome(r, "settings.json", geminiSettings)
		if trusted {
			geminiTrust(r)
		}
	}, "--agent", "gemini")
	return r, mock
}

// geminiTrust trusts the repository as Gemini CLI's "Trust folder" does.
func geminiTrust(r *repo) {
	r.t.Helper()
	geminiWriteHome(r, "trustedFolders.json", fmt.Sprintf("{%q: \"TRUST_FOLDER\"}\n", r.Dir))
}

func geminiWriteHome(r *repo, name, content string) {
	r.t.Helper()
	path := filepath.Join(r.Home, ".gemini", name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// geminiPrint runs `gemini ARGS... -p PROMPT --approval-mode yolo` to its
// end and returns its output; it fails the test unless gemini exits 0.
func geminiPrint(r *repo, prompt string, args ...string) string {
	r.t.Helper()
	p := r.start("gemini", append(args, "-p", prompt, "--approval-mode", "yolo")...)
	if err := p.wait(geminiWait); err != nil {
		r.t.Fatalf("gemini -p %q: %v\n%s", prompt, err, p.output())
	}
	return p.output()
}

// geminiAgent waits for the node process Gemini CLI's launcher (pid
// launcher) re-spawns to run the agent, and returns its PID.
func geminiAgent(t *testing.T, launcher int) int {
	t.Helper()
	var agent int
	waitFor(t, fmt.Sprintf("the agent process below gemini's launcher %d", launcher), geminiWait, func() bool {
		for _, c := range childrenOf()[launcher] {
			if procName(c) == "node" {
				agent = c
				return true
			}
		}
		return false
	})
	return agent
}

// geminiCheckOwner fails the test unless the session's recorded owner is
// agent, the launcher's child, and not the launcher itself.
func geminiCheckOwner(t *testing.T, s sweep.Row, launcher, agent int) {
	t.Helper()
	if s.Owner == nil || s.Owner.PID != agent || s.Owner.Name != "node" {
		t.Fatalf("owner %+v, want the agent process %d (node) that launcher %d re-spawned", s.Owner, agent, launcher)
	}
	if _, ppid, _ := procStat(agent); ppid != launcher {
		t.Fatalf("agent %d has parent %d, want the launcher %d", agent, ppid, launcher)
	}
}

// geminiHeld waits until the mock holds a turn's stream open.
func geminiHeld(t *testing.T, mock *mockllm.Server) {
	t.Helper()
	select {
	case <-mock.Held():
	case <-time.After(geminiWait):
		t.Fatalf("gemini never reached the model with the [[hold]] turn")
	}
}

// geminiHeldTurn starts `gemini -p` on a turn the mock holds open, waits
// until it is recorded, checks its owner, and returns the launcher's
// process and the agent's PID.
func geminiHeldTurn(r *repo, mock *mockllm.Server) (*proc, int) {
	r.t.Helper()
	p := r.start("gemini", "-p", "wait [[hold]]", "--approval-mode", "yolo")
	geminiHeld(r.t, mock)
	launcher := p.Cmd.Process.Pid
	agent := geminiAgent(r.t, launcher)
	s := r.waitSession("the turn to be recorded", geminiWait, func(s sweep.Row) bool { return s.Phase == "active" })
	geminiCheckOwner(r.t, s, launcher, agent)
	return p, agent
}

// geminiOnly is the one session of the repository, ended or not.
func geminiOnly(r *repo, sweepFirst bool) sweep.Row {
	r.t.Helper()
	ss := r.sessions(sweepFirst)
	if len(ss) != 1 || ss[0].Agent != "gemini" {
		r.t.Fatalf("sessions %+v, want one of gemini", ss)
	}
	return ss[0]
}

// A plain turn, a write turn and a commit, and a resume, in -p mode.
func TestGeminiPrint(t *testing.T) {
	t.Parallel()
	r, mock := newGeminiRepo(t, true)

	p := r.start("gemini", "-p", "say hi", "--approval-mode", "yolo")
	if err := p.wait(geminiWait); err != nil || !strings.Contains(p.output(), mockllm.Reply) || !mock.Saw("say hi") {
		t.Fatalf("gemini did not answer through the mock: %v\n%s", err, p.output())
	}
	s := geminiOnly(r, false)
	if s.Phase != "ended" || s.EndReason != "session-end" || s.Interrupted || s.Turns != 1 || s.LastPrompt != "say hi" {
		t.Fatalf("after a plain turn: %+v, want ended by the agent (session-end), 1 turn", s)
	}
	if s.EndNote != "gemini: exit" || !s.Resumable {
		t.Errorf("end note %q, resumable %v: want gemini's own reason (exit), resumable", s.EndNote, s.Resumable)
	}
	if s.Owner == nil || s.Owner.Name != "node" || s.Owner.PID == p.Cmd.Process.Pid {
		t.Errorf("owner %+v, want gemini's node process, not its launcher %d", s.Owner, p.Cmd.Process.Pid)
	}

	// The write turn: Gemini CLI's own write_file tool, offered to the model.
	geminiPrint(r, "create it [[write a.txt]]")
	if !mock.Saw(`"name":"write_file"`) {
		t.Error("no request offered the write_file tool")
	}
	r.commitWritten("a.txt")
	if show := r.show("HEAD", false); !strings.Contains(show, "create it [[write a.txt]]") {
		t.Errorf("show HEAD has not the prompt:\n%s", show)
	}
	tr := r.show("HEAD", true)
	for _, want := range []string{"create it [[write a.txt]]", "write_file", "written by the agent"} {
		if !strings.Contains(tr, want) {
			t.Errorf("the checkpoint's transcript lacks %q:\n%s", want, tr)
		}
	}

	r.checkClean()
}

// kill -9 of the agent mid-turn: nothing fires; the sweep finds the owner
// gone and ends the session interrupted. resume --print gives gemini's own
// command, and running it revives the same session.
func TestGeminiPrintKill9(t *testing.T) {
	t.Parallel()
	r, mock := newGeminiRepo(t, true)

	p, agent := geminiHeldTurn(r, mock)

	signal(t, agent, syscall.SIGKILL)
	waitGone(t, agent, geminiWait)
	p.wait(geminiWait) // the launcher follows its child
	if s := geminiOnly(r, false); s.Phase != "active" {
		t.Fatalf("before any sweep: %+v, want still active (nothing fired)", s)
	}
	s := geminiOnly(r, true)
	if s.Phase != "ended" || s.EndReason != "interrupted" || !s.Interrupted || !s.Resumable {
		t.Fatalf("after the sweep: %+v, want ended, interrupted, resumable", s)
	}

	printed := r.sweep("resume", s.ID[:8], "--print")
	want := fmt.Sprintf("cd %s && gemini --resume %s\n", r.Dir, s.ID)
	if printed != want {
		t.Fatalf("resume --print: %q, want %q", printed, want)
	}
	// The printed command, with a prompt, in -p mode.
	geminiPrint(r, "carry on", "--resume", s.ID)
	s = geminiOnly(r, false)
	if s.Turns != 2 || s.LastPrompt != "carry on" || s.Phase != "ended" || s.EndReason != "session-end" || s.Interrupted {
		t.Fatalf("after resuming: %+v, want the same session revived for a 2nd turn and ended by the agent", s)
	}
	r.checkClean()
}

// SIGINT mid-turn: Gemini CLI fires SessionEnd (reason exit) and no
// AfterAgent. A turn cut that way is not a clean end: tether records the
// session ended interrupted, with gemini's own words as the note.
func TestGeminiPrintSIGINT(t *testing.T) {
	t.Parallel()
	r, mock := newGeminiRepo(t, true)

	p, agent := geminiHeldTurn(r, mock)

	signal(t, agent, syscall.SIGINT)
	p.wait(geminiWait)
	s := geminiOnly(r, false) // no sweep: what the hook recorded
	if s.Phase != "ended" || s.EndReason != "interrupted" || !s.Interrupted || s.EndNote != "gemini: exit" {
		t.Fatalf("after SIGINT: %+v, want ended interrupted by gemini's SessionEnd (exit)", s)
	}
	if s.Turns != 1 || !s.Resumable {
		t.Errorf("after SIGINT: %d turns, resumable %v", s.Turns, s.Resumable)
	}
	r.checkClean()
}

// Without folder trust Gemini CLI runs no hook: -p exits 55 and nothing is
// recorded; doctor says exactly what to do, and once done, it records.
func TestGeminiUntrustedFolder(t *testing.T) {
	t.Parallel()
	r, _ := newGeminiRepo(t, false)

	p := r.start("gemini", "-p", "say hi", "--approval-mode", "yolo")
	err := p.wait(geminiWait)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 55 {
		t.Fatalf("gemini -p in an untrusted folder: %v, want exit status 55\n%s", err, p.output())
	}
	if ss := r.sessions(false); len(ss) != 0 {
		t.Fatalf("sessions recorded in an untrusted folder: %+v", ss)
	}

	out, err := r.command("tether-sweep", "doctor").CombinedOutput()
	trusted := filepath.Join(r.Home, ".gemini", "trustedFolders.json")
	for _, want := range []string{
		"Gemini CLI does not trust this folder, so it runs none of its hooks",
		fmt.Sprintf("%q: \"TRUST_FOLDER\"", r.Dir),
		trusted,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("doctor does not say %q:\n%s", want, out)
		}
	}
	if err == nil {
		t.Errorf("doctor exits 0 while Gemini CLI will run no hook:\n%s", out)
	}

	// Doing what doctor says: Gemini CLI runs the hooks.
	geminiTrust(r)
	geminiPrint(r, "say hi")
	if s := geminiOnly(r, false); s.Phase != "ended" || s.Turns != 1 || s.EndReason != "session-end" {
		t.Fatalf("once trusted: %+v", s)
	}
	r.checkClean()
}

// geminiTUI starts command (gemini's TUI, or something running it) in
// tmux and waits for its input box.
func geminiTUI(r *repo, command string) *tmuxSession {
	r.t.Helper()
	tm := newTmux(r, command)
	geminiReady(tm)
	return tm
}

// geminiReady waits until the TUI shows its empty input box and has
// stopped redrawing: keys typed while it starts or resumes a session
// are lost.
func geminiReady(tm *tmuxSession) {
	tm.t.Helper()
	last := ""
	waitFor(tm.t, "gemini's input box, settled", geminiWait, func() bool {
		pane := tm.capture()
		settled := pane == last && strings.Contains(pane, "Type your message")
		last = pane
		if settled {
			return true
		}
		time.Sleep(400 * time.Millisecond)
		return false
	})
}

// geminiSend types a prompt into the TUI once it is ready (typeWhole:
// a resumed session can drop what is typed while it still loads its
// history, though its pane looks settled; seen once in CI, under load), and
// submits it. It can drop the Enter too (the prompt stays in the input
// box): until the box is empty again, Enter is pressed anew; on an empty
// box Gemini ignores it.
func geminiSend(tm *tmuxSession, prompt string) {
	tm.t.Helper()
	tm.typeWhole(prompt, func() { geminiReady(tm) })
	tm.keys("Enter")
	for range 5 {
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if strings.Contains(tm.capture(), "Type your message") {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		tm.keys("Enter")
	}
}

// geminiPaneQuiet fails the test if tether-hook said anything on the
// pane, where Gemini CLI shows a hook's stderr (its failures begin
// "tether-hook: "). Gemini CLI's own words about the hooks it runs are
// its business.
func geminiPaneQuiet(t *testing.T, tm *tmuxSession) {
	t.Helper()
	if pane := tm.capture(); strings.Contains(pane, "tether-hook: ") {
		t.Errorf("tether-hook's words on Gemini CLI's pane:\n%s", pane)
	}
}

// The TUI: a turn; a turn whose hooks fail shows nothing of tether's; Esc
// mid-turn fires AfterAgent, so the session is idle, not active; /quit
// ends it cleanly, not interrupted.
func TestGeminiTUI(t *testing.T) {
	t.Parallel()
	r, mock := newGeminiRepo(t, true)
	tm := geminiTUI(r, "gemini")

	geminiSend(tm, "say hi")
	s := r.waitSession("the TUI's turn to end", geminiWait, func(s sweep.Row) bool { return s.Phase == "idle" && s.Turns == 1 })
	launcher := tm.pid()
	geminiCheckOwner(t, s, launcher, geminiAgent(t, launcher))

	// A turn whose hooks fail (the store's lock directory is not one):
	// Gemini CLI carries on and shows nothing of tether's, which would
	// reach the pane through the hook's stderr.
	locks := filepath.Join(r.Dir, ".git", "tether", "locks")
	if err := os.Rename(locks, locks+".aside"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(locks, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	geminiSend(tm, "say again")
	waitFor(t, "gemini's answer to a turn whose hooks failed", geminiWait, func() bool {
		return strings.Count(tm.capture(), mockllm.Reply) >= 2
	})
	geminiPaneQuiet(t, tm)
	if b, _ := os.ReadFile(filepath.Join(r.Dir, ".git", "tether", "log", "tether.log")); !strings.Contains(string(b), "record turn-start") {
		t.Fatalf("the failed hook left no line in the log:\n%s", b)
	}
	if err := os.Remove(locks); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(locks+".aside", locks); err != nil {
		t.Fatal(err)
	}

	geminiSend(tm, "wait [[hold]]")
	geminiHeld(t, mock)
	r.waitSession("the held turn to be recorded", geminiWait, func(s sweep.Row) bool { return s.Phase == "active" && s.Turns == 2 })
	tm.keys("Escape")
	tm.waitText("Request cancelled", geminiWait)
	s = r.waitSession("Esc to end the turn", geminiWait, func(s sweep.Row) bool { return s.Turns == 2 && s.Phase != "active" })
	if s.Phase != "idle" {
		t.Fatalf("after Esc: %+v, want idle", s)
	}

	geminiSend(tm, "/quit")
	s = r.waitSession("/quit to end the session", geminiWait, func(s sweep.Row) bool { return s.Phase == "ended" })
	if s.EndReason != "session-end" || s.Interrupted || s.Turns != 2 {
		t.Fatalf("after /quit: %+v, want a clean end (session-end), not interrupted", s)
	}
	geminiPaneQuiet(t, tm)
	r.checkClean()
}

// kill -9 of the TUI's agent mid-turn: interrupted at the next sweep.
// `tether-sweep resume` then runs gemini attached to the terminal, and
// the session it revives stays resumable by gemini itself afterwards:
// a resume started with a piped stdout would have run headless and
// destroyed it.
func TestGeminiTUIKill9ThenResume(t *testing.T) {
	t.Parallel()
	r, mock := newGeminiRepo(t, true)
	tm := geminiTUI(r, "gemini")

	geminiSend(tm, "wait [[hold]]")
	geminiHeld(t, mock)
	s := r.waitSession("the held turn to be recorded", geminiWait, func(s sweep.Row) bool { return s.Phase == "active" })
	launcher := tm.pid()
	agent := geminiAgent(t, launcher)
	geminiCheckOwner(t, s, launcher, agent)
	signal(t, agent, syscall.SIGKILL)
	waitGone(t, agent, geminiWait)
	s = geminiOnly(r, true)
	if s.Phase != "ended" || s.EndReason != "interrupted" || !s.Interrupted {
		t.Fatalf("after kill -9 and a sweep: %+v, want ended interrupted", s)
	}
	if list := r.sweep("resume"); !strings.Contains(list, s.ID[:8]) {
		t.Errorf("resume does not list the interrupted session:\n%s", list)
	}

	rt := geminiTUI(r, "tether-sweep resume "+s.ID[:8])
	geminiSend(rt, "carry on")
	s = r.waitSession("the resumed session's turn to end", geminiWait, func(s sweep.Row) bool {
		return s.Turns == 2 && s.Phase == "idle"
	})
	if s.LastPrompt != "carry on" {
		t.Fatalf("after the resumed turn: %+v", s)
	}
	geminiSend(rt, "/quit")
	s = r.waitSession("/quit to end the resumed session", geminiWait, func(s sweep.Row) bool { return s.Phase == "ended" })
	if s.EndReason != "session-end" || s.Interrupted || !s.Resumable {
		t.Fatalf("after /quit: %+v, want a clean end, still resumable", s)
	}
	geminiPaneQuiet(t, rt)

	// Gemini CLI itself still has the session.
	geminiPrint(r, "once more", "--resume", s.ID)
	s = geminiOnly(r, false)
	if s.Turns != 3 || s.LastPrompt != "once more" || s.EndReason != "session-end" {
		t.Fatalf("after gemini --resume: %+v, want the same session's 3rd turn", s)
	}
	r.checkClean()
}

// A model error (HTTP 400) in -p: gemini exits 1 and fires SessionEnd
// (exit), never AfterAgent, and writes no error into its transcript. All
// tether can know is that the turn never finished: the session ends
// interrupted, resumable, not as a clean end.
func TestGeminiPrintModelError(t *testing.T) {
	t.Parallel()
	r, mock := newGeminiRepo(t, true)

	p := r.start("gemini", "-p", "boom [[fail]]", "--approval-mode", "yolo")
	err := p.wait(geminiWait)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !mock.Saw("boom [[fail]]") {
		t.Fatalf("gemini -p on a model error: %v, want exit status 1 after the model saw the prompt\n%s", err, p.output())
	}
	s := geminiOnly(r, false)
	if s.Phase != "ended" || s.EndReason != "interrupted" || !s.Interrupted || s.EndNote != "gemini: exit" || !s.Resumable {
		t.Fatalf("after a model error: %+v, want ended interrupted by gemini's SessionEnd (exit), resumable", s)
	}
	r.checkClean()
}
