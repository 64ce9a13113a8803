//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tetherdev/tether/internal/bgsweep"
	"github.com/tetherdev/tether/internal/mockllm"
	"github.com/tetherdev/tether/sweep"
)

// bin is the directory holding the tether-hook and tether-sweep built for
// this run.
var bin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "tether-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	for name, pkg := range map[string]string{"tether-hook": "../cmd/hook", "tether-sweep": "../cmd/sweep"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", name, err, out)
			return 1
		}
	}
	bin = dir
	return m.Run()
}

// npmCLI installs the npm package pkg at version once into the cache
// ($TETHER_E2E_CACHE, default ~/.cache/tether-e2e) and returns the
// directory of its executables (node_modules/.bin). Tests and processes
// installing the same package wait on one lock file; an install that did
// not finish is started again. Without npm the test is skipped.
func npmCLI(t *testing.T, pkg, version string) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("npm is not installed: cannot install %s@%s", pkg, version)
	}
	cache := os.Getenv("TETHER_E2E_CACHE")
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			t.Fatalf("no cache directory for npm packages (set TETHER_E2E_CACHE): %v", err)
		}
		cache = filepath.Join(base, "tether-e2e")
	}
	dir := filepath.Join(cache, strings.ReplaceAll(pkg, "/", "+")+"@"+version)
	bins := filepath.Join(dir, "node_modules", ".bin")
	once(t, dir, func() error {
		// A failed install may have left part of it.
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		start := time.Now()
		cmd := exec.Command(npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error", pkg+"@"+version)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("npm install %s@%s: %w\n%s", pkg, version, err, out)
		}
		t.Logf("installed %s@%s in %s", pkg, version, time.Since(start).Round(time.Second))
		return nil
	})
	return bins
}

