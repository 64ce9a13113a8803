package checkpoint

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/state"
)

// The test binary doubles as a condensing process: with helperEnv set it
// condenses the sessions named in it and exits, optionally stopping at a
// hook point so the test can kill -9 it there.
const (
	helperEnv    = "TETHER_CHECKPOINT_HELPER" // "<common dir>|<session,...>|<stop point or empty>"
	helperReady  = "stopped at "
	helperLockMs = 30000
	helperEnd    = "end:" // before the sessions: end them, as a sweep does, and condense them in that write
)

// endAndCondense ends the sessions ids and condenses them in the write that
// ends them, the way the sweep finalizes dead sessions.
func endAndCondense(r *Repo, st *state.Store, ids []string) (res []Result, err error) {
	lerr := r.Locked(st, func() error {
		_, errs := st.MutateEachThen(ids, func(tx *state.Tx) error {
			s := tx.Session
			s.Phase, s.EndedAt, s.EndReason, s.Interrupted = state.PhaseEnded, time.Now().UTC(), state.EndInterrupted, true
			return nil
		}, func(txs []*state.Tx) {
			res, err = r.CondenseEnding(st, txs, nil)
		})
		return errors.Join(errs...)
	})
	return res, errors.Join(err, lerr)
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(helperMain(spec))
	}
	os.Exit(m.Run())
}

