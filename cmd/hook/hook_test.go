package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/agent"
	"github.com/tetherdev/tether/state"
)

// inProcess is a hook run inside the test process against repository r:
// buffers for its streams, an empty environment, r as its working
// directory, and no sweep to launch.
func inProcess(r testRepo, stdin []byte, args ...string) (h *hook, stdout, stderr *bytes.Buffer) {
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	h = &hook{
		args:        args,
		stdin:       bytes.NewReader(stdin),
		stdout:      stdout,
		stderr:      stderr,
		getenv:      func(string) string { return "" },
		getwd:       func() (string, error) { return r.dir, nil },
		sweepBinary: func() string { return "" },
		self:        func() string { return "" },
	}
	return h, stdout, stderr
}

func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"two\nlines", "two lines"},
		{"crlf\r\nend\n", "crlf  end "},
		{"tab\there, nul\x00, del\x7f", "tab here, nul , del "},
		{"prompt «ünïcode» 提示", "prompt «ünïcode» 提示"},
		{"next line\u0085c1", "next line c1"},
	} {
		if got := oneLine(tc.in); got != tc.want {
			t.Errorf("oneLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestThrottled(t *testing.T) {
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if throttled(root) {
		t.Error("throttled without a stamp")
	}
	now := time.Now()
	for _, tc := range []struct {
		name  string
		stamp time.Time
		want  bool
	}{
		{"just now", now, true},
		{"within the minute", now.Add(-healEvery / 2), true},
		{"over a minute ago", now.Add(-healEvery - time.Second), false},
		{"from the future", now.Add(time.Hour), false},
	} {
		if err := stamp(root, tc.stamp); err != nil {
			t.Fatal(err)
		}
		if got := throttled(root); got != tc.want {
			t.Errorf("%s: throttled = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestThrottleStaysInStore: a symlink planted as the stamp does not lead
// the hook to touch a file outside the store.
func TestThrottleStaysInStore(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(outside, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-24 * time.Hour)
	if err := os.Chtimes(outside, old, old); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, throttleFile)); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := stamp(root, time.Now()); err == nil {
		t.Error("stamp followed a symlink out of the store")
	}
	if fi, err := os.Stat(outside); err != nil || !fi.ModTime().Equal(old) || fi.Size() != 4 {
		t.Errorf("the file outside the store was touched: %v, %v", fi.ModTime(), err)
	}
}

// TestArguments: the event may come as an argument, and Codex's notify
// program passes the payload as the last argument instead of on stdin.
func TestArguments(t *testing.T) {
	r := newRepo(t)
	notify := func(id string) string {
		b, _ := json.Marshal(map[string]any{"type": "agent-turn-complete", "thread-id": id, "cwd": r.dir})
		return string(b)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		stdin []byte
		id    string
		phase state.Phase
	}{
		{"event from the payload", []string{"claude-code"}, claudePayload(t, r, "a1", "SessionStart", nil), "a1", state.PhaseIdle},
		{"event argument, payload names its own", []string{"claude-code", "Stop"}, claudePayload(t, r, "a2", "UserPromptSubmit", nil), "a2", state.PhaseActive},
		{"payload without an event name", []string{"copilot", "userPromptSubmitted"},
			[]byte(`{"sessionId":"a3","cwd":"` + r.dir + `","prompt":"p"}`), "a3", state.PhaseActive},
		{"notify: payload as the only argument", []string{"codex", notify("a4")}, nil, "a4", state.PhaseIdle},
		{"notify: stdin ignored", []string{"codex", notify("a5")}, []byte("not read"), "a5", state.PhaseIdle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.args[0] == "codex" {
				// Notify only ends a turn of a session the hooks record.
				h, _, _ := inProcess(r, claudePayload(t, r, tc.id, "UserPromptSubmit", nil), "codex")
				h.run()
			}
			h, stdout, stderr := inProcess(r, tc.stdin, tc.args...)
			h.run()
			if stdout.Len() > 0 || stderr.Len() > 0 {
				t.Fatalf("stdout %q, stderr %q", stdout, stderr)
			}
			if s := r.load(t, tc.id); s.Phase != tc.phase {
				t.Errorf("phase %q, want %q", s.Phase, tc.phase)
			}
		})
	}
}

// TestNoPayloadFromTerminal: run by hand with a terminal on stdin, the hook
// says so instead of waiting for input that never comes. Any character
// device counts; the null device is one that cannot hang the test.
func TestNoPayloadFromTerminal(t *testing.T) {
	dev, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if fi, err := dev.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Skipf("%s is not a character device here", os.DevNull)
	}
	r := newRepo(t)
	h, _, stderr := inProcess(r, nil, "claude-code")
	h.stdin = dev
	h.run()
	if !strings.Contains(stderr.String(), "no payload on stdin") {
		t.Errorf("stderr = %q", stderr)
	}
}

// TestIgnoredEventsWriteNothing: tool calls and the like never touch the
// store, so they cost the agent nothing.
func TestIgnoredEventsWriteNothing(t *testing.T) {
	r := newRepo(t)
	for _, ev := range []string{"PreToolUse", "PostToolUse", "Notification", "SubagentStop", "PreCompact"} {
		h, stdout, stderr := inProcess(r, claudePayload(t, r, "quiet", ev, nil), "claude-code")
		h.run()
		if stdout.Len() > 0 || stderr.Len() > 0 {
			t.Errorf("%s: stdout %q, stderr %q", ev, stdout, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(r.common, "tether")); !os.IsNotExist(err) {
		t.Errorf("ignored events created the store (%v)", err)
	}
}

// FuzzHook feeds arbitrary payloads to the hook in-process, against a real
// repository: it must never panic, always return, print nothing on stdout
// but Cursor's answer, and say at most one line on stderr.
func FuzzHook(f *testing.F) {
	r := newRepo(f)
	names := append(agent.Names(), "no-such-agent")
	for i, name := range names {
		seeds, _ := filepath.Glob(filepath.Join("..", "..", "agent", "testdata", name, "*.json"))
		recorded, _ := filepath.Glob(filepath.Join("..", "..", "agent", "testdata", "recorded", name, "*.json"))
		seeds = append(seeds, recorded...)
		for _, p := range seeds {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			var m map[string]any
			if json.Unmarshal(b, &m) == nil {
				if _, ok := m["cwd"]; ok {
					m["cwd"] = r.dir
				}
				if _, ok := m["workspace_roots"]; ok {
					m["workspace_roots"] = []string{r.dir}
				}
				b, _ = json.Marshal(m)
			}
			f.Add(uint8(i), strings.TrimSuffix(filepath.Base(p), ".json"), b)
		}
	}
	f.Add(uint8(0), "", []byte(`{"session_id":"s","cwd":"`+r.dir+`","hook_event_name":"UserPromptSubmit","prompt":"a\nb"}`))
	f.Add(uint8(3), "beforeSubmitPrompt", []byte(`{"conversation_id":"c","workspace_roots":["`+r.dir+`"]`))
	f.Add(uint8(2), `{"type":"agent-turn-complete","thread-id":"t","cwd":"`+r.dir+`"}`, []byte(nil))
	f.Add(uint8(0), "Stop", []byte(`{"session_id":"x\n`+"\x00"+`","hook_event_name":"Sto\np"}`))
	f.Add(uint8(5), "", []byte("\xff\xfe"))

	f.Fuzz(func(t *testing.T, which uint8, event string, payload []byte) {
		name := names[int(which)%len(names)]
		args := []string{name}
		if event != "" {
			args = append(args, event)
		}
		h, stdout, stderr := inProcess(r, payload, args...)
		h.run()
		if out := stdout.String(); out != "" && (name != "cursor" || out != cursorAnswer) {
			t.Errorf("stdout %q for agent %s", out, name)
		}
		if e := stderr.String(); strings.Count(e, "\n") > 1 || e != "" && !strings.HasSuffix(e, "\n") {
			t.Errorf("stderr is not at most one line: %q", e)
		}
	})
}

// BenchmarkHookTurnStart is one turn start, in-process: parse, find the
// repository, resolve the owner, and the locked, durable write of the turn
// record and the state.
func BenchmarkHookTurnStart(b *testing.B) {
	r := newRepo(b)
	payload := claudePayload(b, r, "bench", "UserPromptSubmit", map[string]any{"prompt": "say hi"})
	appendLine(b, r.transcript("bench"), `{"type":"user"}`)
	b.ReportAllocs()
	for b.Loop() {
		h, _, stderr := inProcess(r, payload, "claude-code")
		h.run()
		if stderr.Len() > 0 {
			b.Fatal(stderr.String())
		}
	}
}
