//go:build e2e

package e2e

import (
	"bufio"
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

const codexVersion = "0.169.0"

// codexWait is the deadline of every wait here. A loaded machine is slow:
// a TUI's first start copies Codex's binaries (about 400 MB) into
// $CODEX_HOME for its daemon. Nothing waits longer than it must.
const codexWait = 3 * time.Minute

// codexRepo is a scratch repository with tether installed for Codex
// (`install --agent codex installArgs...`), which runs offline against
// mock: a provider of its own in $CODEX_HOME/config.toml, the repository
// trusted as a project, no notify program. The app-server daemon a TUI
// starts outlives it: it is killed when the test ends.
func codexRepo(t *testing.T, mock *mockllm.Server, installArgs ...string) *repo {
	t.Helper()
	bins := npmCLI(t, "@openai/codex", codexVersion)
	r := newRepo(t, func(r *repo) {
		r.addPath(bins)
		home := filepath.Join(r.Home, ".codex")
		r.setenv("CODEX_HOME="+home, "MOCK_API_KEY=dummy")
		config := fmt.Sprintf(`model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = %q
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[projects.%q]
trust_level = "trusted"
`, mock.URL+"/v1", r.Dir)
		if err := os.MkdirAll(home, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
	}, append([]string{"--agent", "codex"}, installArgs...)...)
	t.Cleanup(func() { killBelowHome(t, r.Home) })
	return r
}

// killBelowHome kills, with SIGKILL, every process whose executable lies
// under home: Codex's app-server daemon, a copy of the binary under
// $CODEX_HOME, reparented to init when the TUI that started it ends.
func killBelowHome(t *testing.T, home string) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && strings.HasPrefix(exe, home+"/") {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// codexDaemon is the app-server daemon the TUIs of home share.
func codexDaemon(t *testing.T, home string) int {
	t.Helper()
	var pid int
	waitFor(t, "Codex's app-server daemon", codexWait, func() bool {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
				continue
			}
			exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
			argv, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if strings.HasPrefix(exe, home+"/") && strings.Contains(string(argv), "\x00--managed-daemon") {
				return true
			}
		}
		return false
	})
	return pid
}

// waitHeld waits until the mock holds a stream open: the agent is mid-turn.
func waitHeld(t *testing.T, mock *mockllm.Server) {
	t.Helper()
	select {
	case <-mock.Held():
	case <-time.After(codexWait):
		t.Fatalf("waited %s for the model's stream to be held", codexWait)
	}
}

// codexExec starts `codex exec --json [args...] PROMPT`, stdin /dev/null.
func codexExec(r *repo, prompt string, args ...string) *proc {
	return r.start("codex", append(append([]string{"exec", "--json"}, args...), prompt)...)
}

// codexAgent is the native codex process below p (npm's node wrapper
// spawns it, or becomes it on a newer node).
func codexAgent(t *testing.T, p *proc) int {
	t.Helper()
	return findProc(t, p.Cmd.Process.Pid, "codex", codexWait)
}

// onlyCodexSession is the repository's one session: Codex's hidden threads
// (the TUI's title) must not make others.
func onlyCodexSession(t *testing.T, rows []sweep.Row) sweep.Row {
	t.Helper()
	if len(rows) != 1 || rows[0].Agent != "codex" {
		t.Fatalf("want one codex session, have %+v", rows)
	}
	return rows[0]
}

// natives are the agent events tether.log recorded for session id, in
// order (its "native" names: SessionStart, UserPromptSubmit, ...).
func natives(t *testing.T, r *repo, id string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(r.Dir, ".git", "tether", "log", "tether.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var l struct{ Session, Native string }
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Session == id && l.Native != "" {
			out = append(out, l.Native)
		}
	}
	return out
}

// TestCodexTrust: Codex skips every hook nobody trusted. Installed without
// --trust, a turn records nothing and doctor says why; with --trust (never
// --dangerously-bypass-hook-trust) the same turn is recorded.
func TestCodexTrust(t *testing.T) {
	t.Parallel()
	mock := mockllm.NewResponses(t)
	r := codexRepo(t, mock)

	if err := codexExec(r, "untrusted hooks").wait(codexWait); err != nil {
		t.Fatalf("codex exec: %v", err)
	}
	if !mock.Saw("untrusted hooks") {
		t.Fatal("the prompt did not reach the mock")
	}
	if rows := r.sessions(false); len(rows) != 0 {
		t.Errorf("untrusted hooks recorded sessions: %+v", rows)
	}
	out, err := r.command("tether-sweep", "doctor").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not trusted") || !strings.Contains(string(out), "install --trust") {
		t.Errorf("doctor with untrusted hooks: %v\n%s\nwant a failure saying they are not trusted and what to run", err, out)
	}

	r.sweep("install", "--agent", "codex", "--trust")
	if err := codexExec(r, "trusted hooks").wait(codexWait); err != nil {
		t.Fatalf("codex exec: %v", err)
	}
	s := onlyCodexSession(t, r.sessions(false))
	if s.Phase != "ended" || s.EndReason != "session-end" || s.Turns != 1 || s.LastPrompt != "trusted hooks" {
		t.Errorf("after a trusted turn: %+v", s)
	}
	r.checkClean()
}

