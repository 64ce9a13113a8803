package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tetherdev/tether/state"
)

// How hard the chaos hits. Probabilities are per process seen (hooks,
// sweeps) or per look at the checkpoints lock.
const (
	pKillHook       = 0.05
	pKillSweep      = 0.15
	pKillLockHolder = 0.03
	pKillCommit     = 0.25
	pResume         = 0.25
	staleGitLock    = 2 * time.Second // a git lock this old is a killed commit's
)

// agentRun is one stand-in process: the ledger entry.
type agentRun struct {
	seq        int
	slot       int
	session    string
	transcript string
	launchSize int64 // transcript size at launch: what follows is this process's
	script     script
	proc       *os.Process
	stderrPath string
	done       chan struct{} // closed once reaped

	mu         sync.Mutex
	killedByUs bool
	killedAt   string // activity when killed
	exit       *exitReport
}

// chaos runs everything at once for the duration, stopping now and then
// for a live check, then stops starting things and waits for the sweeps,
// status runs and commits in flight. Agents are left as they are, for the
// last live check.
func (d *driver) chaos(r *report) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	goRun := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	for slot := range d.slots {
		goRun(func() { d.slotLoop(slot, stop) })
	}
	goRun(func() { d.sweepLoop(stop, 10) })
	goRun(func() { d.sweepLoop(stop, 11) })
	goRun(func() { d.statusLoop(stop) })
	goRun(func() { d.personLoop(stop) })
	goRun(func() { d.agentKiller(stop) })
	goRun(func() { d.procKiller(stop) })
	goRun(func() { d.lockHog(stop) })
	goRun(func() { d.log.follow(stop) })

	rng := d.rng(6)
	end := time.Now().Add(d.cfg.duration)
	for {
		next := time.Now().Add(liveCheckEvery/2 + time.Duration(rng.Int64N(int64(liveCheckEvery))))
		if !next.Before(end.Add(-liveCheckEvery / 2)) {
			break
		}
		time.Sleep(time.Until(next))
		d.gate.Lock() // every loop finishes what it is doing and waits
		for _, run := range d.liveCheck(r) {
			_ = run.proc.Signal(syscall.SIGCONT)
		}
		d.gate.Unlock()
	}
	time.Sleep(time.Until(end))
	close(stop)
	wg.Wait()
}

// gated runs f unless a live check is under way, in which case it waits.
func (d *driver) gated(f func()) {
	d.gate.RLock()
	defer d.gate.RUnlock()
	f()
}

// slotLoop keeps one agent running in a worktree: a new session, or now
// and then a session of this worktree resumed by a new agent process.
func (d *driver) slotLoop(slot int, stop <-chan struct{}) {
	r := d.rng(100 + uint64(slot))
	var history []string
	for pause(r, stop, time.Millisecond, 50*time.Millisecond) {
		resume := len(history) > 0 && r.Float64() < pResume
		var session string
		if resume {
			session = history[r.IntN(len(history))]
			if !d.waitIdle(session, stop) {
				return
			}
		} else {
			session = fmt.Sprintf("stress-%d-%08x", slot, r.Uint32())
			history = append(history, session)
		}
		var run *agentRun
		var err error
		d.gated(func() { run, err = d.startAgent(r, slot, session, resume) })
		if err != nil {
			d.mu.Lock()
			d.stats.driverErrors = append(d.stats.driverErrors, fmt.Sprintf("start agent in slot %d: %v", slot, err))
			d.mu.Unlock()
			continue
		}
		select {
		case <-run.done:
		case <-stop:
			return
		}
	}
}

