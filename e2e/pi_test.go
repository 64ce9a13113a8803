//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetherdev/tether/internal/mockllm"
	"github.com/tetherdev/tether/sweep"
)

// Pi, the version docs/agents.md says is verified.
const (
	piPkg     = "@mariozechner/pi-coding-agent"
	piVersion = "0.73.1"
	piWait    = 3 * time.Minute
)

// newPiRepo is a scratch repository with tether's extension installed for
// Pi, whose default model is the mock's, an openai-completions provider of
// the user's models.json.
func newPiRepo(t *testing.T) (*repo, *mockllm.Server) {
	t.Helper()
	bins := npmCLI(t, piPkg, piVersion)
	var mock *mockllm.Server
	r := newRepo(t, func(r *repo) {
		mock = mockllm.NewChat(t, r.Dir)
		r.addPath(bins)
		r.setenv("PI_OFFLINE=1")
		models, err := json.Marshal(map[string]any{"providers": map[string]any{"mock": map[string]any{
			"baseUrl": mock.URL + "/v1", "api": "openai-completions", "apiKey": "dummy",
			"compat": map[string]bool{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
			"models": []any{map[string]string{"id": "mock-model"}},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		writeHome(r, ".pi/agent/models.json", string(models))
		writeHome(r, ".pi/agent/settings.json", `{"defaultProvider": "mock", "defaultModel": "mock-model"}`)
	}, "--agent", "pi")
	return r, mock
}

// piPrint starts `pi -p PROMPT` (extra flags before the prompt).
func piPrint(r *repo, prompt string, extra ...string) *proc {
	r.t.Helper()
	return r.start("pi", append(append([]string{"-p"}, extra...), prompt)...)
}

// A turn, owned by the pi process, through the extension's events; a
// failed model call is the turn's error; a written file, committed, is
// linked to the checkpoint holding the prompt and the transcript.
func TestPiPrint(t *testing.T) {
	t.Parallel()
	r, mock := newPiRepo(t)

	p := piPrint(r, "say hello")
	if err := p.wait(piWait); err != nil || !strings.Contains(p.output(), mockllm.Reply) || !mock.Saw("say hello") {
		t.Fatalf("pi did not answer through the mock: %v\n%s", err, p.output())
	}
	s := r.only("pi", false)
	if s.Phase != "ended" || s.EndReason != "session-end" || s.EndNote != "pi: quit" || s.Interrupted ||
		s.Turns != 1 || s.LastPrompt != "say hello" || !s.Resumable {
		t.Fatalf("after a turn: %+v", s)
	}
	if s.Owner == nil || s.Owner.PID != p.Cmd.Process.Pid || s.Owner.Name != "pi" {
		t.Errorf("owner %+v, want the pi process %d", s.Owner, p.Cmd.Process.Pid)
	}
	first := s.ID

	if err := piPrint(r, "boom [[fail]]").wait(piWait); err == nil {
		t.Fatal("pi -p exited 0 on a model error")
	}
	for _, s := range r.sessions(false) {
		if s.ID != first && (s.Turns != 1 || s.Phase != "ended" || s.Interrupted || !strings.Contains(s.LastError, "400 mock failure (MOCK_FAIL)")) {
			t.Fatalf("after a model error: %+v", s)
		}
	}

	if err := piPrint(r, "make it [[write a.txt]]").wait(piWait); err != nil {
		t.Fatal(err)
	}
	r.commitWritten("a.txt")
	if show := r.show("HEAD", false); !strings.Contains(show, "make it [[write a.txt]]") {
		t.Errorf("show HEAD lacks the prompt:\n%s", show)
	}
	tr := r.show("HEAD", true)
	for _, want := range []string{"make it [[write a.txt]]", `"name":"write"`, "written by the agent"} {
		if !strings.Contains(tr, want) {
			t.Errorf("the checkpoint's transcript lacks %q:\n%.3000s", want, tr)
		}
	}
	r.checkClean()
}

// piHeld starts `pi -p --session ID` on a turn the mock holds open and
// waits until it is recorded.
func piHeld(r *repo, mock *mockllm.Server, id string, turns int) *proc {
	r.t.Helper()
	p := piPrint(r, "wait [[hold]]", "--session", id)
	select {
	case <-mock.Held():
	case <-time.After(piWait):
		r.t.Fatalf("pi never reached the model: %s", p.output())
	}
	r.waitSession("the held turn", piWait, func(s sweep.Row) bool { return s.ID == id && s.Phase == "active" && s.Turns == turns })
	return p
}

// kill -9 and SIGINT mid-turn: nothing fires (Pi writes no session_shutdown
// on SIGINT in -p); the sweep ends the session interrupted. resume --print
// gives Pi's own command, and `pi --session ID` revives the same session.
// Pi writes a session's file once it has an answer: the session starts
// with a finished turn, so that there is one to resume.
func TestPiPrintKilled(t *testing.T) {
	t.Parallel()
	r, mock := newPiRepo(t)
	if err := piPrint(r, "say hello").wait(piWait); err != nil {
		t.Fatal(err)
	}
	id := r.sessions(false)[0].ID
	turns := 1
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		turns++
		p := piHeld(r, mock, id, turns)
		signal(t, p.Cmd.Process.Pid, sig)
		p.wait(piWait)
		s := sessionByID(t, r.sessions(true), id)
		if s.Phase != "ended" || s.EndReason != "interrupted" || !s.Interrupted || !s.Resumable {
			t.Fatalf("after signal %d mid-turn: %+v", sig, s)
		}
	}
	if out := r.sweep("resume", "--print", id[:8]); out != fmt.Sprintf("cd %s && pi --session %s\n", r.Dir, id) {
		t.Errorf("resume --print: %q", out)
	}
	if err := piPrint(r, "carry on", "--session", id).wait(piWait); err != nil {
		t.Fatal(err)
	}
	if s := sessionByID(t, r.sessions(true), id); s.Turns != 4 || s.LastPrompt != "carry on" || s.Interrupted || s.Phase != "ended" {
		t.Fatalf("after pi --session: %+v, want the same session's 4th turn", s)
	}
	if rows := r.sessions(false); len(rows) != 1 {
		t.Errorf("resuming made another session: %+v", rows)
	}
	r.checkClean()
}

// The TUI: a turn; Esc ends a held turn (agent_end, aborted); kill -9
// mid-turn is interrupted; `tether-sweep resume` runs `pi --session ID`,
// which revives the same session; Ctrl-D ends it.
func TestPiTUI(t *testing.T) {
	t.Parallel()
	r, mock := newPiRepo(t)
	tm := newTmux(r, "pi")
	tm.waitText("pi v0.73.1", piWait)
	agent := findProc(t, tm.pid(), "pi", piWait)

	tm.prompt("say hello")
	s := r.waitSession("the TUI's turn to end", piWait, func(s sweep.Row) bool { return s.Phase == "idle" && s.Turns == 1 })
	if s.Owner == nil || s.Owner.PID != agent {
		t.Fatalf("TUI turn: %+v, want owned by pi %d", s, agent)
	}

	tm.prompt("wait [[hold]]")
	<-mock.Held()
	r.waitSession("the held turn", piWait, func(s sweep.Row) bool { return s.Phase == "active" && s.Turns == 2 })
	tm.keys("Escape")
	s = r.waitSession("Esc to end the turn", piWait, func(s sweep.Row) bool { return s.Turns == 2 && s.Phase == "idle" })
	if s.LastError != "" || s.Liveness != "alive" {
		t.Errorf("after Esc: %+v", s)
	}

	tm.prompt("think again [[hold]]")
	<-mock.Held()
	r.waitSession("the third turn", piWait, func(s sweep.Row) bool { return s.Phase == "active" && s.Turns == 3 })
	signal(t, agent, syscall.SIGKILL)
	s = r.sweepUntilEnded(s.ID)
	if s.EndReason != "interrupted" || !s.Interrupted || !s.Resumable {
		t.Fatalf("after kill -9: %+v", s)
	}

	rt := newTmux(r, "tether-sweep resume "+s.ID[:8])
	rt.waitText("pi v0.73.1", piWait)
	s = r.waitSession("the resumed session", piWait, func(s sweep.Row) bool { return s.Phase == "idle" && s.Liveness == "alive" })
	if s.Turns != 3 {
		t.Fatalf("resumed: %+v", s)
	}
	rt.keys("C-d")
	s = r.waitSession("Ctrl-D to end the session", piWait, func(s sweep.Row) bool { return s.Phase == "ended" })
	if s.EndReason != "session-end" || s.Interrupted || s.EndNote != "pi: quit" {
		t.Fatalf("after Ctrl-D: %+v", s)
	}
	if rows := r.sessions(true); len(rows) != 1 {
		t.Errorf("resuming made another session: %+v", rows)
	}
	r.checkClean()
}