// TestCodexExecTurns: `codex exec` records a plain turn owned by the codex
// process and ended by its SessionEnd; a write turn and a commit give a
// note whose checkpoint holds the prompt and the transcript slice; `codex
// exec resume ID` revives the same session.
func TestCodexExecTurns(t *testing.T) {
	t.Parallel()
	mock := mockllm.NewResponses(t)
	r := codexRepo(t, mock, "--trust")

	// A plain turn, seen while it runs (its owner) and once it ended.
	p := codexExec(r, "say hello")
	if err := p.wait(codexWait); err != nil {
		t.Fatalf("codex exec: %v\n%s", err, p.output())
	}
	if !strings.Contains(p.output(), mockllm.Reply) || !mock.Saw("say hello") {
		t.Fatalf("the prompt did not reach the mock, or its reply did not come back: %s", p.output())
	}
	s := onlyCodexSession(t, r.sessions(false))
	if s.Phase != "ended" || s.EndReason != "session-end" || s.Interrupted || s.Turns != 1 || s.LastPrompt != "say hello" {
		t.Errorf("after a clean exec turn: %+v", s)
	}
	if s.Owner == nil || s.Owner.Name != "codex" {
		t.Errorf("owner %+v, want the codex process (kill -9 below checks it against the process tree)", s.Owner)
	}
	if got := natives(t, r, s.ID); strings.Join(got, ",") != "SessionStart,UserPromptSubmit,Stop,SessionEnd" {
		t.Errorf("events recorded %v, want SessionStart, UserPromptSubmit, Stop, SessionEnd", got)
	}
	first := s.ID

	// A turn that writes a file, then a commit of it.
	p = codexExec(r, "write it [[write a.txt]]")
	if err := p.wait(codexWait); err != nil {
		t.Fatalf("codex exec: %v\n%s", err, p.output())
	}
	r.commitWritten("a.txt")
	show := r.show("HEAD", true)
	for _, want := range []string{"write it [[write a.txt]]", "exec_command", "written by the agent"} {
		if !strings.Contains(show, want) {
			t.Errorf("show HEAD --transcript lacks %q:\n%s", want, show)
		}
	}
	if strings.Contains(show, "say hello") {
		t.Errorf("the commit links the plain turn, which changed nothing:\n%s", show)
	}

	// Resume: tether prints Codex's own command; `codex exec resume` is its
	// non-interactive form, and revives the same session.
	if got, want := strings.TrimSpace(r.sweep("resume", "--print", first)), "cd "+r.Dir+" && codex resume "+first; got != want {
		t.Errorf("resume --print = %q, want %q", got, want)
	}
	p = r.start("codex", "exec", "--json", "resume", first, "carry on")
	if err := p.wait(codexWait); err != nil {
		t.Fatalf("codex exec resume: %v\n%s", err, p.output())
	}
	rows := r.sessions(false)
	if len(rows) != 2 {
		t.Fatalf("after the resume: sessions %+v, want the two of before", rows)
	}
	s = sessionByID(t, rows, first)
	if s.Phase != "ended" || s.EndReason != "session-end" || s.Turns != 2 || s.LastPrompt != "carry on" {
		t.Errorf("the resumed session: %+v; want ended by its SessionEnd, 2 turns, last prompt \"carry on\"", s)
	}
	r.checkClean()
}

