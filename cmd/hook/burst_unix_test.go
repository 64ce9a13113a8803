//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/internal/bgsweep"
	"github.com/tetherdev/tether/state"
)

// burstAgentEnv makes the test binary the agent of TestBurst: it runs the
// hooks of its turns as children of its own, all at once.
const burstAgentEnv = "TETHER_HOOK_TEST_BURST_AGENT"

func init() {
	if spec := os.Getenv(burstAgentEnv); spec != "" {
		os.Exit(burstAgent(spec))
	}
}

// burstAgent fires, for each of n turns at once, a UserPromptSubmit and
// then a Stop hook, each through /bin/sh -c as Claude Code runs them, with
// its own PID as CLAUDE_PID. spec is "n dir transcript session hook".
func burstAgent(spec string) int {
	f := strings.Fields(spec)
	n, _ := strconv.Atoi(f[0])
	dir, transcript, id, hook := f[1], f[2], f[3], f[4]
	os.Setenv("CLAUDE_PID", strconv.Itoa(os.Getpid()))
	fire := func(payload map[string]any) error {
		payload["session_id"], payload["transcript_path"], payload["cwd"] = id, transcript, dir
		b, _ := json.Marshal(payload)
		return agentRunsHook(dir, hook+" claude-code", b)
	}
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range n {
		wg.Go(func() {
			prompt := fmt.Sprintf("turn %d of the burst", i)
			if err := fire(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": prompt, "prompt_id": "p-" + strconv.Itoa(i)}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				failed.Add(1)
			}
			if err := fire(map[string]any{"hook_event_name": "Stop", "stop_hook_active": false}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	return int(failed.Load())
}

// TestBurst: 50 turns of one session start and end at once, from the
// agent's children, while sweeps and commits run (captures add git
// processes to every turn boundary): many hooks find the session's lock
// busy past their wait, and spool their events. Nothing is lost: 50 turns
// are counted, each once in the turn log, and each once in the
// checkpoints once the session ends.
func TestBurst(t *testing.T) {
	const turns = 50
	r := newRepo(t)
	const id = "burst-1"
	// A sweep may find another holding the checkpoints lock past its
	// wait (one a commit started, gone on in the background): it says so
	// and stops, which only the last one, run alone, must not.
	sweep := func(args ...string) (string, error) {
		cmd := exec.Command(bins.sweep, args...)
		cmd.Dir, cmd.Env = r.dir, cleanEnv()
		out, err := cmd.CombinedOutput()
		if err != nil && !strings.Contains(string(out), "timed out waiting for lock") {
			t.Errorf("tether-sweep %v: %v\n%s", args, err, out)
		}
		return string(out), err
	}
	sweep("install", "--agent", "none")
	if err := os.MkdirAll(filepath.Dir(r.transcript(id)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.transcript(id), []byte("{\"type\":\"user\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runHook(t, r.dir, claudePayload(t, r, id, "SessionStart", map[string]any{"source": "startup"}), nil, "claude-code")

	// Sweeps and commits, over and over, while the burst runs.
	stop := make(chan struct{})
	var busy sync.WaitGroup
	var sweeps, commits atomic.Int32
	busy.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			sweep("run", "--quiet")
			sweeps.Add(1)
		}
	})
	busy.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := os.WriteFile(filepath.Join(r.dir, "work.txt"), []byte(strconv.Itoa(i)), 0o644); err != nil {
				t.Error(err)
				return
			}
			git(t, r.dir, "add", "work.txt")
			git(t, r.dir, "commit", "-qm", "work "+strconv.Itoa(i))
			commits.Add(1)
		}
	})
	agentCmd := exec.Command(os.Args[0], "-test.run=^$")
	agentCmd.Dir = r.dir
	agentCmd.Env = append(cleanEnv(), burstAgentEnv+"="+strings.Join([]string{strconv.Itoa(turns), r.dir, r.transcript(id), id, bins.hook}, " "))
	out, err := agentCmd.CombinedOutput()
	close(stop)
	busy.Wait()
	if err != nil {
		t.Fatalf("the agent's hooks failed: %v\n%s", err, out)
	}

	spooled := 0
	for _, l := range r.logLines(t) {
		if strings.HasPrefix(l.Msg, "event spooled") {
			spooled++
		}
	}
	t.Logf("%d turn starts and ends, %d sweeps and %d commits meanwhile; %d events spooled", 2*turns, sweeps.Load(), commits.Load(), spooled)

	// Every reader sees the 50 turns, before any writer applied what waits.
	if s := r.load(t, id); s.Turns != turns {
		t.Fatalf("a reader sees %d turns, want %d", s.Turns, turns)
	}
	runHook(t, r.dir, claudePayload(t, r, id, "SessionEnd", map[string]any{"reason": "other"}), nil, "claude-code")
	// The last sweep condenses it all, once the others are done with the
	// checkpoints.
	for deadline := time.Now().Add(4 * hangGuard); ; {
		bgsweep.Wait(filepath.Join(r.common, "tether"), hangGuard)
		out, err := sweep("run", "--quiet")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the last sweep: %v\n%s", err, out)
		}
	}

	s := r.load(t, id)
	if s.Turns != turns || s.Phase != state.PhaseEnded || s.HasPending() {
		t.Fatalf("after the session's end: %d turns, phase %s, pending %v; want %d, ended, all condensed", s.Turns, s.Phase, s.HasPending(), turns)
	}
	var logged []string
	for _, rec := range r.turns(t, id) {
		if rec.T == state.RecTurnStart {
			logged = append(logged, rec.Prompt)
		}
	}
	checkEachOnce(t, "the turn log", logged, turns)

	cp, err := checkpoint.Open(r.common)
	if err != nil {
		t.Fatal(err)
	}
	var condensed []string
	for _, ref := range s.Checkpoints {
		c, err := cp.Read(ref.ID)
		if err != nil {
			t.Fatalf("checkpoint %s: %v", ref.ID, err)
		}
		for _, turn := range c.Turns {
			if !turn.Continued {
				condensed = append(condensed, turn.Prompt)
			}
		}
	}
	checkEachOnce(t, "the checkpoints", condensed, turns)
	if left, err := r.store(t).Spooled(); err != nil || len(left) > 0 {
		t.Errorf("the spool still holds %v (%v)", left, err)
	}
}

// checkEachOnce checks that prompts hold each of the n turns' prompts once.
func checkEachOnce(t *testing.T, where string, prompts []string, n int) {
	t.Helper()
	slices.Sort(prompts)
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("turn %d of the burst", i))
	}
	slices.Sort(want)
	if !slices.Equal(prompts, want) {
		t.Errorf("%s holds %d turn prompts, want each of the %d once: %q", where, len(prompts), n, prompts)
	}
}

// agentRunsHook runs a hook command through /bin/sh -c in dir, as the
// agents run theirs, its payload waiting in the pipe, written and closed
// as the agent writes it (no goroutine of ours to copy it); a hook that
// fails or says anything is an error.
func agentRunsHook(dir, command string, payload []byte) error {
	rd, wr, err := os.Pipe()
	if err != nil {
		return err
	}
	defer rd.Close()
	_, err = wr.Write(payload)
	wr.Close()
	if err != nil {
		return err
	}
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Dir, cmd.Stdin = dir, rd
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		return fmt.Errorf("hook: %v %s", err, out)
	}
	return nil
}
