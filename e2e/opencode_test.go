//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetherdev/tether/internal/mockllm"
	"github.com/tetherdev/tether/sweep"
)

// opencodeRepo is a scratch repository with tether's plugin installed for
// OpenCode 1.18.33, which runs offline against mock through its
// openai-compatible provider, configured in the user's opencode.json (the
// repository keeps only what tether wrote).
func opencodeRepo(t *testing.T) (*repo, *mockllm.Server) {
	t.Helper()
	bins := npmCLI(t, "opencode-ai", "1.18.33")
	var mock *mockllm.Server
	r := newRepo(t, func(r *repo) {
		mock = mockllm.NewChat(t, r.Dir)
		r.addPath(bins)
		// OpenCode installs its plugin package into each config directory
		// it loads, with npm: one cache for every test's HOME.
		r.setenv("npm_config_cache=" + filepath.Join(bins, "..", "..", "..", "npm-cache"))
		r.setenv("OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
			"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1")
		cfg, err := json.Marshal(map[string]any{
			"$schema": "https://opencode.ai/config.json",
			"provider": map[string]any{"mock": map[string]any{
				"npm":     "@ai-sdk/openai-compatible",
				"options": map[string]any{"baseURL": mock.URL + "/v1", "apiKey": "dummy"},
				"models":  map[string]any{"mock-model": map[string]any{"tool_call": true}},
			}},
			"model": "mock/mock-model",
		})
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(r.Home, ".config", "opencode")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "opencode.json"), cfg, 0o644); err != nil {
			t.Fatal(err)
		}
	}, "--agent", "opencode")
	return r, mock
}

// opencodeTimeout bounds one opencode run: it starts in seconds on an idle
// machine, and took minutes on a loaded one (a deadline, not a timing).
const opencodeTimeout = 8 * time.Minute

// opencodeRun runs `opencode run PROMPT` (extra before the prompt) to its
// end and returns its output; it fails the test unless the exit is wantOK.
func opencodeRun(t *testing.T, r *repo, wantOK bool, prompt string, extra ...string) (*proc, string) {
	t.Helper()
	p := r.start("opencode", append(append([]string{"run"}, extra...), prompt)...)
	err := p.wait(opencodeTimeout)
	if (err == nil) != wantOK {
		t.Fatalf("opencode run %q: %v\n%s", prompt, err, p.output())
	}
	return p, p.output()
}