// codexHeldTurn starts `codex exec` in a repository of its own on a turn
// the mock holds open, and returns once tether records the turn, owned by
// the codex process running it (agent, checked against the process tree).
func codexHeldTurn(t *testing.T) (r *repo, p *proc, agent int) {
	t.Helper()
	mock := mockllm.NewResponses(t)
	r = codexRepo(t, mock, "--trust")
	p = codexExec(r, "hold on [[hold]]")
	waitHeld(t, mock)
	agent = codexAgent(t, p)
	s := r.waitSession("the held turn recorded", codexWait, func(s sweep.Row) bool { return s.Phase == "active" })
	if s.Owner == nil || s.Owner.PID != agent || s.Owner.Name != "codex" {
		t.Errorf("owner %+v, want the running codex, pid %d", s.Owner, agent)
	}
	return r, p, agent
}

// TestCodexExecKill9: kill -9 mid-turn leaves the session active with a
// dead owner; the next sweep ends it as interrupted.
func TestCodexExecKill9(t *testing.T) {
	t.Parallel()
	r, p, agent := codexHeldTurn(t)
	signal(t, agent, syscall.SIGKILL)
	p.wait(codexWait)
	waitGone(t, agent, codexWait)
	if s := onlyCodexSession(t, r.sessions(false)); s.Phase != "active" {
		t.Errorf("before the sweep: %+v, want still active (nothing fires on kill -9)", s)
	}
	s := onlyCodexSession(t, r.sessions(true))
	if s.Phase != "ended" || s.EndReason != "interrupted" || !s.Interrupted || s.Liveness != "dead" {
		t.Errorf("after the sweep: %+v, want ended, interrupted", s)
	}
	r.checkClean()
}

// TestCodexExecSIGINT: SIGINT mid-turn makes Codex fire Interrupt (the
// turn ends, cancelled) and SessionEnd: a clean end, not an interrupted one.
func TestCodexExecSIGINT(t *testing.T) {
	t.Parallel()
	r, p, agent := codexHeldTurn(t)
	signal(t, agent, syscall.SIGINT)
	p.wait(codexWait)
	s := onlyCodexSession(t, r.sessions(true))
	if s.Phase != "ended" || s.EndReason != "session-end" || s.Interrupted || s.PendingTurns != 0 || len(s.Checkpoints) != 1 {
		t.Errorf("after SIGINT: %+v, want ended by its SessionEnd, the turn cancelled, not interrupted", s)
	}
	if got := natives(t, r, s.ID); strings.Join(got, ",") != "SessionStart,UserPromptSubmit,Interrupt,SessionEnd" {
		t.Errorf("events recorded %v, want SessionStart, UserPromptSubmit, Interrupt, SessionEnd", got)
	}
	r.checkClean()
}

// codexTUI starts command (Codex's TUI) in tmux and waits until it is
// ready for a prompt, showing ready. The prompt box shows before the TUI
// has its thread from the daemon (the footer then names the model), and a
// resumed session's history, or its running turn, comes after that: keys
// typed before are lost.
func codexTUI(r *repo, command, ready string) *tmuxSession {
	r.t.Helper()
	tui := newTmux(r, command)
	tui.waitText("mock-model default", codexWait)
	tui.waitText(ready, codexWait)
	return tui
}

