//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/state"
)

// replayAgentEnv makes the test binary the agent of TestSIGINTOneRecord:
// it does what it reads on stdin, a line at a time, and says "ok" (or
// what failed) on stdout: "hook FILE ARGS..." runs its hook (tether-hook
// ARGS) with FILE as the payload, "append SRC DST" appends SRC to DST (a
// transcript write), "exit" exits.
const replayAgentEnv = "TETHER_HOOK_TEST_REPLAY_AGENT"

func init() {
	if hook := os.Getenv(replayAgentEnv); hook != "" {
		os.Exit(replayAgent(hook))
	}
}

func replayAgent(hook string) int {
	os.Setenv("CLAUDE_PID", strconv.Itoa(os.Getpid()))
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		var err error
		switch f[0] {
		case "exit":
			return 0
		case "hook":
			var payload []byte
			if payload, err = os.ReadFile(f[1]); err == nil {
				err = agentRunsHook(".", hook+" "+strings.Join(f[2:], " "), payload)
			}
		case "append":
			var b []byte
			if b, err = os.ReadFile(f[1]); err == nil {
				var dst *os.File
				if dst, err = os.OpenFile(f[2], os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
					_, err = dst.Write(b)
					dst.Close()
				}
			}
		default:
			err = fmt.Errorf("unknown command %q", f[0])
		}
		if err != nil {
			fmt.Printf("%s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		} else {
			fmt.Println("ok")
		}
	}
	return 1
}

// replayer drives one replay agent.
type replayer struct {
	t    *testing.T
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	done bool
}

