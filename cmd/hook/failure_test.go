package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/state"
)

// assertFailed checks the hook's promise for a failure of its own: nothing
// on stdout but the protocol's answer, exactly one line on stderr, exactly
// one new ERROR line in the log (the log had logBefore lines), and a warning
// for status.
func assertFailed(t *testing.T, r testRepo, run hookRun, stdout string, logBefore int, since time.Time, want string) {
	t.Helper()
	if run.stdout != stdout {
		t.Errorf("stdout = %q, want %q", run.stdout, stdout)
	}
	lines := strings.Split(strings.TrimSuffix(run.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasSuffix(run.stderr, "\n") || !strings.HasPrefix(lines[0], "tether-hook: ") {
		t.Errorf("stderr = %q, want exactly one line starting with \"tether-hook: \"", run.stderr)
	}
	if !strings.Contains(run.stderr, want) {
		t.Errorf("stderr = %q, want it to mention %q", run.stderr, want)
	}
	logs := r.logLines(t)
	if len(logs)-logBefore != 1 {
		t.Fatalf("log has %d new lines, want 1: %+v", len(logs)-logBefore, logs[min(logBefore, len(logs)):])
	}
	if l := logs[len(logs)-1]; l.Level != "ERROR" || l.Msg != "hook failed" || !strings.Contains(l.Err, want) {
		t.Errorf("log line = %+v, want ERROR \"hook failed\" mentioning %q", l, want)
	}
	warns, err := r.store(t).Warnings(since)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range warns {
		found = found || strings.HasPrefix(w.Msg, "hook failed: ") && strings.Contains(w.Msg, want)
	}
	if !found {
		t.Errorf("Warnings(%v) = %+v, want the hook's failure mentioning %q", since, warns, want)
	}
}

func TestBadPayloads(t *testing.T) {
	r := newRepo(t)
	good := claudePayload(t, r, "s1", "UserPromptSubmit", map[string]any{"prompt": "hi"})
	huge := claudePayload(t, r, "s1", "UserPromptSubmit", map[string]any{"prompt": strings.Repeat("x", maxPayload)})
	cursorish := claudePayload(t, r, "s1", "UserPromptSubmit", map[string]any{
		"conversation_id": "s1", "workspace_roots": []string{r.dir}, "prompt": "hi"})
	for _, tc := range []struct {
		name    string
		args    []string
		payload []byte
		want    string
	}{
		{"no arguments", nil, good, "usage"},
		{"non-JSON", []string{"claude-code"}, []byte("hello, hook"), "not valid JSON"},
		{"truncated", []string{"claude-code"}, good[:len(good)/2], "not valid JSON"},
		{"JSON but not an object", []string{"claude-code"}, []byte(`["UserPromptSubmit"]`), "not a JSON object"},
		{"empty", []string{"claude-code"}, nil, "empty payload"},
		{"blank", []string{"claude-code"}, []byte(" \n\t\n"), "empty payload"},
		{"over 4 MiB", []string{"claude-code"}, huge, "payload over 4 MiB"},
		{"unknown agent", []string{"claude-desktop"}, good, "unknown agent"},
		{"another agent's payload", []string{"claude-code"}, cursorish, "does not look like claude-code's"},
		{"another agent's event", []string{"cursor"}, good, "does not look like cursor's"},
		{"session ID leading out of the store", []string{"claude-code"},
			claudePayload(t, r, "../../etc/passwd", "SessionStart", nil), "invalid session id"},
		{"field of the wrong type", []string{"claude-code"}, []byte(`{"session_id":7,"hook_event_name":"Stop"}`), "wrong type"},
		{"no event", []string{"claude-code"}, []byte(`{"session_id":"s1","cwd":"/"}`), "no event name"},
		// Payload text in the message must not break it over lines.
		{"cwd that does not exist, with a newline", []string{"claude-code"},
			[]byte(`{"session_id":"s1","cwd":"/nonexistent\nsecond line","hook_event_name":"Stop"}`), "find repository from /nonexistent second line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, since := len(r.logLines(t)), time.Now().Add(-time.Second)
			// Run from the repository, as agents run hooks in the project:
			// with no usable payload that is where the failure is logged.
			run := runHook(t, r.dir, tc.payload, nil, tc.args...)
			assertFailed(t, r, run, "", before, since, tc.want)
		})
	}
	if _, err := os.Stat(filepath.Join(r.common, "tether", "sessions")); err == nil {
		t.Error("a refused payload created session state")
	}
}

// TestHelp: a person asking tether-hook for help gets it on stdout, and
// nothing is logged: status has no warning to show for it.
func TestHelp(t *testing.T) {
	r := newRepo(t)
	for _, arg := range []string{"-h", "--help", "help"} {
		before := len(r.logLines(t))
		run := runHook(t, r.dir, nil, nil, arg)
		if !strings.HasPrefix(run.stdout, "usage: tether-hook <agent> [event] < payload\n") || !strings.Contains(run.stdout, "claude-code") || run.stderr != "" {
			t.Errorf("tether-hook %s: stdout %q, stderr %q", arg, run.stdout, run.stderr)
		}
		if logs := r.logLines(t); len(logs) != before {
			t.Errorf("tether-hook %s logged %+v", arg, logs[before:])
		}
	}
}

// TestBadPayloadOutsideRepo: with no repository to log in, the failure is
// still one line on stderr, and nothing is created anywhere.
func TestBadPayloadOutsideRepo(t *testing.T) {
	dir := t.TempDir()
	run := runHook(t, dir, []byte("{not json"), nil, "claude-code")
	if run.stdout != "" || strings.Count(run.stderr, "\n") != 1 || !strings.Contains(run.stderr, "not valid JSON") {
		t.Errorf("stdout %q, stderr %q: want nothing and one line", run.stdout, run.stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("hook created %v in its working directory", ents)
	}
}

// TestOutsideRepoIsSilent: a session in a directory that is not a git
// repository is none of tether's business.
func TestOutsideRepoIsSilent(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := testRepo{dir: dir, scratch: t.TempDir()}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"} {
		run := runHook(t, dir, claudePayload(t, r, "s1", ev, map[string]any{"prompt": "hi"}), nil, "claude-code")
		if run.stdout != "" || run.stderr != "" {
			t.Errorf("%s outside a repository: stdout %q, stderr %q, want both empty", ev, run.stdout, run.stderr)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("hook created %v outside any repository", ents)
	}
}

// TestHugePayloadIsDrained: the agent's write of an oversized payload
// completes; the hook does not leave it writing into a closed pipe.
func TestHugePayloadIsDrained(t *testing.T) {
	r := newRepo(t)
	payload := claudePayload(t, r, "s1", "UserPromptSubmit", map[string]any{"prompt": strings.Repeat("y", 3*maxPayload)})
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins.hook, "claude-code")
	cmd.Dir, cmd.Env = r.dir, cleanEnv()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_, werr := in.Write(payload)
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("hook: %v", err)
	}
	if werr != nil {
		t.Errorf("the agent's write of a %d-byte payload failed: %v", len(payload), werr)
	}
	if !strings.Contains(stderr.String(), "payload over 4 MiB") {
		t.Errorf("stderr = %q", stderr.String())
	}
}

