//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetherdev/tether/internal/mockllm"
	"github.com/tetherdev/tether/sweep"
)

// Qwen Code, the version docs/agents.md says is verified.
const (
	qwenPkg     = "@qwen-code/qwen-code"
	qwenVersion = "0.24.4"
	qwenWait    = 3 * time.Minute
)

// qwenSettings is the user's ~/.qwen/settings.json: OpenAI-compatible auth
// against the mock, no update check, no memory extraction (a second model
// call after each turn).
const qwenSettings = `{
  "security": {"auth": {"selectedType": "openai"}},
  "model": {"name": "mock-model"},
  "general": {"enableAutoUpdate": false},
  "memory": {"enableManagedAutoMemory": false}
}
`

// newQwenRepo is a scratch repository with tether installed for Qwen Code,
// which talks to a fresh mock.
func newQwenRepo(t *testing.T) (*repo, *mockllm.Server) {
	t.Helper()
	bins := npmCLI(t, qwenPkg, qwenVersion)
	var mock *mockllm.Server
	r := newRepo(t, func(r *repo) {
		mock = mockllm.NewChat(t, r.Dir)
		r.addPath(bins)
		r.setenv("OPENAI_API_KEY=dummy", "OPENAI_BASE_URL="+mock.URL+"/v1", "QWEN_CODE_SUPPRESS_YOLO_WARNING=1")
		writeHome(r, ".qwen/settings.json", qwenSettings)
	}, "--agent", "qwen")
	return r, mock
}

// qwenRun starts a headless `qwen PROMPT` that may use every tool (extra
// flags before the prompt).
func qwenRun(r *repo, prompt string, extra ...string) *proc {
	r.t.Helper()
	return r.start("qwen", append(append([]string{"--approval-mode", "yolo"}, extra...), prompt)...)
}

// qwenAgent is the process running Qwen Code's agent below root: its
// launcher (node) re-spawns itself, and that child the agent, which runs
// the hooks: the node process below a node with no node below it.
func qwenAgent(t *testing.T, root int) int {
	t.Helper()
	var agent int
	waitFor(t, fmt.Sprintf("Qwen Code's agent below %d", root), qwenWait, func() bool {
		kids := childrenOf()
		for queue := []int{root}; len(queue) > 0; queue = queue[1:] {
			pid := queue[0]
			queue = append(queue, kids[pid]...)
			if _, ppid, _ := procStat(pid); procName(pid) != "node" || procName(ppid) != "node" {
				continue
			}
			if !slices.ContainsFunc(kids[pid], func(c int) bool { return procName(c) == "node" }) {
				agent = pid
				return true
			}
		}
		return false
	})
	return agent
}

// Headless runs fire no SessionEnd: a turn, owned by the agent's process,
// ends as its owner exits; a failed model call fires no hook at all, and
// the transcript says why the turn ended; a written file, committed, is
// linked to the checkpoint holding the prompt and the transcript.
func TestQwenHeadless(t *testing.T) {
	t.Parallel()
	r, mock := newQwenRepo(t)

	p := qwenRun(r, "say hello")
	s := r.waitSession("the turn", qwenWait, func(s sweep.Row) bool { return s.Turns == 1 })
	agent := qwenAgent(t, p.Cmd.Process.Pid)
	if s.Owner == nil || s.Owner.PID != agent || s.Owner.Name != "node" {
		t.Errorf("owner %+v, want Qwen Code's agent %d below its launcher %d", s.Owner, agent, p.Cmd.Process.Pid)
	}
	if err := p.wait(qwenWait); err != nil || !strings.Contains(p.output(), mockllm.Reply) || !mock.Saw("say hello") {
		t.Fatalf("qwen did not answer through the mock: %v\n%s", err, p.output())
	}
	waitGone(t, agent, qwenWait)
	s = r.only("qwen", true)
	if s.Phase != "ended" || s.EndReason != "owner-exited" || s.Interrupted || s.Turns != 1 || s.LastPrompt != "say hello" || !s.Resumable {
		t.Fatalf("after a headless turn: %+v, want ended as its owner exited after a finished turn", s)
	}
	first := s.ID

	p = qwenRun(r, "boom [[fail]]")
	if err := p.wait(qwenWait); err == nil {
		t.Fatalf("qwen exited 0 on a model error:\n%s", p.output())
	}
	for _, s := range r.sessions(true) {
		if s.ID != first && (s.Phase != "ended" || s.Interrupted || s.EndReason != "owner-exited" || !strings.Contains(s.LastError, "400 mock failure (MOCK_FAIL)")) {
			t.Fatalf("after a model error: %+v, want the turn failed with the model's error, then the owner's exit", s)
		}
	}

	if err := qwenRun(r, "make it [[write a.txt]]").wait(qwenWait); err != nil {
		t.Fatal(err)
	}
	r.commitWritten("a.txt")
	if show := r.show("HEAD", false); !strings.Contains(show, "make it [[write a.txt]]") {
		t.Errorf("show HEAD lacks the prompt:\n%s", show)
	}
	tr := r.show("HEAD", true)
	for _, want := range []string{"make it [[write a.txt]]", "write_file", "written by the agent"} {
		if !strings.Contains(tr, want) {
			t.Errorf("the checkpoint's transcript lacks %q:\n%.3000s", want, tr)
		}
	}
	r.checkClean()
}

