package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// claudeFixtures are the payloads recorded from the real Claude Code CLI,
// kept with the agent adapters that parse them.
const claudeFixtures = "../../agent/testdata/recorded/claude-code"

func fixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(claudeFixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("recorded Claude Code payload: %v", err)
	}
	return p
}

// runningAgent is a stand-in agent in the middle of a turn.
type runningAgent struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer // the hook's stdout and stderr end up here
}

// startAgent starts the stand-in with actions ending in open=..., and
// returns once it says its last turn is running.
func startAgent(t *testing.T, r testRepo, id string, actions ...string) *runningAgent {
	t.Helper()
	return startAgentHook(t, r, bins.hook+" claude-code", id, actions...)
}

// startAgentHook is startAgent with the agent's hook command.
func startAgentHook(t *testing.T, r testRepo, hook, id string, actions ...string) *runningAgent {
	t.Helper()
	cmd := exec.Command(bins.claude, agentArgs(r, hook, id, actions...)...)
	cmd.Dir, cmd.Env = r.dir, cleanEnv()
	a := &runningAgent{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = a.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.kill() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "waiting to be killed") {
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return a
		}
	}
	a.kill()
	t.Fatalf("stand-in agent %v exited before its turn ran\n%s", actions, a.stderr.String())
	return nil
}

// kill is kill -9, then reaping: the agent dies mid-turn, no hook fires.
func (a *runningAgent) kill() {
	if a.cmd.ProcessState == nil {
		_ = a.cmd.Process.Signal(syscall.SIGKILL)
		_ = a.cmd.Wait()
	}
}

// transcriptOffsets returns the offset after each line of the transcript.
func transcriptOffsets(t *testing.T, path string) []int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	var n int64
	for line := range bytes.Lines(data) {
		n += int64(len(line))
		offs = append(offs, n)
	}
	return offs
}