// waitIdle waits until no process of an earlier agent of the session is
// left; false if the chaos stopped meanwhile.
func (d *driver) waitIdle(session string, stop <-chan struct{}) bool {
	for sessionBusy(session) {
		select {
		case <-stop:
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
	return true
}

func (d *driver) startAgent(r *rand.Rand, slot int, session string, resume bool) (*agentRun, error) {
	d.mu.Lock()
	seq := len(d.runs) + 1
	d.mu.Unlock()
	run := &agentRun{
		seq: seq, slot: slot, session: session,
		transcript: filepath.Join(d.transcripts, session+".jsonl"),
		stderrPath: filepath.Join(d.work, "agents", fmt.Sprintf("%05d.stderr", seq)),
		script:     makeScript(r, seq, resume),
		done:       make(chan struct{}),
	}
	if fi, err := os.Stat(run.transcript); err == nil {
		run.launchSize = fi.Size()
	}
	if err := os.MkdirAll(filepath.Dir(run.stderrPath), 0o755); err != nil {
		return nil, err
	}
	// A file, not a pipe: an orphaned hook or commit holding the write end
	// must not delay noticing the agent's exit.
	stderr, err := os.Create(run.stderrPath)
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	args := append([]string{"--quiet", "--hook", shellQuote(d.hookBin) + " claude-code",
		"--session", session, "--transcript", run.transcript, "--cwd", d.slots[slot]}, run.script.actions...)
	cmd := d.command(d.slots[slot], d.agentBin, args...)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	run.proc = cmd.Process
	d.mu.Lock()
	d.runs = append(d.runs, run)
	d.mu.Unlock()
	go func() {
		rep := &exitReport{code: -1}
		if err := cmd.Wait(); cmd.ProcessState == nil {
			rep.stderr = "driver: wait: " + err.Error()
		} else {
			rep.code = cmd.ProcessState.ExitCode()
			if signaled(cmd) {
				rep.signal = cmd.ProcessState.Sys().(syscall.WaitStatus).Signal().String()
			}
		}
		b, _ := os.ReadFile(run.stderrPath)
		rep.stderr += string(b)
		run.mu.Lock()
		rep.killedByUs = run.killedByUs
		run.exit = rep
		run.mu.Unlock()
		close(run.done)
	}()
	return run, nil
}

// entries reads what this agent process wrote to its session's transcript.
func (run *agentRun) entries() []transcriptEntry {
	f, err := os.Open(run.transcript)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, run.launchSize, 1<<40))
	if err != nil {
		return nil
	}
	return parseTranscript(b)
}

// liveRuns are the agent processes not yet reaped.
func (d *driver) liveRuns() []*agentRun {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []*agentRun
	for _, run := range d.runs {
		select {
		case <-run.done:
		default:
			out = append(out, run)
		}
	}
	return out
}

// killAgent kill -9's an agent and notes where it was.
func (d *driver) killAgent(run *agentRun) {
	at := activity(run.entries())
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.exit != nil {
		return
	}
	if err := run.proc.Signal(syscall.SIGKILL); err != nil {
		return // exited meanwhile
	}
	run.killedByUs, run.killedAt = true, at
	d.mu.Lock()
	d.stats.agentKills[at]++
	d.mu.Unlock()
}

// agentKiller kills agents at random moments: often the oldest (the hung
// turns wait for it), otherwise any.
func (d *driver) agentKiller(stop <-chan struct{}) {
	r := d.rng(2)
	for pause(r, stop, 150*time.Millisecond, 600*time.Millisecond) {
		live := d.liveRuns()
		if len(live) == 0 {
			continue
		}
		t := live[r.IntN(len(live))]
		if r.Float64() < 0.4 {
			t = live[0]
		}
		d.gated(func() { d.killAgent(t) })
	}
}

// lockHog holds the lock of a running agent's session now and then, for
// longer than a hook waits for it, as a slow writer would (a sweep
// condensing a long turn): the hooks of that session spool their events
// meanwhile, and procKiller kills some of them while they do.
func (d *driver) lockHog(stop <-chan struct{}) {
	r := d.rng(7)
	for pause(r, stop, 100*time.Millisecond, 400*time.Millisecond) {
		live := d.liveRuns()
		if len(live) == 0 {
			continue
		}
		session := live[r.IntN(len(live))].session
		hold := 150*time.Millisecond + time.Duration(r.Int64N(int64(350*time.Millisecond)))
		d.gated(func() {
			_, err := d.st.MutateTx(session, func(*state.Tx) error {
				time.Sleep(hold)
				return state.ErrNoChange
			})
			d.mu.Lock()
			if err == nil {
				d.stats.lockHogs++
			}
			d.mu.Unlock()
		})
	}
}