// opencodeSession is the one session with id, or the only one when id is "".
func opencodeSession(t *testing.T, rows []sweep.Row, id string) sweep.Row {
	t.Helper()
	var found []sweep.Row
	for _, s := range rows {
		if s.Agent == "opencode" && (id == "" || s.ID == id) {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one opencode session %q, have %+v", id, rows)
	}
	return found[0]
}

// turnEnded waits for the turn end the plugin reports (its hook runs
// detached, and may run after `opencode run` has exited) of session id.
func turnEnded(t *testing.T, r *repo, id string, turns int) sweep.Row {
	t.Helper()
	return r.waitSession("the end of the turn recorded", opencodeTimeout, func(s sweep.Row) bool {
		return s.Agent == "opencode" && (id == "" || s.ID == id) && s.Phase == "idle" && s.Turns == turns
	})
}

// TestOpenCodeRun runs `opencode run`: a plain turn, owned by the opencode
// process, ended as a clean exit once opencode has exited, though nothing
// fires on exit; a failed model call, recorded as the turn's error; then a
// turn that writes a file, committed: the commit's note names a checkpoint
// holding the prompt and the conversation as `opencode export` gives it.
func TestOpenCodeRun(t *testing.T) {
	t.Parallel()
	r, mock := opencodeRepo(t)

	p, out := opencodeRun(t, r, true, "say hello")
	if !strings.Contains(out, mockllm.Reply) || !mock.Saw("say hello") {
		t.Fatalf("the prompt did not reach the mock, or its reply did not come back: %q", out)
	}
	s := turnEnded(t, r, "", 1)
	if s.Owner == nil || s.Owner.PID != p.Cmd.Process.Pid || s.Owner.Name != "opencode" {
		t.Errorf("owner %+v, want the opencode process %d", s.Owner, p.Cmd.Process.Pid)
	}
	if !strings.Contains(s.LastPrompt, "say hello") || !strings.HasPrefix(s.ID, "ses_") {
		t.Errorf("session %s, prompt %q", s.ID, s.LastPrompt)
	}
	s = opencodeSession(t, r.sessions(true), s.ID)
	if s.Phase != "ended" || s.EndReason != "owner-exited" || s.Interrupted || !s.Resumable {
		t.Errorf("after opencode run exited: %+v", s)
	}
	first := s.ID

	// A provider error: the turn failed, and says why.
	opencodeRun(t, r, false, "break [[fail]]")
	var failed sweep.Row
	waitFor(t, "the failed turn recorded", time.Minute, func() bool {
		for _, s := range r.sessions(false) {
			if s.ID != first && s.Phase == "idle" && s.Turns == 1 && strings.Contains(s.LastError, "mock failure (MOCK_FAIL)") {
				failed = s
				return true
			}
		}
		return false
	})
	if failed.Interrupted {
		t.Errorf("failed turn: %+v", failed)
	}

	// A turn that writes a file through OpenCode's write tool, committed.
	opencodeRun(t, r, true, "make a file [[write a.txt]]")
	r.commitWritten("a.txt")
	if show := r.show("HEAD", false); !strings.Contains(show, "make a file [[write a.txt]]") {
		t.Errorf("tether-sweep show HEAD lacks the prompt:\n%.2000s", show)
	}
	transcript := r.show("HEAD", true)
	for _, want := range []string{"make a file [[write a.txt]]", `"tool":"write"`, mockllm.Content[:len(mockllm.Content)-1], mockllm.Reply} {
		if !strings.Contains(transcript, want) {
			t.Errorf("the conversation of the commit's checkpoint lacks %q:\n%.3000s", want, transcript)
		}
	}
	r.checkClean()
}

// TestOpenCodeKilled kills `opencode run` with SIGKILL mid-turn: nothing
// fires, the sweep ends the session as interrupted; `opencode run
// --session ID` revives that same session, which then has 2 turns.
func TestOpenCodeKilled(t *testing.T) {
	t.Parallel()
	r, mock := opencodeRepo(t)
	p := r.start("opencode", "run", "think hard [[hold]]")
	select {
	case <-mock.Held():
	case <-time.After(opencodeTimeout):
		t.Fatalf("the mock never held a stream; opencode said: %s", p.output())
	}
	s := r.waitSession("the held turn recorded active", time.Minute, func(s sweep.Row) bool {
		return s.Phase == "active" && s.Turns == 1
	})
	if s.Owner == nil || s.Owner.PID != p.Cmd.Process.Pid || s.Liveness != "alive" {
		t.Fatalf("held turn: owner %+v (%s), want the living opencode %d", s.Owner, s.Liveness, p.Cmd.Process.Pid)
	}
	signal(t, p.Cmd.Process.Pid, syscall.SIGKILL)
	p.wait(30 * time.Second)
	r.sweep("run")
	s = opencodeSession(t, r.sessions(false), s.ID)
	if s.Phase != "ended" || s.EndReason != "interrupted" || !s.Interrupted || !s.Resumable {
		t.Fatalf("after kill -9 mid-turn: %+v", s)
	}
	if out := r.sweep("resume", "--print", s.ID[:12]); !strings.HasSuffix(strings.TrimSpace(out), "opencode -s "+s.ID) {
		t.Errorf("resume --print: %q", out)
	}

	// Resumed by its ID: the same session, revived, its second turn.
	opencodeRun(t, r, true, "go on", "--session", s.ID)
	got := turnEnded(t, r, s.ID, 2)
	if got.ID != s.ID || !strings.Contains(got.LastPrompt, "go on") {
		t.Errorf("resumed: %+v", got)
	}
	if rows := r.sessions(true); len(rows) != 1 {
		t.Errorf("resuming made another session: %+v", rows)
	}
}

// TestOpenCodeTUI drives the TUI under tmux: a turn; a held turn aborted
// with Esc Esc, which leaves the session idle and no error; then a held
// turn and kill -9: interrupted.
func TestOpenCodeTUI(t *testing.T) {
	t.Parallel()
	r, mock := opencodeRepo(t)
	tm := newTmux(r, "opencode")
	oc := findProc(t, tm.pid(), "opencode", time.Minute)
	tuiReady(t, tm)
	tm.prompt("say hello")
	s := turnEnded(t, r, "", 1)
	if s.Owner == nil || s.Owner.PID != oc {
		t.Errorf("owner %+v, want the opencode TUI %d", s.Owner, oc)
	}

	tm.prompt("think hard [[hold]]")
	select {
	case <-mock.Held():
	case <-time.After(opencodeTimeout):
		t.Fatal("the mock never held a stream")
	}
	r.waitSession("the held turn recorded active", opencodeTimeout, func(s sweep.Row) bool { return s.Phase == "active" && s.Turns == 2 })
	tm.keys("Escape")
	time.Sleep(300 * time.Millisecond)
	tm.keys("Escape")
	s = turnEnded(t, r, s.ID, 2)
	if s.LastError != "" || s.Liveness != "alive" {
		t.Errorf("after Esc Esc: %+v", s)
	}

	tm.prompt("think again [[hold]]")
	select {
	case <-mock.Held():
	case <-time.After(opencodeTimeout):
		t.Fatal("the mock never held the third stream")
	}
	r.waitSession("the third turn recorded active", opencodeTimeout, func(s sweep.Row) bool { return s.Phase == "active" && s.Turns == 3 })
	signal(t, oc, syscall.SIGKILL)
	s = r.sweepUntilEnded(s.ID)
	if s.Phase != "ended" || s.EndReason != "interrupted" || !s.Interrupted {
		t.Fatalf("after kill -9 mid-turn in the TUI: %+v", s)
	}
}

// tuiReady waits for the TUI's prompt box, which names the model.
func tuiReady(t *testing.T, tm *tmuxSession) {
	t.Helper()
	tm.waitText("Ask anything", opencodeTimeout)
	tm.waitText("mock-model", time.Minute)
}