// TestClaudeCodeUnderStandin drives the real hook the way Claude Code does
// (through /bin/sh -c, CLAUDE_PID exported), replaying recorded payloads;
// then kills the agent mid-turn, sweeps, and resumes the session with a
// new agent process.
func TestClaudeCodeUnderStandin(t *testing.T) {
	r := newRepo(t)
	const id = "cc-e2e"
	head0 := r.head(t)

	// (1) A recorded session: start, a turn that commits, a tool call (not a
	// turn), and a second turn left running.
	a := startAgent(t, r, id,
		"replay="+fixture(t, "SessionStart_startup.json"),
		"replay="+fixture(t, "UserPromptSubmit.json"),
		"replay="+fixture(t, "PreToolUse_Bash.json"),
		"commit=agent work",
		"replay="+fixture(t, "PostToolUse_Bash.json"),
		"replay="+fixture(t, "Stop.json"),
		"open=second prompt")
	head1 := r.head(t)
	pid := a.cmd.Process.Pid

	s := r.load(t, id)
	if s.Phase != state.PhaseActive || s.Turns != 2 || s.LastPrompt != "second prompt" {
		t.Errorf("phase %q, %d turns, last prompt %q; want active, 2, \"second prompt\"", s.Phase, s.Turns, s.LastPrompt)
	}
	if s.Agent != "claude-code" || s.Worktree != r.dir || s.Branch != "main" || s.TranscriptPath != r.transcript(id) || !s.Resumable {
		t.Errorf("agent %q, worktree %q, branch %q, transcript %q, resumable %v", s.Agent, s.Worktree, s.Branch, s.TranscriptPath, s.Resumable)
	}
	if s.Owner == nil {
		t.Fatalf("no owner recorded (last error %q)", s.LastError)
	}
	// The owner is the agent: not the shell it runs the hook through, not
	// the hook.
	if s.Owner.PID != pid || s.Owner.Name != "claude" {
		t.Errorf("owner pid %d (%s), want the stand-in claude, pid %d", s.Owner.PID, s.Owner.Name, pid)
	}
	if v := proclive.Check(*s.Owner); v.Liveness != proclive.Alive {
		t.Errorf("owner while the agent runs: %v", v)
	}
	offs := transcriptOffsets(t, r.transcript(id))
	// Transcript lines: "say hi", the commit's Bash call, "second prompt",
	// "working on: second prompt".
	want := []state.TurnRecord{
		{T: state.RecTurnStart, Turn: 1, Prompt: "say hi", Head: head0, TranscriptSize: offs[0],
			Key: "03c4e50d-e6af-44e6-9417-ca2fe808f78e"}, // the recorded prompt_id
		{T: state.RecTurnEnd, Turn: 1, Head: head1, TranscriptSize: offs[1]},
		{T: state.RecTurnStart, Turn: 2, Prompt: "second prompt", Head: head1, TranscriptSize: offs[2]},
	}
	recs := r.turns(t, id)
	if o := recs[len(recs)-1].Owner; o == nil || *o != *s.Owner {
		t.Errorf("the last turn start names owner %+v, the session %+v", o, s.Owner)
	}
	checkTurns(t, recs, want)
	if out := a.stderr.String(); out != "" {
		t.Errorf("the hook said something to the agent: %q", out)
	}

	// (2) kill -9 mid-turn: the recorded owner is now dead.
	a.kill()
	old := *r.load(t, id).Owner
	if v := proclive.Check(old); v.Liveness != proclive.Dead {
		t.Fatalf("owner after kill -9: %v", v)
	}
	sweep := exec.Command(bins.sweep, "run", "--quiet")
	sweep.Dir, sweep.Env = r.dir, cleanEnv()
	if out, err := sweep.CombinedOutput(); err != nil {
		t.Fatalf("tether-sweep run: %v\n%s", err, out)
	}
	if s := r.load(t, id); s.Phase != state.PhaseEnded || s.EndReason != state.EndInterrupted || !s.Interrupted || s.EndedAt.IsZero() {
		t.Fatalf("after the sweep: phase %q, reason %q, interrupted %v; want ended, interrupted", s.Phase, s.EndReason, s.Interrupted)
	}

	// (3) A resume, by a new agent process, revives the session.
	b := startAgent(t, r, id, "replay="+fixture(t, "SessionStart_resume_after_kill9.json"), "open=carry on")
	s = r.load(t, id)
	if s.Phase != state.PhaseActive || s.Turns != 3 {
		t.Errorf("after the resume: phase %q, %d turns; want active, 3", s.Phase, s.Turns)
	}
	if !s.EndedAt.IsZero() || s.EndReason != "" || s.Interrupted {
		t.Errorf("end fields not cleared: ended_at %v, reason %q, interrupted %v", s.EndedAt, s.EndReason, s.Interrupted)
	}
	if s.Owner == nil || s.Owner.PID != b.cmd.Process.Pid || *s.Owner == old {
		t.Fatalf("owner %+v after the resume, want the new agent (pid %d)", s.Owner, b.cmd.Process.Pid)
	}
	if v := proclive.Check(*s.Owner); v.Liveness != proclive.Alive {
		t.Errorf("new owner: %v", v)
	}
	if _, err := os.Stat(filepath.Join(r.common, "tether", "sessions", id+".json")); err != nil {
		t.Errorf("revived session is not back in sessions/: %v", err)
	}
	if recs := r.turns(t, id); len(recs) != 4 || recs[3].Prompt != "carry on" || recs[3].Turn != 3 {
		t.Errorf("turn log after the resume: %+v", recs)
	}
}

// TestOwnerWithoutHint: an agent that exports no PID runs the hook
// through a shell that stays around (a compound command); the hook walks
// up past the shell to the agent.
func TestOwnerWithoutHint(t *testing.T) {
	r := newRepo(t)
	hook := "unset CLAUDE_PID; " + bins.hook + " claude-code; true"
	a := startAgentHook(t, r, hook, "walk", "start", "open=find me")
	s := r.load(t, "walk")
	if s.Owner == nil || s.Owner.PID != a.cmd.Process.Pid || s.Owner.Name != "claude" {
		t.Errorf("owner %+v (last error %q), want the stand-in claude, pid %d", s.Owner, s.LastError, a.cmd.Process.Pid)
	}
}