func helperMain(spec string) int {
	parts := strings.Split(spec, "|")
	if len(parts) != 3 {
		fmt.Fprintf(os.Stderr, "bad %s=%q\n", helperEnv, spec)
		return 2
	}
	st, err := state.Open(parts[0], state.Options{LockWait: helperLockMs * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r, err := Open(parts[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The stop is "<point>" on CheckpointsRef, or "<point>@<ref>".
	if stop, stopRef, _ := strings.Cut(parts[2], "@"); stop != "" {
		if stopRef == "" {
			stopRef = CheckpointsRef
		}
		r.hook = func(point, ref string) {
			if point == stop && ref == stopRef {
				fmt.Printf("%s%s\n", helperReady, point)
				time.Sleep(time.Hour) // wait for the kill (select{} alone would end as a deadlock)
			}
		}
	}
	var res []Result
	if ids, ok := strings.CutPrefix(parts[1], helperEnd); ok {
		res, err = endAndCondense(r, st, strings.Split(ids, ","))
	} else {
		res, err = r.Condense(st, strings.Split(parts[1], ","), nil)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, x := range res {
		fmt.Println(x.Checkpoint)
	}
	return 0
}

func helperCmd(t *testing.T, common, sessions, stop string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+common+"|"+sessions+"|"+stop)
	cmd.Stderr = os.Stderr
	return cmd
}

// killAt runs a condensing process, waits until it reaches the hook point,
// and kills it with SIGKILL (TerminateProcess on Windows).
func killAt(t *testing.T, f *fixture, session, point string) {
	t.Helper()
	cmd := helperCmd(t, f.common, session, point)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if stop, _, _ := strings.Cut(point, "@"); err != nil || line != helperReady+stop+"\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper said %q, %v", line, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("the killed helper exited cleanly")
	}
}

// A condensing process killed before its transcripts are on their ref,
// after they are and before the checkpoints are, and after both: the next
// Condense writes each checkpoint once.
func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"before-ref@transcripts", "before-ref", "after-ref"} {
		t.Run(point, func(t *testing.T) {
			f := newFixture(t)
			clone, err := f.st.CloneID()
			if err != nil {
				t.Fatal(err)
			}
			transcripts := TranscriptRef("2026-05", clone)
			a := f.agent(t, "crash")
			a.turn("one")
			a.turn("two")
			killAt(t, f, "crash", strings.Replace(point, "@transcripts", "@"+transcripts.String(), 1))

			onBranch := gitCmd(f.dir, "rev-parse", "--verify", "-q", CheckpointsRef).Run() == nil
			if onBranch != (point == "after-ref") {
				t.Fatalf("killed %s: checkpoints ref exists = %v", point, onBranch)
			}
			if stored := gitCmd(f.dir, "rev-parse", "--verify", "-q", transcripts.String()).Run() == nil; stored == strings.HasSuffix(point, "@transcripts") {
				t.Fatalf("killed %s: transcripts ref exists = %v", point, stored)
			}
			if s := a.load(); s.Condensed != 0 || len(s.Checkpoints) != 0 {
				t.Fatalf("the killed process updated the state: %+v", s)
			}

			res := f.condense(t, "crash")
			if len(res) != 1 || res[0].Turns != 2 || res[0].Skipped != (point == "after-ref") {
				t.Fatalf("recovery Condense = %+v", res)
			}
			if n := runGit(t, f.dir, "rev-list", "--count", CheckpointsRef); n != "1" {
				t.Errorf("branch has %s commits, want 1", n)
			}
			if dirs := runGit(t, f.dir, "ls-tree", "-r", "-d", "--name-only", CheckpointsRef); strings.Count(dirs, "\n") != 1 {
				t.Errorf("branch trees:\n%s\nwant exactly one checkpoint", dirs)
			}
			s := a.load()
			if s.Condensed != a.logSize() || s.CondensedTurns != 2 || len(s.Checkpoints) != 1 || s.Checkpoints[0].ID != res[0].Checkpoint {
				t.Errorf("session after recovery: condensed %d/%d, turns %d, checkpoints %+v", s.Condensed, a.logSize(), s.CondensedTurns, s.Checkpoints)
			}
			if res := f.condense(t, "crash"); len(res) != 0 {
				t.Errorf("third Condense = %+v", res)
			}
			if n := runGit(t, f.dir, "rev-list", "--count", transcripts.String()); n != "1" {
				t.Errorf("transcripts ref has %s commits, want 1", n)
			}
			f.fsck(t)
		})
	}
}

// A sweep killed while it ends sessions and condenses them in the same
// write, before its checkpoints are on their ref or after: nothing of the
// session's state changed (it is still live, for the next sweep to end),
// and the next sweep writes the checkpoint once and records it.
func TestCrashRecoveryWhileEnding(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"before-ref", "after-ref"} {
		t.Run(point, func(t *testing.T) {
			f := newFixture(t)
			a := f.agent(t, "crash")
			a.turn("one")
			a.turnStart("two")
			a.write(`{"type":"user","text":"two"}`)
			killAt(t, f, helperEnd+"crash", point)

			if s := a.load(); s.Phase != state.PhaseActive || s.Condensed != 0 || len(s.Checkpoints) != 0 {
				t.Fatalf("the killed sweep changed the session: phase %s, condensed %d, checkpoints %+v", s.Phase, s.Condensed, s.Checkpoints)
			}
			if marked, _ := f.st.Marked(state.MarkCondense); len(marked) != 0 {
				t.Errorf("to condense after the kill: %v", marked)
			}
			out, err := helperCmd(t, f.common, helperEnd+"crash", "").Output()
			if err != nil {
				t.Fatal(err)
			}
			ids := strings.Fields(string(out))
			if len(ids) != 1 {
				t.Fatalf("recovery wrote %q, want one checkpoint", out)
			}
			if dirs := runGit(t, f.dir, "ls-tree", "-r", "-d", "--name-only", CheckpointsRef); strings.Count(dirs, "\n") != 1 {
				t.Errorf("checkpoint trees:\n%s\nwant exactly one checkpoint", dirs)
			}
			cp, err := f.repo.Read(ids[0])
			if err != nil || len(cp.Turns) != 2 || !cp.Turns[1].Interrupted {
				t.Fatalf("checkpoint %+v, %v; want turn two interrupted", cp, err)
			}
			s := a.load()
			if s.Phase != state.PhaseEnded || s.Condensed != a.logSize() || len(s.Checkpoints) != 1 || s.Checkpoints[0].ID != ids[0] {
				t.Errorf("session after recovery: phase %s, condensed %d/%d, checkpoints %+v", s.Phase, s.Condensed, a.logSize(), s.Checkpoints)
			}
			if marked, _ := f.st.Marked(state.MarkCondense); len(marked) != 0 {
				t.Errorf("to condense after recovery: %v", marked)
			}
			f.fsck(t)
		})
	}
}

func TestConcurrentProcesses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const n = 8
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for i := range n {
		id := fmt.Sprintf("proc-%d", i)
		a := f.agent(t, id)
		a.turn("task " + id)
		cmd := helperCmd(t, f.common, id, "")
		out := &strings.Builder{}
		cmd.Stdout = out
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
	tree := runGit(t, f.dir, "ls-tree", "-r", "-d", "--name-only", CheckpointsRef)
	for i, out := range outs {
		id := strings.TrimSpace(out.String())
		if !validID(id) || !strings.Contains(tree, id[:2]+"/"+id[2:]) {
			t.Errorf("process %d made checkpoint %q, not on the branch:\n%s", i, id, tree)
		}
		s, err := f.st.Load(fmt.Sprintf("proc-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if s.CondensedTurns != 1 || len(s.Checkpoints) != 1 || s.Checkpoints[0].ID != id {
			t.Errorf("session %d: %+v", i, s)
		}
	}
	if c := runGit(t, f.dir, "rev-list", "--count", CheckpointsRef); c != fmt.Sprint(n) {
		t.Errorf("branch has %s commits, want one per process (%d)", c, n)
	}
	f.fsck(t)
}
