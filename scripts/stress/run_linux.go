package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// quietFor bounds the waits for hooks, sweeps and git to finish.
const quietFor = 60 * time.Second

// liveCheckEvery is the mean time between live checks during the chaos.
const liveCheckEvery = 4 * time.Second

func run(cfg config) int {
	fmt.Printf("stress: seed %d, %v of chaos, %d agents\n", cfg.seed, cfg.duration, cfg.agents)
	if err := checkPidfd(); err != nil {
		fmt.Fprintln(os.Stderr, "stress:", err)
		return 1
	}
	d, err := newDriver(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stress: setup:", err)
		if d != nil {
			fmt.Fprintln(os.Stderr, "stress: scratch directory kept at", d.work)
		}
		return 1
	}
	d.log = &logFollower{path: filepath.Join(d.st.Dir(), "log", "tether.log")}
	fmt.Printf("stress: scratch %s\n", d.work)
	start := time.Now()
	r := newReport()
	d.chaos(r)
	fmt.Printf("stress: chaos over after %v; checking\n", time.Since(start).Round(time.Millisecond))
	d.finish(r)
	d.summary(r)
	r.print(os.Stdout)
	failed := r.failed()
	if cfg.keep || failed {
		fmt.Println("stress: scratch directory kept at", d.work)
	} else if err := os.RemoveAll(d.work); err != nil {
		fmt.Fprintln(os.Stderr, "stress: remove scratch directory:", err)
	}
	fmt.Printf("stress: total %v\n", time.Since(start).Round(time.Millisecond))
	if failed {
		fmt.Printf("stress: FAILED; rerun with: go run ./scripts/stress --seed %d --duration %v --agents %d --keep\n", cfg.seed, cfg.duration, cfg.agents)
		return 1
	}
	fmt.Println("stress: ok")
	return 0
}

// finish ends the run and checks it: a last live check, then every agent
// killed, one last sweep, and the store and branch against the ledger.
func (d *driver) finish(r *report) {
	final := r.inv(invFinalSweep)
	frozen := d.liveCheck(r)
	for _, run := range frozen {
		run.mu.Lock()
		if run.proc.Signal(syscall.SIGKILL) == nil {
			run.killedByUs, run.killedAt = true, "frozen at the end"
		}
		run.mu.Unlock()
	}
	for _, run := range frozen {
		select {
		case <-run.done:
		case <-time.After(quietFor):
			final.failf("agent %d (pid %d) was not reaped after kill -9", run.seq, run.proc.Pid)
		}
	}
	if err := d.settle(nil); err != nil {
		final.failf("waiting before the last sweep: %v", err)
	}
	final.checked++
	if out, err := d.sweepOut("run"); err != nil {
		final.failf("last sweep: %v (it printed: %s)", err, strings.Join(strings.Fields(string(out)), " "))
	}
	if err := d.settle(nil); err != nil {
		final.failf("waiting after the last sweep: %v", err)
	}
	d.check(r)
}

// liveCheck freezes the agents still running (a stopped process is alive,
// and nothing it does can race the check), waits for their hooks and
// commits in flight, sweeps, and checks that the sweep finalized none of
// their sessions. It returns the frozen agents; the caller thaws or kills
// them. Nothing else may be starting processes meanwhile.
func (d *driver) liveCheck(r *report) []*agentRun {
	final := r.inv(invFinalSweep)
	survivors := d.liveRuns()
	freeze(survivors)
	if err := d.settle(survivors); err != nil {
		final.failf("waiting before a live check: %v", err)
	}
	var live []liveAgent
	var frozen []*agentRun
	for _, run := range survivors {
		select {
		case <-run.done:
			continue // it exited before the stop reached it
		default:
		}
		frozen = append(frozen, run)
		if !waitStopped(run.proc.Pid) {
			continue // killed just before: not reaped yet
		}
		entries := run.entries()
		fates := run.fates(entries)
		ending := run.script.ends && len(fates) == len(run.script.prompts) && fates[len(fates)-1].done
		live = append(live, liveAgent{seq: run.seq, pid: run.proc.Pid, session: run.session, showedLife: len(entries) > 0, ending: ending})
	}
	d.liveChecks++
	finalized, err := d.sweepJSON()
	final.checked++
	if err != nil {
		final.failf("sweep during a live check: %v", err)
	}
	rows, err := d.status()
	r.inv(invStatusJSON).checked++
	if err != nil {
		r.inv(invStatusJSON).failf("status --all --no-sweep during a live check: %v", err)
	}
	phases, liveness := map[string]string{}, map[string]string{}
	for _, a := range live {
		if s, err := d.st.Load(a.session); err != nil {
			phases[a.session] = "unreadable: " + err.Error()
		} else {
			phases[a.session] = string(s.Phase)
		}
		if rows != nil {
			liveness[a.session] = "missing from status --all"
			if row, ok := rows[a.session]; ok {
				liveness[a.session] = row.liveness
			}
		}
	}
	entries, _ := d.log.warnings()
	checkLive(r, live, finalized, phases, liveness, hookFailures(entries))
	return frozen
}