// sweepKind names a tether-sweep process by its arguments.
func sweepKind(argv []string) string {
	args := strings.Join(argv[1:], " ")
	switch {
	case strings.HasPrefix(args, "status"):
		return "status"
	case strings.Contains(args, "--hook post-commit"):
		return "post-commit"
	case args == "run --quiet":
		return "self-heal"
	}
	return "run"
}

// procKiller watches /proc for hooks and sweeps, whoever started them, and
// kill -9's some of them after a random delay; and now and then kills the
// sweep that holds the checkpoints lock, in the middle of condensing.
func (d *driver) procKiller(stop <-chan struct{}) {
	r := d.rng(3)
	sc := newScanner()
	seen := map[int]bool{}
	cpLock := d.st.LockFile("checkpoints")
	for pause(r, stop, 2*time.Millisecond, 10*time.Millisecond) {
		d.gated(func() { d.hunt(r, sc, seen, cpLock) })
	}
}

// hunt is one look at /proc for procKiller.
func (d *driver) hunt(r *rand.Rand, sc *scanner, seen map[int]bool, cpLock string) {
	procs := sc.scan(d.hookBin, d.sweepBin)
	now := map[int]bool{}
	for _, p := range procs {
		now[p.pid] = true
		if seen[p.pid] {
			continue
		}
		seen[p.pid] = true
		var odds float64
		var delay time.Duration
		kind := "hook"
		if p.argv[0] == d.hookBin {
			odds, delay = pKillHook, time.Duration(r.Int64N(int64(3*time.Millisecond)))
		} else {
			kind = sweepKind(p.argv)
			odds, delay = pKillSweep, time.Duration(r.Int64N(int64(60*time.Millisecond)))
		}
		d.mu.Lock()
		if kind == "hook" {
			d.stats.hooksSeen++
		} else {
			d.stats.sweepsSeen[kind]++
		}
		d.mu.Unlock()
		if r.Float64() >= odds {
			continue
		}
		t, ok := pin(p.pid, p.argv[0])
		if !ok {
			continue
		}
		time.AfterFunc(delay, func() {
			d.gate.RLock()
			defer d.gate.RUnlock()
			if !t.kill() {
				return
			}
			d.mu.Lock()
			if kind == "hook" {
				d.stats.hooksKilled++
			} else {
				d.stats.sweepsKilledByKind[kind]++
			}
			d.mu.Unlock()
		})
	}
	for pid := range seen {
		if !now[pid] {
			delete(seen, pid)
		}
	}
	if r.Float64() < 0.3 {
		for _, pid := range lockHolders(cpLock) {
			if r.Float64() >= pKillLockHolder {
				continue
			}
			if t, ok := pin(pid, d.sweepBin); ok && t.kill() {
				d.mu.Lock()
				d.stats.lockHolderKills++
				d.mu.Unlock()
			}
		}
	}
}

// sweepLoop runs `tether-sweep run` from a random worktree, again and
// again; procKiller kills some of them.
func (d *driver) sweepLoop(stop <-chan struct{}, stream uint64) {
	r := d.rng(stream)
	for pause(r, stop, 30*time.Millisecond, 250*time.Millisecond) {
		d.gated(func() { d.sweepOnce(r) })
	}
}

func (d *driver) sweepOnce(r *rand.Rand) {
	cmd := d.command(d.slots[r.IntN(len(d.slots))], d.sweepBin, "run")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stats.sweeps++
	switch {
	case err == nil:
		d.stats.sweepsOK++
		d.noteWarnings(stderr.String())
	case signaled(cmd):
		d.stats.sweepsKilled++
	default:
		d.stats.sweepErrors[shape("run: "+lastLine(stderr.String(), err))]++
	}
}

// statusLoop runs `tether-sweep status --json` (which sweeps too) and
// checks every complete answer against the contract.
func (d *driver) statusLoop(stop <-chan struct{}) {
	r := d.rng(5)
	for pause(r, stop, 80*time.Millisecond, 400*time.Millisecond) {
		d.gated(func() { d.statusOnce(r) })
	}
}