// TestCursorAnsweredOnFailure: Cursor waits for a verdict on each prompt,
// so it gets one even when the payload is unreadable or recording fails.
func TestCursorAnsweredOnFailure(t *testing.T) {
	r := newRepo(t)
	const answer = `{"continue":true}` + "\n"
	before, since := len(r.logLines(t)), time.Now().Add(-time.Second)
	run := runHook(t, r.dir, []byte(`{"conversation_id":`), nil, "cursor", "beforeSubmitPrompt")
	assertFailed(t, r, run, answer, before, since, "not valid JSON")

	// Recording fails: the store cannot be written.
	if err := os.MkdirAll(filepath.Join(r.common, "tether"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.common, "tether", "locks"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	payload := []byte(`{"conversation_id":"c1","hook_event_name":"beforeSubmitPrompt","workspace_roots":["` + r.dir + `"],"prompt":"go"}`)
	before = len(r.logLines(t))
	run = runHook(t, r.dir, payload, nil, "cursor", "beforeSubmitPrompt")
	assertFailed(t, r, run, answer, before, since, "locks")
}

// startLockHolder starts a process that holds the lock of session id
// until the returned func kills it.
func startLockHolder(t *testing.T, r testRepo, id string) (kill func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdLockEnv+"="+id, holdStoreEnv+"="+r.common)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		kill()
		t.Fatalf("lock holder: %q, %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return kill
}

// TestLockContention: a process that holds the session's lock forever
// costs the hook its bounded wait, not the agent's turn: the event is
// spooled, every reader sees it, and the next writer applies it before
// its own, once.
func TestLockContention(t *testing.T) {
	r := newRepo(t)
	runHook(t, r.dir, claudePayload(t, r, "busy", "SessionStart", map[string]any{"source": "startup"}), nil, "claude-code")
	kill := startLockHolder(t, r, "busy")
	run := runHook(t, r.dir, claudePayload(t, r, "busy", "UserPromptSubmit", map[string]any{"prompt": "blocked"}), nil, "claude-code")
	if run.stdout != "" || run.stderr != "" {
		t.Errorf("stdout %q, stderr %q; the event is kept, nothing failed", run.stdout, run.stderr)
	}
	if l := r.logLines(t); !slices.ContainsFunc(l, func(l logLine) bool { return strings.HasPrefix(l.Msg, "event spooled") && l.Session == "busy" }) {
		t.Errorf("the log does not say the event was spooled: %+v", l)
	}
	if s := r.load(t, "busy"); s.Phase != state.PhaseActive || s.Turns != 1 || s.LastPrompt != "blocked" || s.Owner == nil {
		t.Errorf("a reader sees phase %q, %d turns, prompt %q, owner %v; want the spooled turn running, its owner known", s.Phase, s.Turns, s.LastPrompt, s.Owner)
	}
	status := exec.Command(bins.sweep, "status", "--json", "--no-sweep")
	status.Dir, status.Env = r.dir, cleanEnv()
	out, err := status.Output()
	if err != nil {
		t.Fatalf("tether-sweep status: %v", err)
	}
	var st struct {
		Sessions []struct {
			ID, Phase string
			Turns     int
		}
		Warnings []string
	}
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if len(st.Sessions) != 1 || st.Sessions[0].Turns != 1 || len(st.Warnings) != 0 {
		t.Errorf("status shows %+v; want the spooled turn, no warning", st)
	}

	// The holder gone, the next turn goes through, after the spooled one.
	kill()
	runHook(t, r.dir, claudePayload(t, r, "busy", "Stop", nil), nil, "claude-code")
	run = runHook(t, r.dir, claudePayload(t, r, "busy", "UserPromptSubmit", map[string]any{"prompt": "free"}), nil, "claude-code")
	if run.stdout != "" || run.stderr != "" {
		t.Errorf("stdout %q, stderr %q", run.stdout, run.stderr)
	}
	if s := r.load(t, "busy"); s.Phase != state.PhaseActive || s.Turns != 2 || s.LastPrompt != "free" {
		t.Errorf("after the holder died: phase %q, %d turns, prompt %q", s.Phase, s.Turns, s.LastPrompt)
	}
	var prompts []string
	for _, rec := range r.turns(t, "busy") {
		prompts = append(prompts, rec.T+" "+rec.Prompt)
	}
	if want := []string{"turn-start blocked", "turn-end ", "turn-start free"}; !slices.Equal(prompts, want) {
		t.Errorf("turn log %q, want %q", prompts, want)
	}
}
