//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetherdev/tether/internal/mockllm"
	"github.com/tetherdev/tether/sweep"
)

// Factory's Droid, the version docs/agents.md says is
// verified: the platform package, whose bin/droid is the CLI (the
// @factory/cli wrapper names a version of it the registry does not serve).
const (
	droidPkg     = "@factory/cli-linux-x64"
	droidVersion = "0.225.2"
	droidWait    = 3 * time.Minute
	droidModel   = "custom:Mock-Chat-0"
)

// newDroidRepo is a scratch repository with tether installed for Droid,
// which talks to a fresh mock: the model as a custom model of the user's
// settings, Factory's own API (FACTORY_API_BASE_URL) answered with
// whoami and 404s. The repository is a folder the user trusted.
func newDroidRepo(t *testing.T) (*repo, *mockllm.Server) {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("%s is Droid for linux/amd64 only", droidPkg)
	}
	bins := npmCLI(t, droidPkg, droidVersion)
	var mock *mockllm.Server
	r := newRepo(t, func(r *repo) {
		mock = mockllm.NewFactory(t, r.Dir)
		r.addPath(filepath.Join(bins, "..", "@factory", "cli-linux-x64", "bin"))
		r.setenv("FACTORY_API_BASE_URL="+mock.URL, "FACTORY_API_KEY=fk-mock")
		settings, err := json.Marshal(map[string]any{
			"customModels": []any{map[string]any{"model": "mock-model", "displayName": "Mock Chat", "baseUrl": mock.URL + "/v1",
				"apiKey": "dummy", "provider": "generic-chat-completion-api", "maxOutputTokens": 4096}},
			"sessionDefaultSettings": map[string]any{"model": droidModel},
			"trustedFolders":         map[string]any{r.Dir: map[string]string{"trustedAt": "2026-11-01T00:00:00.000Z"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		writeHome(r, ".factory/settings.json", string(settings))
	}, "--agent", "droid")
	return r, mock
}

// writeHome writes a file under the repository's HOME.
func writeHome(r *repo, rel, content string) {
	r.t.Helper()
	path := filepath.Join(r.Home, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// droidExec starts `droid exec` on prompt (extra flags before it).
func droidExec(r *repo, prompt string, extra ...string) *proc {
	r.t.Helper()
	args := append([]string{"exec", "--auto", "low", "-m", droidModel, "-o", "json"}, extra...)
	return r.start("droid", append(args, prompt)...)
}

// `droid exec` fires no UserPromptSubmit: its turns are recorded all the
// same, with their prompts, owned by the droid process; a failed model
// call is the turn's error; a written file, committed, is linked to the
// checkpoint holding the prompt and the transcript.
func TestDroidExec(t *testing.T) {
	t.Parallel()
	r, mock := newDroidRepo(t)

	p := droidExec(r, "say hello")
	if err := p.wait(droidWait); err != nil || !strings.Contains(p.output(), `"result":"done."`) || !mock.Saw("say hello") {
		t.Fatalf("droid exec did not answer through the mock: %v\n%s", err, p.output())
	}
	s := r.only("droid", false)
	if s.Phase != "ended" || s.EndReason != "session-end" || s.Interrupted || s.Turns != 1 || s.LastPrompt != "say hello" || !s.Resumable {
		t.Fatalf("after a plain turn: %+v", s)
	}
	if s.Owner == nil || s.Owner.PID != p.Cmd.Process.Pid || s.Owner.Name != "droid" {
		t.Errorf("owner %+v, want the droid process %d", s.Owner, p.Cmd.Process.Pid)
	}
	plain := s.ID

	if err := droidExec(r, "boom [[fail]]").wait(droidWait); err == nil {
		t.Fatal("droid exec exited 0 on a model error")
	}
	var failed sweep.Row
	for _, s := range r.sessions(false) {
		if s.ID != plain {
			failed = s
		}
	}
	if failed.Turns != 1 || failed.Phase != "ended" || failed.Interrupted || !strings.Contains(failed.LastError, "400 mock failure (MOCK_FAIL)") {
		t.Fatalf("after a model error: %+v, want its one turn failed with the model's error", failed)
	}

	if err := droidExec(r, "make it [[write a.txt]]").wait(droidWait); err != nil {
		t.Fatal(err)
	}
	if !mock.Saw(`"name":"Create"`) {
		t.Error("no request offered Droid's Create tool")
	}
	r.commitWritten("a.txt")
	if show := r.show("HEAD", false); !strings.Contains(show, "make it [[write a.txt]]") || !strings.Contains(show, "a.txt") {
		t.Errorf("show HEAD lacks the prompt or the file:\n%s", show)
	}
	tr := r.show("HEAD", true)
	for _, want := range []string{"make it [[write a.txt]]", `"name":"Create"`, "written by the agent"} {
		if !strings.Contains(tr, want) {
			t.Errorf("the checkpoint's transcript lacks %q:\n%.3000s", want, tr)
		}
	}
	r.checkClean()
}

// droidHeld starts `droid exec` on a turn the mock holds open, and waits
// until Droid wrote its prompt into its transcript.
func droidHeld(r *repo, mock *mockllm.Server, extra ...string) *proc {
	r.t.Helper()
	p := droidExec(r, "wait [[hold]]", extra...)
	select {
	case <-mock.Held():
	case <-time.After(droidWait):
		r.t.Fatalf("droid never reached the model with the held turn: %s", p.output())
	}
	waitFor(r.t, "the held prompt in Droid's transcript", droidWait, func() bool {
		matches, _ := filepath.Glob(filepath.Join(r.Home, ".factory", "sessions", "*", "*.jsonl"))
		for _, m := range matches {
			if b, err := os.ReadFile(m); err == nil && strings.Contains(string(b), `"text":"wait [[hold]]"`) {
				return true
			}
		}
		return false
	})
	return p
}

// kill -9 mid-turn: nothing fires, and Droid announced no turn; the sweep
// finds its prompt in the transcript and ends the session interrupted.
// resume --print gives Droid's own command; `droid exec -s ID` revives the
// same session.
func TestDroidExecKill9(t *testing.T) {
	t.Parallel()
	r, mock := newDroidRepo(t)
	p := droidHeld(r, mock)
	signal(t, p.Cmd.Process.Pid, syscall.SIGKILL)
	p.wait(droidWait)
	s := r.only("droid", true)
	if s.Phase != "ended" || s.EndReason != "interrupted" || !s.Interrupted || s.Turns != 1 || s.LastPrompt != "wait [[hold]]" || !s.Resumable {
		t.Fatalf("after kill -9 and a sweep: %+v", s)
	}
	if out := r.sweep("resume", "--print", s.ID[:8]); out != fmt.Sprintf("cd %s && droid --resume %s\n", r.Dir, s.ID) {
		t.Errorf("resume --print: %q", out)
	}
	if err := droidExec(r, "carry on", "-s", s.ID).wait(droidWait); err != nil {
		t.Fatal(err)
	}
	s = r.only("droid", false)
	if s.Turns != 2 || s.LastPrompt != "carry on" || s.Phase != "ended" || s.EndReason != "session-end" || s.Interrupted {
		t.Fatalf("after droid exec -s: %+v, want the same session's 2nd turn", s)
	}
	r.checkClean()
}

// SIGINT mid-turn: SessionEnd (prompt_input_exit) and no Stop: the turn
// Droid never announced was cut short.
func TestDroidExecSIGINT(t *testing.T) {
	t.Parallel()
	r, mock := newDroidRepo(t)
	p := droidHeld(r, mock)
	signal(t, p.Cmd.Process.Pid, syscall.SIGINT)
	p.wait(droidWait)
	s := r.only("droid", false) // what the hooks recorded
	if s.Phase != "ended" || s.EndReason != "interrupted" || !s.Interrupted || s.Turns != 1 || s.EndNote != "droid: prompt_input_exit" {
		t.Fatalf("after SIGINT: %+v", s)
	}
	r.checkClean()
}

// droidTUI starts command (Droid's TUI, or what runs it) under tmux, in
// the foreground of its terminal, and waits for its input box.
func droidTUI(r *repo, command string) *tmuxSession {
	r.t.Helper()
	tm := newTmux(r, "timeout --foreground 900 "+command)
	tm.waitText("for help", droidWait)
	return tm
}

// droidSend types a prompt once the input box is empty again.
func droidSend(tm *tmuxSession, prompt string) {
	tm.t.Helper()
	tm.waitText("│ >", droidWait)
	tm.prompt(prompt)
}

// droidAgent is the process running the TUI's agent, below root: the TUI
// (droid) runs it as a child of its own, `droid exec --input-format
// stream-json …`, which runs the hooks.
func droidAgent(t *testing.T, root int) int {
	t.Helper()
	tui := findProc(t, root, "droid", droidWait)
	var agent int
	waitFor(t, fmt.Sprintf("the agent below Droid's TUI %d", tui), droidWait, func() bool {
		for _, c := range childrenOf()[tui] {
			if procName(c) == "droid" {
				agent = c
				return true
			}
		}
		return false
	})
	return agent
}

// The TUI: a turn owned by the droid process running its agent; Esc ends a held turn (no
// Stop: a Notification idle_prompt); kill -9 mid-turn is interrupted;
// `tether-sweep resume` runs `droid --resume ID`, which revives the same
// session; /quit (two SessionEnds) ends it once.
func TestDroidTUI(t *testing.T) {
	t.Parallel()
	r, mock := newDroidRepo(t)
	tm := droidTUI(r, "droid")
	agent := droidAgent(t, tm.pid())

	droidSend(tm, "say hello")
	s := r.waitSession("the TUI's turn to end", droidWait, func(s sweep.Row) bool { return s.Phase == "idle" && s.Turns == 1 })
	if s.Owner == nil || s.Owner.PID != agent || s.LastPrompt != "say hello" {
		t.Fatalf("TUI turn: %+v, want owned by droid %d", s, agent)
	}

	droidSend(tm, "wait [[hold]]")
	<-mock.Held()
	r.waitSession("the held turn", droidWait, func(s sweep.Row) bool { return s.Phase == "active" && s.Turns == 2 })
	tm.keys("Escape")
	s = r.waitSession("Esc to end the turn", droidWait, func(s sweep.Row) bool { return s.Turns == 2 && s.Phase == "idle" })
	if s.LastError != "" || s.Liveness != "alive" {
		t.Errorf("after Esc: %+v", s)
	}

	droidSend(tm, "think again [[hold]]")
	<-mock.Held()
	r.waitSession("the third turn", droidWait, func(s sweep.Row) bool { return s.Phase == "active" && s.Turns == 3 })
	signal(t, agent, syscall.SIGKILL)
	s = r.sweepUntilEnded(s.ID)
	if s.EndReason != "interrupted" || !s.Interrupted || !s.Resumable {
		t.Fatalf("after kill -9: %+v", s)
	}

	rt := droidTUI(r, "tether-sweep resume "+s.ID[:8])
	droidSend(rt, "carry on")
	s = r.waitSession("the resumed turn", droidWait, func(s sweep.Row) bool { return s.Turns == 4 && s.Phase == "idle" })
	if s.LastPrompt != "carry on" {
		t.Fatalf("resumed: %+v", s)
	}
	droidSend(rt, "/quit")
	s = r.waitSession("/quit to end the session", droidWait, func(s sweep.Row) bool { return s.Phase == "ended" })
	if s.EndReason != "session-end" || s.Interrupted || s.Turns != 4 {
		t.Fatalf("after /quit: %+v", s)
	}
	if rows := r.sessions(true); len(rows) != 1 {
		t.Errorf("resuming made another session: %+v", rows)
	}
	r.checkClean()
}
