package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/agent"
	"github.com/tetherdev/tether/internal/bgsweep"
	"github.com/tetherdev/tether/state"
)

// bins are the real binaries, built once by TestMain: tether-hook,
// tether-sweep, and the stand-in agent built as "claude". All three share a
// directory, as an install puts the hook beside the sweep it launches.
var bins struct {
	dir, hook, sweep, claude string
	home                     string // HOME of every process the tests run: the agents' transcripts live there
}

// holdLockEnv makes the test binary a lock holder instead of running tests:
// it takes the lock named by holdLockEnv in the store of the git common dir
// holdStoreEnv, says so on stdout and keeps it until killed.
const (
	holdLockEnv  = "TETHER_HOOK_TEST_HOLD_LOCK"
	holdStoreEnv = "TETHER_HOOK_TEST_HOLD_STORE"
)

// hangGuard bounds every process a test waits for. It only turns a hang
// into a failure; nothing is asserted about durations.
const hangGuard = 30 * time.Second

func TestMain(m *testing.M) {
	if name := os.Getenv(holdLockEnv); name != "" {
		holdLock(os.Getenv(holdStoreEnv), name)
		return
	}
	flag.Parse()
	// Fuzz workers run FuzzHook in-process only: no binaries needed.
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "tether-hook-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := buildBinaries(dir)
	if code == 0 {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildBinaries builds the three binaries with one go build.
func buildBinaries(dir string) int {
	exe := func(name string) string {
		if runtime.GOOS == "windows" {
			name += ".exe"
		}
		return filepath.Join(dir, name)
	}
	bins.dir, bins.hook, bins.sweep, bins.claude = dir, exe("tether-hook"), exe("tether-sweep"), exe("claude")
	bins.home = filepath.Join(dir, "home")
	for out, pkg := range map[string]string{
		bins.hook:   "github.com/tetherdev/tether/cmd/hook",
		bins.sweep:  "github.com/tetherdev/tether/cmd/sweep",
		bins.claude: "github.com/tetherdev/tether/internal/standin",
	} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		if b, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", pkg, err, b)
			return 1
		}
	}
	return 0
}

// holdLock is the lock holder process: a second process that keeps a
// session's lock, as a hung or stopped writer would.
func holdLock(common, name string) {
	st, err := state.Open(common, state.Options{})
	if err == nil {
		_, err = st.MutateTx(name, func(*state.Tx) error {
			fmt.Println("locked")
			for {
				time.Sleep(time.Hour)
			}
		})
	}
	fmt.Fprintln(os.Stderr, "hold lock:", err)
	os.Exit(1)
}

// cleanEnv is the test's environment without what would steer the hook
// elsewhere: git's repository variables, an outer agent's PID, the agents'
// homes; HOME is the tests' own.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "GIT_"), strings.HasPrefix(k, "CLAUDE"),
			k == "HOME", k == "CODEX_HOME", k == "GEMINI_CLI_HOME", k == "COPILOT_HOME":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+bins.home,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// testRepo is a scratch repository with one commit.
type testRepo struct {
	dir     string // work tree, symlinks resolved (the path the hook records)
	common  string // git common dir
	scratch string // outside the repository: transcripts and such
}

func newRepo(t testing.TB) testRepo {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "README")
	git(t, dir, "commit", "-qm", "initial")
	r := testRepo{dir: dir, common: filepath.Join(dir, ".git"), scratch: t.TempDir()}
	// Runs before the directories go: self-heal sweeps write there.
	t.Cleanup(func() { bgsweep.Wait(filepath.Join(r.common, "tether"), hangGuard) })
	return r
}

// transcript is where Claude Code keeps session id's transcript.
func (r testRepo) transcript(id string) string { return r.transcriptOf("claude-code", id) }

// transcriptOf is where the agent keeps session id's transcript: in its
// transcript directory under the tests' HOME, in a folder of this
// repository's.
func (r testRepo) transcriptOf(agentName, id string) string {
	root := agent.TranscriptRoot(agentName, func(k string) string {
		if k == "HOME" {
			return bins.home
		}
		return ""
	})
	return filepath.Join(root, filepath.Base(r.scratch), id+".jsonl")
}

func (r testRepo) head(t testing.TB) string { return git(t, r.dir, "rev-parse", "HEAD") }

func (r testRepo) store(t testing.TB) *state.Store {
	t.Helper()
	st, err := state.Open(r.common, state.Options{Apply: agent.ApplySpooled})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func (r testRepo) load(t testing.TB, id string) *state.Session {
	t.Helper()
	s, err := r.store(t).Load(id)
	if err != nil {
		t.Fatalf("load %s: %v", id, err)
	}
	return s
}

func (r testRepo) turns(t testing.TB, id string) []state.TurnRecord {
	t.Helper()
	recs, _, err := r.store(t).ReadTurns(id, 0)
	if err != nil {
		t.Fatalf("read turns of %s: %v", id, err)
	}
	return recs
}

// logLine is one line of tether.log, as far as the tests look at it.
type logLine struct {
	Level   string `json:"level"`
	Msg     string `json:"msg"`
	Session string `json:"session"`
	Err     string `json:"err"`
	Agent   string `json:"agent"`
}

// logLines reads tether.log (nothing if it does not exist yet).
func (r testRepo) logLines(t testing.TB) []logLine {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.common, "tether", "log", "tether.log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []logLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

// hookRun is what one run of the real tether-hook left behind.
type hookRun struct {
	stdout, stderr string
}

// runHook runs the real binary in dir with stdin and args, and insists it
// exited 0: whatever happens, the agent must not see a failure.
func runHook(t testing.TB, dir string, stdin []byte, env []string, args ...string) hookRun {
	t.Helper()
	return runHookAt(t, bins.hook, dir, stdin, env, args...)
}

// runHookAt is runHook with the tether-hook binary at hook.
func runHookAt(t testing.TB, hook, dir string, stdin []byte, env []string, args ...string) hookRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, hook, args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("tether-hook %v did not return within %v", args, hangGuard)
	}
	if err != nil {
		t.Fatalf("tether-hook %v: %v (the hook must always exit 0)\nstderr: %s", args, err, stderr.String())
	}
	return hookRun{stdout: stdout.String(), stderr: stderr.String()}
}

// claudePayload is a Claude Code payload for session id in repo.
func claudePayload(t testing.TB, r testRepo, id, event string, extra map[string]any) []byte {
	t.Helper()
	p := map[string]any{
		"session_id":      id,
		"transcript_path": r.transcript(id),
		"cwd":             r.dir,
		"hook_event_name": event,
	}
	for k, v := range extra {
		p[k] = v
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
