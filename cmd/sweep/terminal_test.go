package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/internal/bgsweep"
)

// TestStatusInTerminal runs status in a real terminal (a tmux pane 100
// columns wide), where it colours phase and liveness, and checks what a
// person sees: every column starts where its header does, on every row,
// and nothing wraps.
func TestStatusInTerminal(t *testing.T) {
	term := newTerminal(t, "tether-test")
	tools, work, repo, env, run := term.tools, term.work, term.repo, term.env, term.run

	// Sessions whose phase and liveness differ in length and colour: one
	// at work, one idle, one ended.
	agent := func(session string, actions ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(tools, "claude"), append([]string{"--quiet", "--session", session,
			"--transcript", filepath.Join(work, session+".jsonl")}, actions...)...)
		cmd.Dir, cmd.Env = repo, env
		return cmd
	}
	run(repo, "tether-sweep", "version") // the build is warm before the agents start
	ended := agent("term-ended-0001", "start", "turn=a turn that ended", "end=logout")
	if out, err := ended.CombinedOutput(); err != nil {
		t.Fatalf("agent: %v\n%s", err, out)
	}
	var live []*exec.Cmd
	for _, a := range []*exec.Cmd{
		agent("term-active-0002", "start", "turn=first", "open=a long prompt that runs on and on past the edge of a terminal one hundred columns wide"),
		agent("term-idle-0003", "start", "turn=reviewed the change", "sleep=10m"),
	} {
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		live = append(live, a)
	}
	t.Cleanup(func() {
		for _, a := range live {
			a.Process.Kill()
			a.Wait()
		}
		// The hooks' captures and sweeps are detached: they write to the
		// store until they exit (CI saw the directory removal fail).
		bgsweep.Wait(filepath.Join(repo, ".git", "tether"), time.Minute)
	})
	waitTranscript(t, filepath.Join(work, "term-active-0002.jsonl"), "working on: a long prompt")
	waitTranscript(t, filepath.Join(work, "term-idle-0003.jsonl"), "reviewed the change")

	const done = "--status done--"
	script := "cd " + shellQuote(repo) + " && unset NO_COLOR COLUMNS; tether-sweep status --all; echo '" + done + "'; sleep 600"
	term.tm("new-session", "-d", "-x", "100", "-y", "40", "-s", "status", script)

	var screen, colored string
	for deadline := time.Now().Add(60 * time.Second); ; { // a hang guard, not a timing assertion
		screen = string(term.tm("capture-pane", "-p", "-t", "status"))
		if strings.Contains(screen, done) {
			colored = string(term.tm("capture-pane", "-p", "-e", "-t", "status"))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never finished; the screen:\n%s", screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the screen:\n%s", screen)

	lines := strings.Split(screen, "\n")
	header := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "SESSION ") {
			header = i
			break
		}
	}
	if header < 0 {
		t.Fatal("no table header on the screen")
	}
	var rows []string
	for _, l := range lines[header+1:] {
		if !strings.HasPrefix(l, "term-") {
			break
		}
		rows = append(rows, l)
	}
	if len(rows) != 3 {
		t.Fatalf("want 3 rows right under the header, one line each (nothing wrapped), got %d", len(rows))
	}
	// Every left-aligned column starts where its header starts, on every
	// row: its first character is there and a space is just before it.
	hdr := []rune(lines[header])
	for _, name := range []string{"PHASE", "LIVENESS", "LAST ACTIVE", "LAST PROMPT"} {
		col := strings.Index(lines[header], name)
		if col < 0 {
			t.Errorf("no %s column in %q", name, lines[header])
			continue
		}
		col = len([]rune(lines[header][:col]))
		for _, row := range rows {
			r := []rune(row)
			if col >= len(r) || r[col] == ' ' || r[col-1] != ' ' {
				t.Errorf("%s starts at column %d of the header but not in row %q", name, col, row)
			}
		}
	}
	if len(hdr) > 100 {
		t.Errorf("header is %d columns wide in a 100-column terminal", len(hdr))
	}
	// Colour was on: phase and liveness words are painted.
	for _, want := range []string{"32mactive", "32malive", "33midle", "90mended", "90mexited"} {
		if !strings.Contains(colored, want) {
			t.Errorf("no %q in the coloured screen:\n%q", want, colored)
		}
	}
	if !bytes.Contains([]byte(screen), []byte("…")) {
		t.Errorf("the long prompt was not cut to fit")
	}
}

// ttyTest is what a test in a real terminal needs: tmux, with a server
// of its own (socket) that the test's end kills; tether's binaries and the
// stand-in agent on PATH (tools); and a repository (repo, in work, which
// is HOME) where tether is installed for Claude Code.
type ttyTest struct {
	t                 *testing.T
	tmux, socket      string
	tools, work, repo string
	env               []string
}

func newTerminal(t *testing.T, name string) *ttyTest {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	term := &ttyTest{t: t, tmux: tmux, socket: name + "-" + strconv.Itoa(os.Getpid()), tools: buildTools(t), work: t.TempDir()}
	build(t, filepath.Join(term.tools, "tether-sweep"), "github.com/tetherdev/tether/cmd/sweep")
	term.repo = filepath.Join(term.work, "repo")
	term.env = append(os.Environ(), "PATH="+term.tools+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+term.work,
		"XDG_STATE_HOME="+filepath.Join(term.work, "state"), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t",
		"GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	term.run(term.work, "git", "init", "-q", "-b", "main", "repo")
	term.run(term.repo, "git", "commit", "-q", "--allow-empty", "-m", "initial")
	term.run(term.repo, "tether-sweep", "install", "--agent", "claude-code")
	t.Cleanup(func() { exec.Command(tmux, "-L", term.socket, "kill-server").Run() })
	return term
}

// run runs a command in dir, failing the test when it fails.
func (term *ttyTest) run(dir string, args ...string) {
	term.t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, term.env
	if out, err := cmd.CombinedOutput(); err != nil {
		term.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// tm runs a tmux command on the test's server.
func (term *ttyTest) tm(args ...string) []byte {
	term.t.Helper()
	cmd := exec.Command(term.tmux, append([]string{"-L", term.socket, "-f", "/dev/null"}, args...)...)
	cmd.Env = term.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		term.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// build compiles a package to a binary at path.
func build(t *testing.T, path, pkg string) {
	t.Helper()
	if out, err := exec.Command("go", "build", "-o", path, pkg).CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, out)
	}
}

// waitTranscript waits until an agent's transcript says what it is doing.
func waitTranscript(t *testing.T, path, what string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); { // a hang guard
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(what)) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never said %q", path, what)
}
