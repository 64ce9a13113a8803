//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/state"
)

// shHook starts the real hook the way agents run it, through /bin/sh -c.
func shHook(r testRepo, args string) *exec.Cmd {
	cmd := exec.Command("/bin/sh", "-c", "exec '"+bins.hook+"' "+args)
	cmd.Dir, cmd.Env = r.dir, cleanEnv()
	return cmd
}

// waitExit waits for the hook, killing it if it outlives hangGuard.
func waitExit(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(hangGuard):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the hook did not exit within %v: it is still waiting on its stdin", hangGuard)
		return nil
	}
}

// TestStdinLeftOpen: an agent that keeps the hook's stdin open, after a
// complete payload or without ever completing one, does not hold the hook
// (and so itself): the hook stops at the end of the payload's JSON value,
// or gives up after a bounded wait, and exits 0 either way.
func TestStdinLeftOpen(t *testing.T) {
	r := newRepo(t)
	for _, tc := range []struct {
		name    string
		id      string
		payload []byte
		phase   state.Phase // after the call; "" for no session
		stderr  string
	}{
		{"a complete payload", "open-1", claudePayload(t, r, "open-1", "UserPromptSubmit", map[string]any{"prompt": "hold on"}), state.PhaseActive, ""},
		{"a payload that never completes", "open-2", []byte(`{"session_id":"open-2","cwd":"` + r.dir + `","hook_event_name":"UserPromptSubmit","prompt":"never fini`), "", "no complete payload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := shHook(r, "claude-code")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer stdin.Close() // only once the hook is gone
			if _, err := stdin.Write(tc.payload); err != nil {
				t.Fatal(err)
			}
			if err := waitExit(t, cmd); err != nil {
				t.Fatalf("hook: %v (it must always exit 0)\nstderr: %s", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) || (tc.stderr == "") != (stderr.Len() == 0) {
				t.Errorf("stderr = %q, want %q", stderr.String(), tc.stderr)
			}
			s, err := r.store(t).Load(tc.id)
			switch {
			case tc.phase == "" && err == nil:
				t.Errorf("an incomplete payload recorded session %s: %+v", tc.id, s)
			case tc.phase != "" && (err != nil || s.Phase != tc.phase):
				t.Errorf("session %s: %+v, %v; want phase %s", tc.id, s, err, tc.phase)
			}
		})
	}
}

// TestAnswerToAClosedPipe: the agent closed the pipes it reads the hook's
// answer and messages from. Writing there raises SIGPIPE, which killed the
// hook (exit 141); the hook exits 0 and records the event all the same.
func TestAnswerToAClosedPipe(t *testing.T) {
	r := newRepo(t)
	closedPipe := func() *os.File {
		t.Helper()
		rd, wr, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		rd.Close() // no reader: a write gets EPIPE, and SIGPIPE
		t.Cleanup(func() { wr.Close() })
		return wr
	}
	for _, tc := range []struct {
		name, args string
		payload    []byte
		id         string
	}{
		// Cursor's verdict on stdout, with the prompt recorded.
		{"an answer on stdout", "cursor beforeSubmitPrompt",
			[]byte(`{"conversation_id":"pipe-1","hook_event_name":"beforeSubmitPrompt","workspace_roots":["` + r.dir + `"],"prompt":"go"}`), "pipe-1"},
		// A failure's one line on stderr.
		{"a failure on stderr", "claude-code", []byte(`{"session_id":"pipe-2","cwd":"` + r.dir + `"}`), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := shHook(r, tc.args)
			cmd.Stdin = bytes.NewReader(tc.payload)
			cmd.Stdout, cmd.Stderr = closedPipe(), closedPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if err := waitExit(t, cmd); err != nil {
				t.Fatalf("hook: %v; want exit 0 whatever the agent did with its pipes", err)
			}
			if tc.id != "" {
				if s, err := r.store(t).Load(tc.id); err != nil || s.Phase != state.PhaseActive {
					t.Errorf("session %s: %+v, %v; want it recorded", tc.id, s, err)
				}
			}
		})
	}
}