func freeze(runs []*agentRun) {
	for _, run := range runs {
		_ = run.proc.Signal(syscall.SIGSTOP)
	}
}

// waitStopped gives a SIGSTOP a moment to land.
func waitStopped(pid int) bool {
	for range 50 {
		if stopped(pid) {
			return true
		}
		time.Sleep(2 * time.Millisecond)
	}
	return false
}

// settle waits until nothing but the frozen agents is running: no hook,
// no sweep (detached ones included), no git or shell under the scratch
// directory. A hook started just before its agent froze may wait on stdin
// for a payload the agent never got to write, so now and then the agents
// are thawed for a moment.
func (d *driver) settle(frozen []*agentRun) error {
	deadline := time.Now().Add(quietFor)
	nudge := time.Now().Add(2 * time.Second)
	for {
		left := busy(d.work, d.hookBin, d.sweepBin)
		if len(left) == 0 {
			return nil
		}
		now := time.Now()
		if now.After(deadline) {
			return fmt.Errorf("still running after %v: %s", quietFor, strings.Join(left, "; "))
		}
		if now.After(nudge) && len(frozen) > 0 {
			for _, run := range frozen {
				_ = run.proc.Signal(syscall.SIGCONT)
			}
			time.Sleep(20 * time.Millisecond)
			freeze(frozen)
			nudge = now.Add(2 * time.Second)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fates are the prompt fates of this agent process's own prompts (a later
// process of the same session appends to the same transcript).
func (run *agentRun) fates(entries []transcriptEntry) []promptFate {
	var out []promptFate
	for _, f := range promptFates(entries) {
		if slices.Contains(run.script.prompts, f.prompt) {
			out = append(out, f)
		}
	}
	return out
}

// sweepOut runs tether-sweep in the main worktree and returns its output.
func (d *driver) sweepOut(args ...string) ([]byte, error) {
	cmd := d.command(d.repo, d.sweepBin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("tether-sweep %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// sweepJSON runs one sweep and returns the sessions it finalized, which
// it reports even when it fails later on.
func (d *driver) sweepJSON() ([]string, error) {
	out, err := d.sweepOut("run", "--json")
	var rep struct {
		Finalized []struct {
			ID string `json:"id"`
		} `json:"finalized"`
	}
	if jerr := json.Unmarshal(out, &rep); jerr != nil && err == nil {
		err = fmt.Errorf("tether-sweep run --json: %w", jerr)
	}
	var ids []string
	for _, f := range rep.Finalized {
		ids = append(ids, f.ID)
	}
	return ids, err
}

// status lists every session as `status --json --all --no-sweep` shows it.
func (d *driver) status() (map[string]statusRow, error) {
	out, err := d.sweepOut("status", "--json", "--all", "--no-sweep")
	if err != nil {
		return nil, err
	}
	return parseStatus(out)
}

// hookFailures groups the hook's own reported failures by session.
func hookFailures(entries []logEntry) map[string][]string {
	out := map[string][]string{}
	for _, e := range entries {
		if e.Msg == "hook failed" {
			id := hookFailureSession(e.Err)
			out[id] = append(out[id], e.Err)
		}
	}
	return out
}

// check gathers the store, the checkpoints and the notes, and checks them
// against each other and the ledger.
func (d *driver) check(r *report) {
	sessions := d.sessionFacts(r)
	cps := d.readBranch(r)
	checkCondensing(r, sessions, cps)
	checkLeftovers(r, sessions, cps)
	onBranch := map[string]bool{}
	for _, c := range cps {
		onBranch[c.cp.ID] = true
	}
	notes, err := d.readNotes()
	if err != nil {
		r.inv(invRefs).failf("read notes: %v", err)
	}
	checkNotes(r, notes, onBranch)

	entries, _ := d.log.warnings()
	failures := hookFailures(entries)
	d.mu.Lock()
	runs := slices.Clone(d.runs)
	d.mu.Unlock()
	var incs []incarnation
	for _, run := range runs {
		<-run.done
		outcome, event := classifyExit(*run.exit)
		incs = append(incs, incarnation{
			seq: run.seq, session: run.session, pid: run.proc.Pid, outcome: outcome, event: event,
			stderr: run.exit.stderr, fates: run.fates(run.entries()),
		})
	}
	checkLedger(r, incs, sessions, failures)

	status := r.inv(invStatusJSON)
	status.checked += d.stats.statusOK
	for _, bad := range d.stats.statusBad {
		status.failf("%s", bad)
	}
	d.fsck(r)
	d.leftLocks(r)
}

// sessionFacts loads every session, live and ended, with its whole turn
// log, checking that all of it reads cleanly and that none is still live.
func (d *driver) sessionFacts(r *report) map[string]*sessionFacts {
	loads, dead := r.inv(invStateLoads), r.inv(invDeadFinalized)
	live, lw, err := d.st.List()
	if err != nil {
		loads.failf("list live sessions: %v", err)
	}
	ended, ew, err := d.st.ListEnded()
	if err != nil {
		loads.failf("list ended sessions: %v", err)
	}
	for _, w := range append(lw, ew...) {
		loads.failf("warning: %s", w.Msg)
	}
	qdir := filepath.Join(d.st.Dir(), "quarantine")
	qents, err := os.ReadDir(qdir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		loads.failf("read %s: %v", qdir, err)
	}
	for _, e := range qents {
		if strings.HasSuffix(e.Name(), ".reason") {
			continue
		}
		reason, _ := os.ReadFile(filepath.Join(qdir, e.Name()+".reason"))
		loads.failf("quarantined %s: %s", e.Name(), strings.ReplaceAll(strings.TrimSpace(string(reason)), "\n", "; "))
	}

	for _, home := range []string{"sessions", "ended"} {
		tmps, _ := filepath.Glob(filepath.Join(d.st.Dir(), home, "*.tmp"))
		for _, t := range tmps {
			r.notice("temp files left in the store by killed writers").failf("%s", filepath.Join(home, filepath.Base(t)))
		}
	}

	facts := map[string]*sessionFacts{}
	dead.checked = len(live) + len(ended)
	for _, s := range live {
		if s.Owner == nil {
			// The agent died while its hook was still finding it (the
			// hook's shell already reparented to init): no owner was
			// ever captured. Unknown liveness is not death, so the sweep
			// rightly leaves it to stale-after or a person; it must only
			// never pass for alive.
			if v := state.OwnerVerdict(s); v.Liveness != proclive.Unknown {
				dead.failf("session %s has no owner recorded, yet its liveness is %s (%s)", s.ID, v.Liveness, v.Reason)
			}
			r.notice("sessions whose agent died before any hook could capture it (unknown liveness, left to stale-after)").
				failf("%s: %s", s.ID, s.LastError)
			continue
		}
		v := proclive.Check(*s.Owner)
		dead.failf("session %s is still %s after every agent was killed and a last sweep ran: owner pid %d %s (%s); last error %q",
			s.ID, s.Phase, s.Owner.PID, v.Liveness, v.Reason, s.LastError)
	}
	for _, s := range append(live, ended...) {
		loads.checked++
		if facts[s.ID] != nil {
			loads.failf("session %s is both live and ended", s.ID)
			continue
		}
		recs, next, err := d.st.ReadTurns(s.ID, 0)
		if err != nil {
			loads.failf("read the turn log of %s: %v", s.ID, err)
		}
		var size int64
		for _, home := range []string{"sessions", "ended"} {
			if fi, err := os.Stat(filepath.Join(d.st.Dir(), home, s.ID+".turns.jsonl")); err == nil {
				size = fi.Size()
			}
		}
		var ids []string
		for _, c := range s.Checkpoints {
			ids = append(ids, c.ID)
		}
		facts[s.ID] = &sessionFacts{
			id: s.ID, phase: s.Phase, endReason: s.EndReason, condensed: s.Condensed, turnLogSize: s.TurnLogSize,
			turns: s.Turns, condensedTurns: s.CondensedTurns, checkpoints: ids,
			records: recs, complete: next, fileSize: size, waiting: s.Phase != state.PhaseEnded && s.Owner == nil,
		}
	}
	return facts
}

// readBranch reads every checkpoint.json at the tip of the checkpoints
// branch with plain git.
func (d *driver) readBranch(r *report) []shelved {
	ids := r.inv(invCheckpointIDs)
	out, err := d.git(d.repo, "for-each-ref", "--format=%(objectname)", checkpoint.CheckpointsRef)
	if err != nil {
		ids.failf("read %s: %v", checkpoint.CheckpointsRef, err)
		return nil
	}
	tip := strings.TrimSpace(string(out))
	if tip == "" {
		return nil // no checkpoint was ever written
	}
	out, err = d.git(d.repo, "ls-tree", "-r", "-z", tip)
	if err != nil {
		ids.failf("list %s: %v", checkpoint.CheckpointsRef, err)
		return nil
	}
	var dirs, hashes []string
	for _, f := range parseLsTree(out) {
		if dir, ok := strings.CutSuffix(f.path, "/checkpoint.json"); ok && f.kind == "blob" {
			dirs, hashes = append(dirs, dir), append(hashes, f.hash)
		}
	}
	blobs, err := d.catFile(hashes)
	if err != nil {
		ids.failf("read checkpoints: %v", err)
		return nil
	}
	var cps []shelved
	for i, dir := range dirs {
		var cp checkpoint.Checkpoint
		if err := json.Unmarshal(blobs[hashes[i]], &cp); err != nil {
			ids.failf("%s/checkpoint.json does not parse: %v", dir, err)
			continue
		}
		cps = append(cps, shelved{dir: dir, cp: cp})
	}
	return cps
}

// readNotes returns the checkpoint IDs each note of refs/notes/tether names.
func (d *driver) readNotes() (map[string][]string, error) {
	out, err := d.git(d.repo, "notes", "--ref="+checkpoint.NotesRef, "list")
	if err != nil {
		return nil, err
	}
	var blobs, commits []string
	for line := range strings.Lines(string(out)) {
		if f := strings.Fields(line); len(f) == 2 {
			blobs, commits = append(blobs, f[0]), append(commits, f[1])
		}
	}
	objs, err := d.catFile(blobs)
	if err != nil {
		return nil, err
	}
	notes := map[string][]string{}
	for i, c := range commits {
		notes[c] = noteCheckpoints(string(objs[blobs[i]]))
	}
	return notes, nil
}

// catFile reads objects with one `git cat-file --batch`.
func (d *driver) catFile(hashes []string) (map[string][]byte, error) {
	if len(hashes) == 0 {
		return map[string][]byte{}, nil
	}
	cmd := d.command(d.repo, "git", "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(strings.Join(hashes, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git cat-file --batch: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return catFileBatch(out)
}

// fsck runs `git fsck --strict`; dangling objects (written by a sweep
// killed before it moved the ref) are counted, not failed.
func (d *driver) fsck(r *report) {
	c := r.inv(invFsck)
	c.checked++
	cmd := d.command(d.repo, "git", "fsck", "--strict")
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.failf("git fsck --strict: %v", err)
	}
	dangling := 0
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "dangling "):
			dangling++
		default:
			c.failf("%s", line)
		}
	}
	if dangling > 0 {
		r.notice("dangling objects (from writers killed before moving a ref)").failf("%d", dangling)
	}
}

// leftLocks reports ref lock files of tether's refs still present: a
// writer killed between creating and renaming one.
func (d *driver) leftLocks(r *report) {
	for _, ref := range []string{checkpoint.CheckpointsRef, checkpoint.NotesRef} {
		p := filepath.Join(d.gitDir, filepath.FromSlash(ref)+".lock")
		if fi, err := os.Stat(p); err == nil {
			r.notice("ref locks of tether left behind (they block writes to the ref until they go stale)").
				failf("%s, %v old", p, time.Since(fi.ModTime()).Round(time.Second))
		}
	}
}