func startReplayer(t *testing.T, r testRepo, env ...string) *replayer {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = r.dir
	cmd.Env = append(append(cleanEnv(), replayAgentEnv+"="+bins.hook), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &replayer{t: t, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	t.Cleanup(func() {
		if !p.done {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return p
}

func (p *replayer) do(command string) {
	p.t.Helper()
	if _, err := fmt.Fprintln(p.in, command); err != nil {
		p.t.Fatal(err)
	}
	if !p.out.Scan() || p.out.Text() != "ok" {
		p.t.Fatalf("agent: %s: %q", command, p.out.Text())
	}
}

// exit ends the agent: its owner is gone once it is reaped.
func (p *replayer) exit() {
	p.t.Helper()
	fmt.Fprintln(p.in, "exit")
	p.in.Close()
	if err := p.cmd.Wait(); err != nil {
		p.t.Fatalf("agent: %v", err)
	}
	p.done = true
}

// sigintCase is what an agent does, recorded from the real CLI, when SIGINT
// stops its turn in -p: the turn's hooks and transcript, then two writes
// at once: the cancel into its transcript and its session-end hook.
type sigintCase struct {
	agent          string
	start, end     string    // the recorded payloads of the turn start and the session end
	args           [2]string // tether-hook's arguments for them, as the agent's config has them
	transcript     string    // the recorded transcript
	before, during int       // its lines written before the turn's hook and during the turn; the SIGINT writes the rest
	transcriptPath func(r testRepo, id string) string
	note           string // the end note the agent's reason gives
}

// record is what tether made of one replay, as status and the checkpoints
// show it.
type record struct {
	Phase       state.Phase
	EndReason   string
	Interrupted bool
	Note        string
	Turns       int
	Log         []string // the turn log's record kinds
	Checkpoint  []string // the turns of the session's checkpoints, with their flags
}

// TestSIGINTOneRecord: a SIGINT to claude -p or copilot -p mid-turn makes
// the agent write the user's cancel into its transcript and fire its
// session end at the same moment; the hook may read the transcript before
// or after the cancel lands, and a sweep may run at any point. Replayed in
// each order, with a sweep before, between, after and once the agent is
// gone (or none, or all of those), from the recorded payloads and
// transcripts, every replay gives the same record once a last sweep ran:
// the turn cancelled, the session ended by its agent, nothing interrupted.
func TestSIGINTOneRecord(t *testing.T) {
	cases := []sigintCase{{
		agent: "claude-code", start: "recorded/claude-code/UserPromptSubmit.json", end: "recorded/claude-code/SessionEnd_sigint.json",
		args:       [2]string{"claude-code", "claude-code"},
		transcript: "recorded/claude-code/transcript_p_sigint.jsonl", before: 3, during: 2,
		transcriptPath: func(r testRepo, id string) string { return r.transcript(id) },
		note:           "claude-code: other",
	}, {
		agent: "copilot", start: "recorded/copilot/userPromptSubmitted.json", end: "recorded/copilot/sessionEnd.json",
		args:       [2]string{"copilot userPromptSubmitted", "copilot sessionEnd"},
		transcript: "recorded/copilot/events_p_sigint.jsonl", before: 4, during: 5,
		transcriptPath: func(r testRepo, id string) string {
			return filepath.Join(r.scratch, "copilot", "session-state", id, "events.jsonl")
		},
		note: "copilot: complete",
	}}
	for _, c := range cases {
		t.Run(c.agent, func(t *testing.T) {
			r := newRepo(t)
			var want *record
			n := 0
			for _, cancelFirst := range []bool{true, false} {
				// Sweeps after the turn's writes (0), between the two
				// SIGINT writes (1), after both (2), once the agent is gone
				// (3): none, each alone, all.
				for _, sweeps := range [][]int{nil, {0}, {1}, {2}, {3}, {0, 1, 2, 3}} {
					n++
					got := replaySIGINT(t, r, c, fmt.Sprintf("sigint-%d", n), cancelFirst, sweeps)
					if want == nil {
						want = &got
						t.Logf("recorded as %+v", got)
					}
					if !equalRecords(got, *want) {
						t.Errorf("cancel first %v, sweeps at %v: %+v; the first replay gave %+v", cancelFirst, sweeps, got, *want)
					}
				}
			}
			if want.Phase != state.PhaseEnded || want.EndReason != state.EndSessionEnd || want.Interrupted || want.Note != c.note ||
				!slices.Equal(want.Log, []string{state.RecTurnStart, state.RecTurnEnd}) {
				t.Errorf("the record %+v; want the turn cancelled, the session ended cleanly by its agent", *want)
			}
		})
	}
}

func equalRecords(a, b record) bool {
	return a.Phase == b.Phase && a.EndReason == b.EndReason && a.Interrupted == b.Interrupted && a.Note == b.Note &&
		a.Turns == b.Turns && slices.Equal(a.Log, b.Log) && slices.Equal(a.Checkpoint, b.Checkpoint)
}

// replaySIGINT replays case c as session id, the cancel written before
// the session-end hook or after it, with a sweep at the given points.
func replaySIGINT(t *testing.T, r testRepo, c sigintCase, id string, cancelFirst bool, sweepAt []int) record {
	t.Helper()
	tr := c.transcriptPath(r, id)
	if err := os.MkdirAll(filepath.Dir(tr), 0o700); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, filepath.Join("..", "..", "agent", "testdata", c.transcript))
	scratch := t.TempDir()
	file := func(name string, b []byte) string {
		p := filepath.Join(scratch, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	before := file("before", bytes.Join(lines[:c.before], nil))
	during := file("during", bytes.Join(lines[c.before:c.before+c.during], nil))
	cancel := file("cancel", bytes.Join(lines[c.before+c.during:], nil))
	start, _ := samplePayload(t, r, "", c.start, id, tr)
	end, _ := samplePayload(t, r, "", c.end, id, tr)
	startFile, endFile := file("start.json", start), file("end.json", end)

	sweep := func(at int) {
		if !slices.Contains(sweepAt, at) {
			return
		}
		cmd := exec.Command(bins.sweep, "run", "--quiet")
		cmd.Dir, cmd.Env = r.dir, cleanEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("tether-sweep run: %v\n%s", err, out)
		}
	}
	agentEnv := []string{"COPILOT_HOME=" + filepath.Join(r.scratch, "copilot")}
	p := startReplayer(t, r, agentEnv...)
	p.do("append " + before + " " + tr)
	p.do("hook " + startFile + " " + c.args[0])
	p.do("append " + during + " " + tr)
	sweep(0)
	if cancelFirst {
		p.do("append " + cancel + " " + tr)
		sweep(1)
		p.do("hook " + endFile + " " + c.args[1])
	} else {
		p.do("hook " + endFile + " " + c.args[1])
		sweep(1)
		p.do("append " + cancel + " " + tr)
	}
	sweep(2)
	p.exit()
	sweep(3)
	// The last sweep, after all.
	sweepAt = append(sweepAt, 4)
	sweep(4)

	s := r.load(t, id)
	got := record{Phase: s.Phase, EndReason: s.EndReason, Interrupted: s.Interrupted, Note: s.EndNote, Turns: s.Turns}
	for _, rec := range r.turns(t, id) {
		got.Log = append(got.Log, rec.T)
	}
	cp, err := checkpoint.Open(r.common)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range s.Checkpoints {
		c, err := cp.Read(ref.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, turn := range c.Turns {
			b, _ := json.Marshal(struct {
				Turn                            int
				Interrupted, Running, Continued bool
			}{turn.Turn, turn.Interrupted, turn.Running, turn.Continued})
			got.Checkpoint = append(got.Checkpoint, string(b))
		}
	}
	return got
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}