// kill -9 and SIGINT mid-turn: no hook fires; the sweep ends the session
// interrupted. resume --print gives Qwen Code's own command, and `qwen
// --resume ID` revives the same session.
func TestQwenHeadlessKilled(t *testing.T) {
	t.Parallel()
	r, mock := newQwenRepo(t)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		p := qwenRun(r, "wait [[hold]]")
		select {
		case <-mock.Held():
		case <-time.After(qwenWait):
			t.Fatalf("qwen never reached the model: %s", p.output())
		}
		r.waitSession("the held turn", qwenWait, func(s sweep.Row) bool { return s.Phase == "active" })
		agent := qwenAgent(t, p.Cmd.Process.Pid)
		signal(t, agent, sig)
		p.wait(qwenWait)
		waitGone(t, agent, qwenWait)
	}
	rows := r.sessions(true)
	if len(rows) != 2 {
		t.Fatalf("sessions %+v", rows)
	}
	for _, s := range rows {
		if s.Phase != "ended" || s.EndReason != "interrupted" || !s.Interrupted || s.Turns != 1 || !s.Resumable {
			t.Fatalf("after kill -9 / SIGINT mid-turn: %+v", s)
		}
	}
	id := rows[0].ID
	if out := r.sweep("resume", "--print", id[:8]); out != fmt.Sprintf("cd %s && qwen --resume %s\n", r.Dir, id) {
		t.Errorf("resume --print: %q", out)
	}
	if err := qwenRun(r, "carry on", "--resume", id).wait(qwenWait); err != nil {
		t.Fatal(err)
	}
	s := sessionByID(t, r.sessions(true), id)
	if s.Turns != 2 || s.LastPrompt != "carry on" || s.Interrupted {
		t.Fatalf("after qwen --resume: %+v, want the same session's 2nd turn", s)
	}
	r.checkClean()
}

// qwenTUI starts command (Qwen Code's TUI, or what runs it) under tmux, in
// the foreground of its terminal, and waits for its input box.
func qwenTUI(r *repo, command string) *tmuxSession {
	r.t.Helper()
	tm := newTmux(r, "timeout --foreground 900 "+command)
	tm.waitText("Type your message", qwenWait)
	return tm
}

// The TUI: a turn; Esc ends a held turn (no Stop: a Notification
// idle_prompt); a model error fires StopFailure; kill -9 mid-turn is
// interrupted; `tether-sweep resume` runs `qwen --resume ID`, which revives
// the same session, and /quit ends it (SessionEnd, which headless runs
// never fire).
func TestQwenTUI(t *testing.T) {
	t.Parallel()
	r, mock := newQwenRepo(t)
	tm := qwenTUI(r, "qwen --approval-mode yolo")

	tm.prompt("say hello")
	s := r.waitSession("the TUI's turn to end", qwenWait, func(s sweep.Row) bool { return s.Phase == "idle" && s.Turns == 1 })
	agent := qwenAgent(t, tm.pid())
	if s.Owner == nil || s.Owner.PID != agent {
		t.Fatalf("TUI turn: %+v, want owned by %d", s, agent)
	}

	tm.waitText("Type your message", qwenWait)
	tm.prompt("wait [[hold]]")
	<-mock.Held()
	r.waitSession("the held turn", qwenWait, func(s sweep.Row) bool { return s.Phase == "active" && s.Turns == 2 })
	tm.keys("Escape")
	s = r.waitSession("Esc to end the turn", qwenWait, func(s sweep.Row) bool { return s.Turns == 2 && s.Phase == "idle" })
	if s.LastError != "" {
		t.Errorf("after Esc: %+v", s)
	}
	// Esc puts the prompt back into the input box: clear it.
	waitFor(t, "an empty input box", qwenWait, func() bool {
		tm.keys("C-u")
		return tm.shows("Type your message", 2*time.Second)
	})

	tm.prompt("boom [[fail]]")
	s = r.waitSession("the failed turn", qwenWait, func(s sweep.Row) bool { return s.Turns == 3 && s.Phase == "idle" })
	if !strings.Contains(s.LastError, "400 mock failure (MOCK_FAIL)") {
		t.Errorf("after a model error: %+v", s)
	}

	tm.waitText("Type your message", qwenWait)
	tm.prompt("think again [[hold]]")
	<-mock.Held()
	r.waitSession("the fourth turn", qwenWait, func(s sweep.Row) bool { return s.Phase == "active" && s.Turns == 4 })
	signal(t, agent, syscall.SIGKILL)
	s = r.sweepUntilEnded(s.ID)
	if s.EndReason != "interrupted" || !s.Interrupted || !s.Resumable {
		t.Fatalf("after kill -9: %+v", s)
	}

	// Resumed, the session lives again. (A prompt now would reach the
	// model after the killed one, which Qwen Code keeps in the history
	// and sends along: the mock would hold it again.)
	rt := qwenTUI(r, "tether-sweep resume "+s.ID[:8])
	s = r.waitSession("the resumed session", qwenWait, func(s sweep.Row) bool { return s.Phase == "idle" && s.Liveness == "alive" })
	if s.Turns != 4 || s.Interrupted {
		t.Fatalf("resumed: %+v", s)
	}
	rt.prompt("/quit")
	s = r.waitSession("/quit to end the session", qwenWait, func(s sweep.Row) bool { return s.Phase == "ended" })
	if s.EndReason != "session-end" || s.Interrupted || s.EndNote != "qwen: prompt_input_exit" {
		t.Fatalf("after /quit: %+v", s)
	}
	if rows := r.sessions(true); len(rows) != 1 {
		t.Errorf("resuming made another session: %+v", rows)
	}
	r.checkClean()
}
