package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// runAgent runs the stand-in agent to completion with actions, recording
// session id in r through the real hook, and returns its PID.
func runAgent(t *testing.T, r testRepo, id string, actions ...string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins.claude, agentArgs(r, bins.hook+" claude-code", id, actions...)...)
	cmd.Dir, cmd.Env = r.dir, cleanEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("stand-in agent %v: %v\n%s", actions, err, out.String())
	}
	return cmd.Process.Pid
}

// agentArgs are the stand-in's arguments: hook is its hook command, run
// with /bin/sh -c.
func agentArgs(r testRepo, hook, id string, actions ...string) []string {
	return append([]string{"--hook", hook, "--session", id,
		"--transcript", r.transcript(id), "--cwd", r.dir}, actions...)
}

// deadSession leaves session id idle with an owner that has exited: a real
// agent that ran a turn and went away without a session end.
func deadSession(t *testing.T, r testRepo, id string) {
	t.Helper()
	pid := runAgent(t, r, id, "start", "turn=work")
	s := r.load(t, id)
	if s.Owner == nil || s.Owner.PID != pid {
		t.Fatalf("session %s: owner %+v, want the agent (pid %d)", id, s.Owner, pid)
	}
	if v := proclive.Check(*s.Owner); v.Liveness != proclive.Dead {
		t.Fatalf("owner of %s after the agent exited: %v", id, v)
	}
}

func countLog(lines []logLine, msg string) int {
	n := 0
	for _, l := range lines {
		if l.Msg == msg {
			n++
		}
	}
	return n
}

const sweepStarted = "self-heal: background sweep started"

// TestSelfHeal: a session start that finds a session whose owner is dead
// launches the sweep in the background, which finalizes it; another
// session start within the minute launches nothing.
func TestSelfHeal(t *testing.T) {
	r := newRepo(t)
	deadSession(t, r, "dead-1")

	start := func(id string) {
		run := runHook(t, r.dir, claudePayload(t, r, id, "SessionStart", map[string]any{"source": "startup"}), nil, "claude-code")
		if run.stdout != "" || run.stderr != "" {
			t.Fatalf("session start of %s: stdout %q, stderr %q", id, run.stdout, run.stderr)
		}
	}
	start("live-1")
	if n := countLog(r.logLines(t), sweepStarted); n != 1 {
		t.Fatalf("%d %q lines after the first session start, want 1", n, sweepStarted)
	}
	waitFor(t, "the background sweep to finalize dead-1", func() bool {
		s, err := r.store(t).Load("dead-1")
		return err == nil && s.Phase == state.PhaseEnded
	})
	if s := r.load(t, "dead-1"); s.EndReason != state.EndOwnerExited || s.Interrupted {
		t.Errorf("dead-1 ended with reason %q, interrupted %v; want %q", s.EndReason, s.Interrupted, state.EndOwnerExited)
	}
	if s := r.load(t, "live-1"); s.Phase != state.PhaseIdle {
		t.Errorf("live-1 is %q after the sweep, want idle (its owner lives)", s.Phase)
	}
	waitSweepExit(t, r)

	// Another dead session, another session start, within the minute.
	deadSession(t, r, "dead-2")
	start("live-2")
	if n := countLog(r.logLines(t), sweepStarted); n != 1 {
		t.Errorf("%d %q lines after the second session start, want still 1 (throttled)", n, sweepStarted)
	}
	if s := r.load(t, "dead-2"); s.Phase != state.PhaseIdle {
		t.Errorf("dead-2 is %q, want idle: no sweep should have run", s.Phase)
	}
	if _, err := os.Stat(filepath.Join(r.common, "tether", throttleFile)); err != nil {
		t.Errorf("throttle file: %v", err)
	}
}

// TestSessionStartAmongManySessions: with more live sessions than it looks
// at itself, a session start opens none of theirs (inotify watches
// sessions/ while the real hook runs) and hands the check to the
// background sweep, which leaves them alive. Its cost does not grow with
// their number: with 10,000 it took over half a second.
func TestSessionStartAmongManySessions(t *testing.T) {
	r := newRepo(t)
	st := r.store(t)
	self, err := proclive.Self()
	if err != nil {
		t.Fatal(err)
	}
	const many = healScan + 10
	for i := range many {
		if _, err := st.Mutate(fmt.Sprintf("other-%03d", i), func(s *state.Session) error {
			s.Agent, s.Phase, s.Owner = "claude-code", state.PhaseIdle, &self
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, filepath.Join(r.common, "tether", "sessions"), unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	// The background sweep opens every session's file: it waits at a gate
	// until the hook's own opens are counted.
	hook, release := heldSweep(t)
	runHookAt(t, hook, r.dir, claudePayload(t, r, "newcomer", "SessionStart", map[string]any{"source": "startup"}), nil, "claude-code")

	opened := map[string]bool{}
	buf := make([]byte, 256<<10)
	for {
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off < n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			if s := string(bytes.TrimRight(name, "\x00")); s != "" && !strings.HasPrefix(s, "newcomer.") {
				opened[s] = true
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
	if len(opened) != 0 {
		t.Errorf("a session start opened %d other sessions' files (%d live)", len(opened), many)
	}
	release()
	if n := countLog(r.logLines(t), sweepStarted); n != 1 {
		t.Errorf("%d %q lines, want 1: the background sweep checks them", n, sweepStarted)
	}
	waitSweepExit(t, r)
	if list, _, err := st.List(); err != nil || len(list) != many+1 {
		t.Errorf("after the sweep: %d live sessions, %v; want all %d", len(list), err, many+1)
	}
}

// heldSweep gives a tether-hook whose tether-sweep (beside it) waits at a
// gate, a FIFO, before it runs the real one: the test decides when the
// background sweep starts. release opens the gate; it is also called at
// cleanup, so no sweep is left waiting.
func heldSweep(t *testing.T) (hook string, release func()) {
	t.Helper()
	dir := t.TempDir()
	hook = filepath.Join(dir, "tether-hook")
	if err := os.Link(bins.hook, hook); err != nil {
		data, err := os.ReadFile(bins.hook)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(hook, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gate := filepath.Join(dir, "gate")
	if err := unix.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\ncat %q >/dev/null\nexec %q \"$@\"\n", gate, bins.sweep)
	if err := os.WriteFile(filepath.Join(dir, "tether-sweep"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			// Opening the write end waits for the reader: the sweep was
			// started, as the test expects, or the wait ends at the timeout.
			f, err := os.OpenFile(gate, os.O_WRONLY|unix.O_NONBLOCK, 0)
			for deadline := time.Now().Add(hangGuard); err != nil && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
				f, err = os.OpenFile(gate, os.O_WRONLY|unix.O_NONBLOCK, 0)
			}
			if err == nil {
				f.Close()
			}
		})
	}
	t.Cleanup(release)
	return hook, release
}

// waitFor polls cond until it holds, failing after hangGuard.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitSweepExit waits until the sweep the log says was started has
// exited, so it never writes into a repository being removed.
func waitSweepExit(t *testing.T, r testRepo) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.common, "tether", "log", "tether.log"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if !strings.Contains(line, sweepStarted) {
			continue
		}
		_, rest, _ := strings.Cut(line, `"pid":`)
		pid, err := strconv.Atoi(strings.TrimRight(rest, "}\n"))
		if err != nil {
			t.Fatalf("no pid in %q", line)
		}
		// Capture fails once the process is gone or a zombie.
		waitFor(t, "the background sweep to exit", func() bool { _, err := proclive.Capture(pid); return err != nil })
	}
}