// TestCodexTUI: the TUI in its default mode, where hooks run under the
// app-server daemon it shares: the TUI owns the session, not the daemon;
// Esc ends a turn; a clean exit is not an interruption; kill -9 of the TUI
// mid-turn, while the daemon lives on, is one at the next sweep; and
// `codex resume ID`, whose first prompt joins the turn the daemon ran on,
// revives the session.
func TestCodexTUI(t *testing.T) {
	t.Parallel()
	mock := mockllm.NewResponses(t)
	r := codexRepo(t, mock, "--trust")

	// A turn, owned by the TUI.
	tui := codexTUI(r, "codex", "? for shortcuts")
	tuiPID := findProc(t, tui.pid(), "codex", codexWait)
	tui.prompt("hello tui")
	s := r.waitSession("the TUI's turn to end", codexWait, func(s sweep.Row) bool { return s.Phase == "idle" && s.Turns == 1 })
	if s.Owner == nil || s.Owner.PID != tuiPID {
		t.Errorf("owner %+v, want the TUI, pid %d (not the app-server daemon)", s.Owner, tuiPID)
	}
	id := s.ID

	// Esc mid-turn: Interrupt ends the turn; the session goes on.
	tui.prompt("hold on [[hold]] esc me")
	waitHeld(t, mock)
	r.waitSession("the held turn recorded", codexWait, func(s sweep.Row) bool { return s.Phase == "active" && s.Turns == 2 })
	tui.keys("Escape")
	s = r.waitSession("Esc to end the turn", codexWait, func(s sweep.Row) bool { return s.Phase == "idle" && s.Turns == 2 })
	if s.Interrupted || s.EndReason != "" {
		t.Errorf("after Esc: %+v, want idle", s)
	}

	// A clean exit after it: the daemon fires no SessionEnd for /quit; the
	// sweep sees the TUI gone while idle.
	tui.prompt("/quit")
	waitGone(t, tuiPID, codexWait)
	s = r.sweepUntilEnded(id)
	if s.EndReason != "owner-exited" || s.Interrupted {
		t.Errorf("after /quit: %+v, want ended, owner-exited, not interrupted", s)
	}

	// kill -9 of a resumed TUI mid-turn: the daemon runs the turn on, the
	// owner is gone.
	tui = codexTUI(r, "codex resume "+id, "hello tui")
	tuiPID = findProc(t, tui.pid(), "codex", codexWait)
	tui.prompt("hold on [[hold]] kill me")
	waitHeld(t, mock)
	s = r.waitSession("the resumed TUI's held turn", codexWait, func(s sweep.Row) bool { return s.Phase == "active" && s.Turns == 3 })
	if s.ID != id || s.Owner == nil || s.Owner.PID != tuiPID {
		t.Errorf("resumed session %+v, want %s owned by the new TUI, pid %d", s, id, tuiPID)
	}
	daemon := codexDaemon(t, r.Home)
	if s.Owner != nil && s.Owner.PID == daemon {
		t.Errorf("the app-server daemon, pid %d, owns the session", daemon)
	}
	signal(t, tuiPID, syscall.SIGKILL)
	waitGone(t, tuiPID, codexWait)
	if procName(daemon) == "" {
		t.Fatalf("the app-server daemon, pid %d, died with the TUI", daemon)
	}
	s = r.sweepUntilEnded(id)
	if s.EndReason != "interrupted" || !s.Interrupted {
		t.Errorf("after kill -9 of the TUI: %+v, want ended, interrupted", s)
	}

	// The command resume --print gives: its first prompt joins the turn
	// the daemon still runs, under that turn's id, and revives the session.
	cmd := strings.TrimSpace(r.sweep("resume", "--print", id))
	if want := "cd " + r.Dir + " && codex resume " + id; cmd != want {
		t.Errorf("resume --print = %q, want %q", cmd, want)
	}
	tui = codexTUI(r, cmd, "esc to interrupt")
	tuiPID = findProc(t, tui.pid(), "codex", codexWait)
	tui.prompt("after the kill")
	s = r.waitSession("the revived session's turn to end", codexWait, func(s sweep.Row) bool {
		return s.ID == id && s.Phase == "idle" && s.Turns == 4
	})
	if s.LastPrompt != "after the kill" || s.Owner == nil || s.Owner.PID != tuiPID {
		t.Errorf("revived session %+v, want the last prompt \"after the kill\", owned by the TUI, pid %d", s, tuiPID)
	}
	// The TUI's hidden title thread ran, and is no session.
	if !mock.Saw("Generate a concise, single-line task title") {
		t.Error("the mock saw no title request: the title thread was not exercised")
	}
	onlyCodexSession(t, r.sessions(true))
	r.checkClean()
}