// once runs setup for dir unless it already succeeded: under a lock on
// dir+".lock", so parallel tests and test binaries share one setup, and
// marked done by a file in dir only once it succeeded.
func once(t *testing.T, dir string, setup func() error) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("lock %s: %v", lock.Name(), err)
	}
	done := filepath.Join(dir, ".tether-e2e-done")
	if _, err := os.Stat(done); err == nil {
		return
	}
	if err := setup(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// repo is a scratch repository with tether installed, its own HOME and a
// clean environment; its methods fail the test on any error.
type repo struct {
	t    *testing.T
	Dir  string // the work tree (a real path, symlinks resolved)
	Home string // HOME of every command run here
	base string // the test's directory, holding both
	path []string
	env  []string

	mu       sync.Mutex
	failLogs []func() string
}

// newRepo makes a scratch repository with one commit, a fresh HOME, and
// runs `tether-sweep install installArgs...` in it. prepare, when not
// nil, runs before the install: it writes the agent's config and trust
// files into r.Home, adds PATH entries and variables.
func newRepo(t *testing.T, prepare func(r *repo), installArgs ...string) *repo {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &repo{t: t, Dir: filepath.Join(base, "repo"), Home: filepath.Join(base, "home"), base: base}
	for _, d := range []string{r.Dir, r.Home, filepath.Join(base, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.env = []string{
		"HOME=" + r.Home, "USER=" + os.Getenv("USER"), "LANG=C.UTF-8", "TERM=xterm-256color",
		"TMPDIR=" + filepath.Join(base, "tmp"), "GIT_CONFIG_NOSYSTEM=1",
	}
	if node, err := exec.LookPath("node"); err == nil {
		r.path = append(r.path, filepath.Dir(node))
	}
	t.Cleanup(func() {
		r.logOnFailure()
		// What the test started may still run there (an agent that
		// outlived its terminal, a sweep the hook started in the
		// background): it goes, and removing the directory waits for it.
		for _, pid := range procsIn(base) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		waitFor(t, "the processes working in "+base+" to exit", 30*time.Second, func() bool {
			return len(procsIn(base)) == 0
		})
	})
	r.git("init", "-q", "-b", "main")
	r.git("config", "user.name", "tether e2e")
	r.git("config", "user.email", "e2e@example.invalid")
	if err := os.WriteFile(filepath.Join(r.Dir, "README"), []byte("scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.git("add", "README")
	r.git("commit", "-q", "-m", "initial")
	if prepare != nil {
		prepare(r)
	}
	r.sweep(append([]string{"install"}, installArgs...)...)
	return r
}

// addPath puts dir on PATH, after tether's bin and before node's and the
// system's.
func (r *repo) addPath(dir string) { r.path = append([]string{dir}, r.path...) }

// setenv adds NAME=value variables to every command run here.
func (r *repo) setenv(kv ...string) { r.env = append(r.env, kv...) }

// environ is the whole environment of a command run here.
func (r *repo) environ() []string {
	p := append(append([]string{bin}, r.path...), "/usr/bin", "/bin")
	return append(slices.Clone(r.env), "PATH="+strings.Join(p, ":"))
}

// onFailure adds what a failing test logs: f is called then.
func (r *repo) onFailure(f func() string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failLogs = append(r.failLogs, f)
}

func (r *repo) logOnFailure() {
	if !r.t.Failed() {
		return
	}
	if b, err := os.ReadFile(filepath.Join(r.Dir, ".git", "tether", "log", "tether.log")); err == nil {
		r.t.Logf("tether.log:\n%s", b)
	}
	out, _ := r.command("tether-sweep", "status", "--all", "--no-sweep").CombinedOutput()
	r.t.Logf("tether-sweep status --all --no-sweep:\n%s", out)
	r.mu.Lock()
	logs := slices.Clone(r.failLogs)
	r.mu.Unlock()
	for _, f := range logs {
		r.t.Log(f())
	}
}

// command is name with args to run in the repository, in its environment.
// A name without a slash is looked up on the repository's PATH.
func (r *repo) command(name string, args ...string) *exec.Cmd {
	env := r.environ()
	if !strings.Contains(name, "/") {
		for _, dir := range strings.Split(strings.TrimPrefix(env[len(env)-1], "PATH="), ":") {
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
				name = filepath.Join(dir, name)
				break
			}
		}
	}
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = r.Dir, env
	return cmd
}

// run runs a command to its end and returns its output (stdout and
// stderr); failing, it fails the test.
func (r *repo) run(name string, args ...string) string {
	r.t.Helper()
	out, err := r.command(name, args...).CombinedOutput()
	if err != nil {
		r.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	return r.run("git", args...)
}

func (r *repo) sweep(args ...string) string {
	r.t.Helper()
	return r.run("tether-sweep", args...)
}

// sessions are all sessions, ended ones too, as `tether-sweep status --all
// --json` shows them; with sweepFirst the status runs the sweep.
func (r *repo) sessions(sweepFirst bool) []sweep.Row {
	r.t.Helper()
	args := []string{"status", "--all", "--json"}
	if !sweepFirst {
		args = append(args, "--no-sweep")
	}
	var st struct {
		Sessions []sweep.Row `json:"sessions"`
	}
	out := r.sweep(args...)
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		r.t.Fatalf("status --json: %v\n%s", err, out)
	}
	return st.Sessions
}

// waitSession waits (polling status without a sweep) for a session that
// cond accepts, and returns it; what says what was awaited.
func (r *repo) waitSession(what string, timeout time.Duration, cond func(sweep.Row) bool) sweep.Row {
	r.t.Helper()
	var found sweep.Row
	waitFor(r.t, what, timeout, func() bool {
		for _, s := range r.sessions(false) {
			if cond(s) {
				found = s
				return true
			}
		}
		return false
	})
	return found
}

// only is the one session of the repository, which agentName recorded;
// with sweepFirst the status runs the sweep.
func (r *repo) only(agentName string, sweepFirst bool) sweep.Row {
	r.t.Helper()
	ss := r.sessions(sweepFirst)
	if len(ss) != 1 || ss[0].Agent != agentName {
		r.t.Fatalf("sessions %+v, want one of %s", ss, agentName)
	}
	return ss[0]
}

// sessionByID is the session id among rows.
func sessionByID(t *testing.T, rows []sweep.Row, id string) sweep.Row {
	t.Helper()
	for _, s := range rows {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no session %s among %+v", id, rows)
	return sweep.Row{}
}

// sweepUntilEnded runs status, which sweeps, until session id has ended,
// and returns it. An agent killed with -9 lingers as a zombie leader
// while its other threads exit, alive to proclive (rightly: see
// waitGone), and on a loaded machine that takes long.
func (r *repo) sweepUntilEnded(id string) sweep.Row {
	r.t.Helper()
	var s sweep.Row
	waitFor(r.t, "a sweep to end session "+id, 3*time.Minute, func() bool {
		s = sessionByID(r.t, r.sessions(true), id)
		return s.Phase == "ended"
	})
	return s
}

// commitWritten commits path, which an agent's turn wrote, as a user
// would, and waits for the tether note the post-commit sweep puts on the
// commit, read with plain git: it must name a checkpoint. The commit
// waits for its sweep only briefly (tether.commitWait), so the note may
// land after it returns.
func (r *repo) commitWritten(path string) {
	r.t.Helper()
	if b, err := os.ReadFile(filepath.Join(r.Dir, path)); err != nil || string(b) != mockllm.Content {
		r.t.Fatalf("%s = %q, %v; want the agent's write", path, b, err)
	}
	r.git("add", path)
	r.git("commit", "-q", "-m", "add "+path)
	var note string
	waitFor(r.t, "the note on the commit", 2*time.Minute, func() bool {
		out, err := r.command("git", "notes", "--ref=tether", "show", "HEAD").CombinedOutput()
		note = string(out)
		return err == nil
	})
	if !strings.Contains(note, "Tether-Checkpoint: ") {
		r.t.Fatalf("note on HEAD: %q", note)
	}
}

// show is `tether-sweep show REV` and, with transcript, its stored
// transcripts.
func (r *repo) show(rev string, transcript bool) string {
	r.t.Helper()
	if transcript {
		return r.sweep("show", rev, "--transcript")
	}
	return r.sweep("show", rev)
}

// checkClean fails the test unless doctor finds nothing wrong and git
// fsck --strict is clean, once the captures and sweeps the hooks started
// are done: a capture under way has its private index as git wrote it
// (0644, made 0600 as the capture ends), which doctor would report.
func (r *repo) checkClean() {
	r.t.Helper()
	bgsweep.Wait(filepath.Join(r.Dir, ".git", "tether"), 2*time.Minute)
	r.sweep("doctor")
	if out := r.git("fsck", "--strict", "--no-progress"); strings.Contains(out, "error") || strings.Contains(out, "warning") {
		r.t.Errorf("git fsck --strict:\n%s", out)
	}
}

// proc is a process started in a repository, its output kept.
type proc struct {
	t    *testing.T
	Cmd  *exec.Cmd
	out  lockedBuffer
	done chan struct{}
	err  error
}

// start starts a command in the repository with stdin from /dev/null. It
// is killed when the test ends; its output is logged if the test fails.
func (r *repo) start(name string, args ...string) *proc {
	r.t.Helper()
	p := &proc{t: r.t, Cmd: r.command(name, args...), done: make(chan struct{})}
	p.Cmd.Stdout, p.Cmd.Stderr = &p.out, &p.out
	// Its own process group, killed whole at the end: an agent's children
	// (a native binary behind a node loader) must not outlive it holding
	// its output pipe, and Wait gives up on the pipe soon after it exits.
	p.Cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.Cmd.WaitDelay = 5 * time.Second
	if err := p.Cmd.Start(); err != nil {
		r.t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.Cmd.Wait()
		close(p.done)
	}()
	r.t.Cleanup(func() {
		syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
	r.onFailure(func() string {
		return fmt.Sprintf("output of %s:\n%s", strings.Join(p.Cmd.Args, " "), p.out.String())
	})
	return p
}

// wait waits for the process to exit and returns its error (nil for exit
// status 0); the test fails if it runs past timeout.
func (p *proc) wait(timeout time.Duration) error {
	p.t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		p.t.Fatalf("%s still running after %s", strings.Join(p.Cmd.Args, " "), timeout)
		return nil
	}
}

// output is what the process printed so far.
func (p *proc) output() string { return p.out.String() }

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor polls cond every 100ms until it holds; past timeout the test
// fails, saying what it waited for.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	if !poll(timeout, cond) {
		t.Fatalf("waited %s for %s", timeout, what)
	}
}

// poll reports whether cond holds within timeout, asking every 100 ms.
func poll(timeout time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// tmuxSession is a TUI running in a private tmux server.
type tmuxSession struct {
	t      *testing.T
	socket string
}

// newTmux starts command (a shell command line) in the repository, in a
// 200x50 pane of a tmux server of its own with the repository's
// environment. The server is killed when the test ends; a failing test
// logs the pane.
func newTmux(r *repo, command string) *tmuxSession {
	r.t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			r.t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		r.t.Skip("tmux is not installed")
	}
	// A short directory: a socket path is limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "tmx")
	if err != nil {
		r.t.Fatal(err)
	}
	s := &tmuxSession{t: r.t, socket: filepath.Join(dir, "s")}
	r.t.Cleanup(func() {
		if r.t.Failed() {
			r.t.Logf("tmux pane:\n%s", s.capture())
		}
		exec.Command("tmux", "-S", s.socket, "kill-server").Run()
		os.RemoveAll(dir)
		// What the pane ran goes with it, even if it ignores the hangup.
		for _, pid := range procsIn(r.base) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	cmd := exec.Command("tmux", "-S", s.socket, "-f", "/dev/null", "new-session", "-d", "-s", "e2e",
		"-x", "200", "-y", "50", "-c", r.Dir, command)
	cmd.Env = r.environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	// Keep the pane after its command exits, to read what it said.
	s.tmux("set-option", "-t", "e2e", "remain-on-exit", "on")
	return s
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys sends tmux key names: "Enter", "Escape", "C-c".
func (s *tmuxSession) keys(keys ...string) {
	s.t.Helper()
	s.tmux(append([]string{"send-keys", "-t", "e2e"}, keys...)...)
}

// text types text literally.
func (s *tmuxSession) text(text string) {
	s.t.Helper()
	s.tmux("send-keys", "-t", "e2e", "-l", text)
}

// prompt types a prompt into the TUI and submits it once the pane shows
// it whole: a TUI takes typed text in chunks, and Enter must come after.
func (s *tmuxSession) prompt(text string) {
	s.t.Helper()
	s.typeWhole(text, func() {})
	s.keys("Enter")
}

// typeWhole types text, after ready, until the pane shows it whole. A TUI
// busy redrawing may drop keys (Droid's just after an Esc; Gemini CLI's
// while a resumed session loads its history): text not shown whole is
// cleared (Ctrl-U) and typed again, three times at most.
func (s *tmuxSession) typeWhole(text string, ready func()) {
	s.t.Helper()
	for try := 1; ; try++ {
		ready()
		s.text(text)
		if s.shows(text, 10*time.Second) {
			return
		}
		if try == 3 {
			s.t.Fatalf("typed %q three times; the tmux pane never showed it whole:\n%s", text, s.capture())
		}
		s.keys("C-u")
	}
}

// capture is the pane's visible text ("" once the server is gone).
func (s *tmuxSession) capture() string {
	out, err := exec.Command("tmux", "-S", s.socket, "capture-pane", "-p", "-t", "e2e").CombinedOutput()
	if err != nil {
		return ""
	}
	return string(out)
}

// waitText waits until the pane shows text.
func (s *tmuxSession) waitText(text string, timeout time.Duration) {
	s.t.Helper()
	waitFor(s.t, fmt.Sprintf("%q on the tmux pane", text), timeout, func() bool {
		return strings.Contains(s.capture(), text)
	})
}

// shows reports whether the pane shows text within timeout.
func (s *tmuxSession) shows(text string, timeout time.Duration) bool {
	return poll(timeout, func() bool { return strings.Contains(s.capture(), text) })
}

// pid is the process the pane started.
func (s *tmuxSession) pid() int {
	s.t.Helper()
	out := strings.TrimSpace(s.tmux("display-message", "-p", "-t", "e2e", "#{pane_pid}"))
	pid, err := strconv.Atoi(out)
	if err != nil {
		s.t.Fatalf("pane pid %q: %v", out, err)
	}
	return pid
}

// findProc waits for a process named name (its comm) at or below root and
// returns its PID.
func findProc(t *testing.T, root int, name string, timeout time.Duration) int {
	t.Helper()
	var pid int
	waitFor(t, fmt.Sprintf("a process %q below %d", name, root), timeout, func() bool {
		kids := childrenOf()
		for queue := []int{root}; len(queue) > 0; queue = queue[1:] {
			if procName(queue[0]) == name {
				pid = queue[0]
				return true
			}
			queue = append(queue, kids[queue[0]]...)
		}
		return false
	})
	return pid
}

// procName is a process's comm, "" when it is gone.
func procName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// procStat is a process's state letter and parent, from /proc/PID/stat
// (parsed after the last ")": a comm may hold one).
func procStat(pid int) (state string, ppid int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, false
	}
	stat := string(b)
	f := strings.Fields(stat[strings.LastIndex(stat, ")")+1:])
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return f[0], ppid, err == nil
}

// childrenOf maps each PID to its children, from a scan of /proc (the
// kernel may lack /proc/PID/task/TID/children).
func childrenOf() map[int][]int {
	kids := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid, ok := procStat(pid); ok {
			kids[ppid] = append(kids[ppid], pid)
		}
	}
	return kids
}

// procsIn are the processes whose working directory is dir or below.
func procsIn(dir string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil &&
			(cwd == dir || strings.HasPrefix(cwd, dir+"/")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// signal sends sig to pid, failing the test if it cannot.
func signal(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("kill -%d %d: %v", sig, pid, err)
	}
}

// waitExited waits until pid has exited: gone, or a zombie. Claude Code's
// threads can outlive its exit by minutes on a loaded machine, and its
// parent can reap it only after them; tether rightly sees it alive until
// then (see proclive), so a test that needs it dead waits with waitGone.
func waitExited(t *testing.T, pid int, timeout time.Duration) {
	t.Helper()
	waitFor(t, fmt.Sprintf("process %d to exit", pid), timeout, func() bool {
		state, _, ok := procStat(pid)
		return !ok || state == "Z"
	})
}

// waitGone waits until pid has exited and was reaped: a zombie whose
// threads are still exiting is not dead yet to tether either.
func waitGone(t *testing.T, pid int, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(100 * time.Millisecond) {
		state, _, ok := procStat(pid)
		if !ok {
			return
		}
		if time.Now().After(deadline) {
			wchan, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid))
			var kids []string
			for _, k := range childrenOf()[pid] {
				kids = append(kids, fmt.Sprintf("%d %s", k, procName(k)))
			}
			t.Fatalf("process %d (%s) still there after %s: state %s, waiting in %q, children %v",
				pid, procName(pid), timeout, state, wchan, kids)
		}
	}
}

// raceWinner says, from tether.log, who recorded how a turn a SIGINT
// stopped ended: the session-end hook, which read the agent's cancel, or
// the sweep, which found it once the agent was gone.
func (r *repo) raceWinner() string {
	b, _ := os.ReadFile(filepath.Join(r.Dir, ".git", "tether", "log", "tether.log"))
	switch {
	case bytes.Contains(b, []byte("turn ended before the session, as its agent wrote (settled)")):
		return "settled by the sweep (the hook ran before the agent wrote its cancel)"
	case bytes.Contains(b, []byte("turn cancelled (from the transcript)")):
		return "read by the session-end hook"
	}
	return "neither hook nor sweep read a cancel"
}
