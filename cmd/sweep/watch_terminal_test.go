package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/internal/bgsweep"
)

// TestWatchInTerminal runs status --watch in a real terminal (a tmux pane):
// the table redrawn in place as an agent starts to wait and is approved;
// q quits, Ctrl-C too, and each time the terminal is as it was (its screen
// back, the line discipline cooked).
func TestWatchInTerminal(t *testing.T) {
	term := newTerminal(t, "tether-watch")
	tools, work, repo, env := term.tools, term.work, term.repo, term.env
	dialog := filepath.Join(work, "dialog.json")
	approved := filepath.Join(work, "approved.json")
	for path, payload := range map[string]string{
		dialog:   `{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"npm test"}}`,
		approved: `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"npm test"}}`,
	} {
		if err := os.WriteFile(path, []byte(payload), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	tm := func(args ...string) string {
		t.Helper()
		return string(term.tm(args...))
	}
	waitScreen := func(what string, want func(string) bool) string {
		t.Helper()
		var screen string
		for deadline := time.Now().Add(60 * time.Second); ; { // a hang guard, not a timing assertion
			screen = tm("capture-pane", "-p", "-t", "watch")
			if want(screen) {
				return screen
			}
			if time.Now().After(deadline) {
				t.Fatalf("waited for %s; the screen:\n%s", what, screen)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// The terminal's modes before and after: "icanon" when cooked. The
	// second watch starts on a line typed once the first one's end is seen.
	script := "cd " + shellQuote(repo) + " && unset NO_COLOR COLUMNS; echo before-watch; stty -a | grep -o -- '-*icanon'; " +
		"tether-sweep status --watch; stty -a | grep -o -- '-*icanon'; echo after-q; read -r again; " +
		"tether-sweep status --watch; echo after-ctrl-c; sleep 600"
	tm("new-session", "-d", "-x", "150", "-y", "30", "-s", "watch", script)
	waitScreen("the watch", func(s string) bool { return strings.Contains(s, "watching this repository · q quits") })

	agent := exec.Command(filepath.Join(tools, "claude"), "--settings", "--quiet", "--session", "watched-0001",
		"--transcript", filepath.Join(work, "w.jsonl"), "start", "begin=run the tests", "replay="+dialog, "sleep=2s", "replay="+approved, "hang")
	agent.Dir, agent.Env = repo, env
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		agent.Process.Kill()
		agent.Wait()
		bgsweep.Wait(filepath.Join(repo, ".git", "tether"), time.Minute)
	})
	screen := waitScreen("the wait", func(s string) bool { return strings.Contains(s, "permission to run Bash `npm test`") })
	if !strings.Contains(screen, "watched- ") && !strings.Contains(screen, "watched-0") || strings.Contains(screen, "before-watch") {
		t.Errorf("the watch does not fill its own screen with the table:\n%s", screen)
	}
	waitScreen("the approval", func(s string) bool { return strings.Contains(s, "active") && !strings.Contains(s, "WAITS FOR") })

	tm("send-keys", "-t", "watch", "q")
	screen = waitScreen("q to quit", func(s string) bool { return strings.Contains(s, "after-q") })
	if !strings.Contains(screen, "before-watch") || strings.Count(screen, "icanon") != 2 || strings.Contains(screen, "-icanon") ||
		strings.Contains(screen, "q quits") {
		t.Errorf("after q, the terminal is not as it was (its screen, cooked):\n%s", screen)
	}
	tm("send-keys", "-t", "watch", "Enter")
	waitScreen("the second watch", func(s string) bool { return strings.Contains(s, "q quits") })
	tm("send-keys", "-t", "watch", "C-c")
	waitScreen("Ctrl-C to quit", func(s string) bool { return strings.Contains(s, "after-ctrl-c") })
}