// codexModel makes model the one Codex asks the mock for. Codex gives
// apply_patch as a tool of its own only to models it knows (gpt-5.5 does
// take one); the mock answers any name.
func codexModel(t *testing.T, r *repo, model string) {
	t.Helper()
	path := filepath.Join(r.Home, ".codex", "config.toml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	config := strings.Replace(string(b), `model = "mock-model"`, fmt.Sprintf("model = %q", model), 1)
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCodexTwoSessions: two Codex sessions in one worktree, one writing
// a.txt with apply_patch while the other's turn runs (held by the mock,
// then ended with SIGINT). Both turns' captures saw a.txt appear; only the
// writer's rollout holds the call that wrote it. The idle turn is credited
// with nothing, and the commit of a.txt links the writer's checkpoint
// alone.
func TestCodexTwoSessions(t *testing.T) {
	t.Parallel()
	mock := mockllm.NewResponses(t)
	r := codexRepo(t, mock, "--trust")
	codexModel(t, r, "gpt-5.5")

	held := codexExec(r, "hold on [[hold]]")
	waitHeld(t, mock)
	heldAgent := codexAgent(t, held)
	idle := r.waitSession("the held turn recorded", codexWait, func(s sweep.Row) bool { return s.Phase == "active" })

	w := codexExec(r, "write it [[write a.txt]]")
	if err := w.wait(codexWait); err != nil {
		t.Fatalf("codex exec: %v\n%s", err, w.output())
	}
	writer := r.waitSession("the writer's session ended", codexWait, func(s sweep.Row) bool { return s.ID != idle.ID && s.Phase == "ended" })
	signal(t, heldAgent, syscall.SIGINT)
	held.wait(codexWait)
	idle = r.sweepUntilEnded(idle.ID)
	writer = sessionByID(t, r.sessions(false), writer.ID)
	if len(idle.Checkpoints) != 1 || len(writer.Checkpoints) != 1 {
		t.Fatalf("checkpoints: idle %v, writer %v; want one each", idle.Checkpoints, writer.Checkpoints)
	}

	r.commitWritten("a.txt")
	note := r.git("notes", "--ref=tether", "show", "HEAD")
	if !strings.Contains(note, writer.Checkpoints[0]) || strings.Contains(note, idle.Checkpoints[0]) {
		t.Errorf("the note of a.txt's commit links %q; want the writer's checkpoint %s alone (the idle one is %s)", note, writer.Checkpoints[0], idle.Checkpoints[0])
	}
	if show := r.show(idle.Checkpoints[0], false); strings.Contains(show, "a.txt") || !strings.Contains(show, "changed no files") {
		t.Errorf("the idle turn's checkpoint:\n%s\nwant it credited with nothing", show)
	}
	if show := r.show(writer.Checkpoints[0], false); !strings.Contains(show, "A a.txt") || strings.Contains(show, "shared") {
		t.Errorf("the writer's checkpoint:\n%s\nwant a.txt, its own (written with apply_patch: a shell's write would be shared)", show)
	}
	r.checkClean()
}