func (d *driver) statusOnce(r *rand.Rand) {
	args := []string{"status", "--json"}
	if r.IntN(2) == 0 {
		args = append(args, "--all")
	}
	cmd := d.command(d.slots[r.IntN(len(d.slots))], d.sweepBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stats.status++
	switch {
	case err == nil:
		d.stats.statusOK++
		if _, perr := parseStatus(stdout.Bytes()); perr != nil {
			d.stats.statusBad = append(d.stats.statusBad, fmt.Sprintf("status %s: %v", strings.Join(args[1:], " "), perr))
		}
	case signaled(cmd):
		d.stats.statusKilled++
	default:
		d.stats.sweepErrors[shape("status: "+lastLine(stderr.String(), err))]++
	}
}

// noteWarnings counts the warnings a successful sweep printed.
func (d *driver) noteWarnings(stderr string) {
	for line := range strings.Lines(stderr) {
		if w, ok := strings.CutPrefix(strings.TrimSpace(line), "warning: "); ok {
			d.stats.sweepWarnings[shape(w)]++
		}
	}
}

func signaled(cmd *exec.Cmd) bool {
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

// lastLine is the last non-empty line of a command's stderr, or its error.
func lastLine(stderr string, err error) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return err.Error()
}

// personLoop is a person committing in the main worktree, now and then
// killed -9 together with the post-commit hook it runs. Like a person, it
// removes the lock files a killed git left behind.
func (d *driver) personLoop(stop <-chan struct{}) {
	r := d.rng(4)
	for n := 1; pause(r, stop, 80*time.Millisecond, 500*time.Millisecond); n++ {
		d.gated(func() { d.commitOnce(r, n) })
	}
}

// commitOnce is one commit of the person's.
func (d *driver) commitOnce(r *rand.Rand, n int) {
	d.clearStaleGitLocks()
	f, err := os.OpenFile(filepath.Join(d.repo, "person.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		_, err = fmt.Fprintf(f, "edit %d\n", n)
		f.Close()
	}
	if err == nil {
		_, err = d.git(d.repo, "add", "person.txt")
	}
	if err != nil {
		d.commitFailed(err.Error())
		return
	}
	cmd := d.command(d.repo, "git", "commit", "-q", "-m", fmt.Sprintf("person %d", n))
	cmd.SysProcAttr.Setpgid = true // git, its hook and the sweep: one group to kill
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		d.commitFailed(err.Error())
		return
	}
	var mu sync.Mutex
	waited, killed := false, false
	if r.Float64() < pKillCommit {
		time.AfterFunc(time.Duration(r.Int64N(int64(80*time.Millisecond))), func() {
			mu.Lock()
			defer mu.Unlock()
			// Until git is reaped its PID, and so the group, is ours.
			if !waited && syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) == nil {
				killed = true
			}
		})
	}
	err = cmd.Wait()
	mu.Lock()
	waited = true
	wasKilled := killed
	mu.Unlock()
	switch {
	case wasKilled && signaled(cmd):
		d.mu.Lock()
		d.stats.commits++
		d.stats.commitsKilled++
		d.mu.Unlock()
	case err != nil:
		d.commitFailed("git commit: " + err.Error() + ": " + stderr.String())
	default:
		d.mu.Lock()
		d.stats.commits++
		d.mu.Unlock()
	}
}

// commitFailed counts a commit of the person's that git refused (mostly
// another git holding the index lock), by git's first complaint.
func (d *driver) commitFailed(msg string) {
	for line := range strings.Lines(msg) {
		if i := strings.Index(line, "fatal: "); i >= 0 {
			msg = strings.TrimSpace(line[i:])
			break
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stats.commitsFailed[shape(msg)]++
}

// clearStaleGitLocks removes git's lock files older than staleGitLock
// (index, HEAD and branch locks of every worktree), as a person does after
// a killed git. tether's own ref locks are left alone: clearing them is
// tether's job, and the summary reports any left.
func (d *driver) clearStaleGitLocks() {
	patterns := []string{"index.lock", "HEAD.lock", "refs/heads/*.lock", "worktrees/*/index.lock", "worktrees/*/HEAD.lock"}
	for _, p := range patterns {
		matches, _ := filepath.Glob(filepath.Join(d.gitDir, p))
		for _, m := range matches {
			fi, err := os.Stat(m)
			if err != nil || time.Since(fi.ModTime()) < staleGitLock {
				continue
			}
			if os.Remove(m) == nil {
				d.mu.Lock()
				d.stats.staleGitLocks++
				d.mu.Unlock()
			}
		}
	}
}
