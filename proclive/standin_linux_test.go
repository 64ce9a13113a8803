package proclive

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// standins holds the stand-in binaries built from testdata/standin, once
// per test run, linked under the names of the programs they play.
var standins struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if standins.dir != "" {
		os.RemoveAll(standins.dir)
	}
	os.Exit(code)
}

// standin returns the path of the stand-in playing name.
func standin(t testing.TB, name string) string {
	t.Helper()
	standins.once.Do(func() {
		dir, err := os.MkdirTemp("", "proclive-standin-")
		if err != nil {
			standins.err = err
			return
		}
		standins.dir = dir
		// The hidepid test runs a stand-in as nobody.
		if err := os.Chmod(dir, 0o755); err != nil {
			standins.err = err
			return
		}
		bin := filepath.Join(dir, "standin")
		out, err := exec.Command("go", "build", "-o", bin, "./testdata/standin").CombinedOutput()
		if err != nil {
			standins.err = fmt.Errorf("go build ./testdata/standin: %v\n%s", err, out)
			return
		}
		for _, n := range []string{"claude", "codex", "node", "systemd", "tether-hook"} {
			if err := os.Link(bin, filepath.Join(dir, n)); err != nil {
				standins.err = err
				return
			}
		}
	})
	if standins.err != nil {
		t.Fatal(standins.err)
	}
	return filepath.Join(standins.dir, name)
}

// running is a started process tree whose leader's stdout the test reads.
type running struct {
	cmd   *exec.Cmd
	out   *bufio.Reader
	stdin io.WriteCloser
}

// start runs argv in a process group of its own; cleanup kills the group,
// so grandchildren left behind by a killed parent go too.
func start(t testing.TB, env []string, argv ...string) *running {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		stdin.Close()
		cmd.Wait()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("stderr of %s:\n%s", argv[0], stderr.Bytes())
		}
	})
	return &running{cmd: cmd, out: bufio.NewReader(stdout), stdin: stdin}
}

// line reads the next line the process tree printed.
func (r *running) line(t testing.TB) string {
	t.Helper()
	s, err := r.out.ReadString('\n')
	if err != nil {
		t.Fatalf("reading from %s: %q, %v", r.cmd.Path, s, err)
	}
	return strings.TrimSuffix(s, "\n")
}

// ready waits for a stand-in's "ready PID PPID" line.
func (r *running) ready(t testing.TB) (pid, ppid int) {
	t.Helper()
	l := r.line(t)
	if _, err := fmt.Sscanf(l, "ready %d %d", &pid, &ppid); err != nil {
		t.Fatalf("want a ready line, got %q", l)
	}
	return pid, ppid
}

// eventually polls cond until it holds; the timeout only stops a broken
// test from hanging, nothing is asserted about time.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
	}
}

// stat parses /proc/<pid>/stat; ok is false once the process is gone.
func stat(t testing.TB, pid int) (st statFields, ok bool) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if os.IsNotExist(err) {
		return statFields{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	st, err = parseStat(b)
	if err != nil {
		t.Fatal(err)
	}
	return st, true
}
