package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// newRepo makes a real repository with one commit and opens its store.
func newRepo(t testing.TB) (gitdir.Repo, *state.Store) {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "initial"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	repo, err := gitdir.Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(repo.CommonDir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return repo, st
}

// deadOwner is the identity of a real process that has exited and been
// reaped.
func deadOwner(t testing.TB) *proclive.Identity {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	id, err := proclive.Capture(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if v := proclive.Check(id); v.Liveness != proclive.Dead {
		t.Fatalf("killed process is %v (%s)", v.Liveness, v.Reason)
	}
	return &id
}

func aliveOwner(t testing.TB) *proclive.Identity {
	t.Helper()
	id, err := proclive.Self()
	if err != nil {
		t.Fatal(err)
	}
	return &id
}

// startTurn records a session with a running turn, as the hook does.
func startTurn(t testing.TB, st *state.Store, repo gitdir.Repo, id string, owner *proclive.Identity) {
	t.Helper()
	_, err := st.MutateTx(id, func(tx *state.Tx) error {
		s := tx.Session
		now := time.Now().UTC()
		if s.StartedAt.IsZero() {
			s.StartedAt = now
		}
		s.Agent, s.Worktree, s.Owner, s.LastHookAt = "claude-code", repo.WorkTree, owner, now
		to, act := state.Transition(s.Phase, state.EventTurnStart)
		if act.Revive {
			s.EndedAt, s.EndReason, s.Interrupted = time.Time{}, "", false
		}
		s.Turns++
		s.Phase, s.LastTurnStartedAt = to, now
		return tx.AppendTurn(state.TurnRecord{T: state.RecTurnStart, Turn: s.Turns, At: now, Prompt: fmt.Sprintf("prompt %d", s.Turns)})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDeadOwnerIsFinalizedAndCondensed(t *testing.T) {
	repo, st := newRepo(t)
	startTurn(t, st, repo, "dead-1", deadOwner(t))
	startTurn(t, st, repo, "alive-1", aliveOwner(t))

	rep, err := Run(repo, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Finalized) != 1 || rep.Finalized[0].ID != "dead-1" || rep.Finalized[0].Reason != state.EndInterrupted {
		t.Fatalf("finalized = %+v, want dead-1 interrupted", rep.Finalized)
	}
	s, err := st.Load("dead-1")
	if err != nil {
		t.Fatal(err)
	}
	if s.Phase != state.PhaseEnded || !s.Interrupted || s.HasPending() || len(s.Checkpoints) != 1 {
		t.Fatalf("dead-1 after sweep: phase %s interrupted %v pending %v checkpoints %v", s.Phase, s.Interrupted, s.HasPending(), s.Checkpoints)
	}
	if a, _ := st.Load("alive-1"); a.Phase != state.PhaseActive {
		t.Fatalf("alive-1 phase = %s, want active", a.Phase)
	}
	// The checkpoint is on the branch, readable by git itself.
	out, err := exec.Command("git", "-C", repo.WorkTree, "show", "tether/checkpoints/v1:"+s.Checkpoints[0].ID[:2]+"/"+s.Checkpoints[0].ID[2:]+"/prompts.md").CombinedOutput()
	if err != nil {
		t.Fatalf("git show: %v\n%s", err, out)
	}
	// A second sweep finds nothing to do.
	rep, err = Run(repo, st, Options{})
	if err != nil || len(rep.Finalized) != 0 || len(rep.Checkpoints) != 0 {
		t.Fatalf("second sweep: %+v, %v", rep, err)
	}
}

// A turn that starts between the scan and the lock revives the session with
// a live owner: the sweep must re-check under the lock and leave it alone.
func TestSessionRevivedBetweenScanAndLockIsLeftAlone(t *testing.T) {
	repo, st := newRepo(t)
	startTurn(t, st, repo, "race-1", deadOwner(t))
	revived := false
	rep, err := Run(repo, st, Options{beforeFinalize: func(id string) {
		startTurn(t, st, repo, id, aliveOwner(t))
		revived = true
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !revived {
		t.Fatal("the sweep never reached the window between scan and lock")
	}
	if len(rep.Finalized) != 0 {
		t.Fatalf("finalized %+v, want nothing", rep.Finalized)
	}
	s, err := st.Load("race-1")
	if err != nil {
		t.Fatal(err)
	}
	if s.Phase != state.PhaseActive || s.EndReason != "" || proclive.Check(*s.Owner).Liveness != proclive.Alive {
		t.Fatalf("race-1: phase %s end %q", s.Phase, s.EndReason)
	}
}

func TestUnknownOwnerEndsOnlyPastStaleAfter(t *testing.T) {
	repo, st := newRepo(t)
	other := aliveOwner(t)
	other.Host = "some-other-host"
	startTurn(t, st, repo, "remote-1", other)

	rep, err := Run(repo, st, Options{})
	if err != nil || len(rep.Finalized) != 0 {
		t.Fatalf("without a policy: %+v, %v", rep.Finalized, err)
	}
	rep, err = Run(repo, st, Options{StaleAfter: time.Hour})
	if err != nil || len(rep.Finalized) != 0 {
		t.Fatalf("within the threshold: %+v, %v", rep.Finalized, err)
	}
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	rep, err = Run(repo, st, Options{StaleAfter: time.Hour, Now: later})
	if err != nil || len(rep.Finalized) != 1 || rep.Finalized[0].Reason != state.EndStale {
		t.Fatalf("past the threshold: %+v, %v", rep.Finalized, err)
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	repo, st := newRepo(t)
	startTurn(t, st, repo, "dry-1", deadOwner(t))
	before, err := os.ReadFile(filepath.Join(st.Dir(), "sessions", "dry-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(repo, st, Options{DryRun: true})
	if err != nil || len(rep.Finalized) != 1 {
		t.Fatalf("dry run: %+v, %v", rep.Finalized, err)
	}
	after, err := os.ReadFile(filepath.Join(st.Dir(), "sessions", "dry-1.json"))
	if err != nil || string(after) != string(before) {
		t.Fatalf("dry run changed the state file (%v)", err)
	}
}

// With nothing pending, the post-commit sweep must not touch the object
// database: it is replaced by a file here, so any go-git access fails.
func TestPostCommitWithNothingPendingNeverOpensTheRepository(t *testing.T) {
	repo, st := newRepo(t)
	startTurn(t, st, repo, "idle-1", aliveOwner(t))
	if _, err := Run(repo, st, Options{PostCommit: true}); err != nil {
		t.Fatal(err) // condenses the running turn
	}
	// The turn ends, and a commit condenses its end: nothing is pending,
	// and no turn runs to be counted up to the next commit.
	if _, err := st.MutateTx("idle-1", func(tx *state.Tx) error {
		tx.Session.Phase = state.PhaseIdle
		return tx.AppendTurn(state.TurnRecord{T: state.RecTurnEnd, Turn: tx.Session.Turns, At: time.Now().UTC()})
	}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second finds its checkpoint waits for no commit
		if _, err := Run(repo, st, Options{PostCommit: true}); err != nil {
			t.Fatal(err)
		}
	}
	objects := filepath.Join(repo.CommonDir, "objects")
	if err := os.Rename(objects, objects+".away"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(objects); os.Rename(objects+".away", objects) })
	if err := os.WriteFile(objects, []byte("not a directory\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(repo, st, Options{PostCommit: true}); err != nil {
		t.Fatalf("post-commit with nothing pending touched the repository: %v", err)
	}
	// Control: with a turn pending, the same sweep does need the objects.
	startTurn(t, st, repo, "idle-1", aliveOwner(t))
	if _, err := Run(repo, st, Options{PostCommit: true}); err == nil {
		t.Fatal("post-commit with a pending turn succeeded without an object database")
	}
}

// BenchmarkSweep measures a sweep over live sessions whose owners are alive
// (so nothing is finalized) with and without 100,000 ended sessions: the
// ended ones must not matter.
func BenchmarkSweep(b *testing.B) {
	for _, ended := range []int{0, 100_000} {
		b.Run(fmt.Sprintf("live=1000/ended=%d", ended), func(b *testing.B) {
			repo, st := newRepo(b)
			owner := aliveOwner(b)
			for i := range 1000 {
				startTurn(b, st, repo, fmt.Sprintf("live-%04d", i), owner)
			}
			writeEnded(b, st, ended)
			b.ResetTimer()
			for range b.N {
				rep, err := Run(repo, st, Options{})
				if err != nil || len(rep.Sessions) != 1000 {
					b.Fatalf("sweep: %d sessions, %v", len(rep.Sessions), err)
				}
			}
		})
	}
}

// writeEnded writes n ended sessions straight into ended/, in the store's
// format, much faster than finalizing them one by one.
func writeEnded(b *testing.B, st *state.Store, n int) {
	b.Helper()
	dir := filepath.Join(st.Dir(), "ended")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	at := time.Now().UTC().Add(-48 * time.Hour)
	for i := range n {
		s := state.Session{Version: state.SchemaVersion, ID: fmt.Sprintf("ended-%06d", i), Agent: "claude-code",
			Phase: state.PhaseEnded, StartedAt: at, UpdatedAt: at, EndedAt: at, EndReason: state.EndSessionEnd}
		data, err := json.Marshal(&s)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.ID+".json"), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
}

// endByAgent records the session end its agent's hook reports.
func endByAgent(t testing.TB, st *state.Store, id string) {
	t.Helper()
	if _, err := st.Mutate(id, func(s *state.Session) error {
		to, act := state.Transition(s.Phase, state.EventSessionEnd)
		s.Phase, s.EndReason, s.Interrupted = to, act.EndReason, act.Interrupted
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A session its agent ended (SessionEnd) never reaches the sweep's scan of
// live sessions; the store's to-condense mark brings it to the next sweep,
// which saves its turns exactly once.
func TestSessionEndedByItsAgentIsCondensed(t *testing.T) {
	repo, st := newRepo(t)
	startTurn(t, st, repo, "ended-1", aliveOwner(t))
	endByAgent(t, st, "ended-1")
	if marked, err := st.Marked(state.MarkCondense); err != nil || len(marked) != 1 {
		t.Fatalf("condense marks = %v, %v", marked, err)
	}
	rep, err := Run(repo, st, Options{})
	if err != nil || len(rep.Checkpoints) != 1 || rep.Checkpoints[0].Session != "ended-1" {
		t.Fatalf("sweep: %+v, %v", rep.Checkpoints, err)
	}
	s, err := st.Load("ended-1")
	if err != nil || s.HasPending() || len(s.Checkpoints) != 1 {
		t.Fatalf("after the sweep: pending %v, checkpoints %v, %v", s.HasPending(), s.Checkpoints, err)
	}
	if marked, _ := st.Marked(state.MarkCondense); len(marked) != 0 {
		t.Fatalf("mark left behind: %v", marked)
	}
	rep, err = Run(repo, st, Options{})
	if err != nil || len(rep.Checkpoints) != 0 {
		t.Fatalf("second sweep condensed again: %+v, %v", rep.Checkpoints, err)
	}
}

// A session resumed, given a turn and ended again while a condense pass
// ran keeps its to-condense mark: clearing it would strand that turn
// (seen under stress). Only a session condensed to the end loses it.
func TestCondenseKeepsTheMarkOfTurnsItDidNotSee(t *testing.T) {
	repo, st := newRepo(t)
	ids := []string{"seen-1", "grew-1"}
	for _, id := range ids {
		startTurn(t, st, repo, id, aliveOwner(t))
		endByAgent(t, st, id)
	}
	cp, err := openCheckpoints(repo, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Condense(st, ids, nil); err != nil {
		t.Fatal(err)
	}
	// The pass has read both; grew-1's agent resumes it now.
	startTurn(t, st, repo, "grew-1", aliveOwner(t))
	endByAgent(t, st, "grew-1")
	if err := clearCondensed(st, ids); err != nil {
		t.Fatal(err)
	}
	if marked, err := st.Marked(state.MarkCondense); err != nil || len(marked) != 1 || marked[0] != "grew-1" {
		t.Fatalf("condense marks after the pass = %v, %v; want grew-1's only", marked, err)
	}

	rep, err := Run(repo, st, Options{})
	if err != nil || len(rep.Checkpoints) != 1 || rep.Checkpoints[0].Session != "grew-1" {
		t.Fatalf("the next sweep: %+v, %v; want grew-1's second turn condensed", rep.Checkpoints, err)
	}
	if s, err := st.Load("grew-1"); err != nil || s.HasPending() || len(s.Checkpoints) != 2 {
		t.Fatalf("grew-1: %+v, %v", s, err)
	}
	if marked, _ := st.Marked(state.MarkCondense); len(marked) != 0 {
		t.Fatalf("marks left behind: %v", marked)
	}
}

// A sweep that fails to condense after finalizing leaves the mark, so the
// next sweep saves the turns.
func TestFailedCondenseIsRetried(t *testing.T) {
	repo, st := newRepo(t)
	startTurn(t, st, repo, "retry-1", deadOwner(t))
	objects := filepath.Join(repo.CommonDir, "objects")
	if err := os.Rename(objects, objects+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(objects, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(repo, st, Options{}); err == nil {
		t.Fatal("condense without an object database succeeded")
	}
	if s, _ := st.Load("retry-1"); s.Phase != state.PhaseEnded || !s.HasPending() {
		t.Fatalf("after the failed sweep: phase %s pending %v", s.Phase, s.HasPending())
	}
	os.Remove(objects)
	if err := os.Rename(objects+".away", objects); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(repo, st, Options{})
	if err != nil || len(rep.Checkpoints) != 1 {
		t.Fatalf("retry: %+v, %v", rep.Checkpoints, err)
	}
	if s, _ := st.Load("retry-1"); s.HasPending() || !s.Interrupted {
		t.Fatalf("after the retry: pending %v interrupted %v", s.HasPending(), s.Interrupted)
	}
}

// The sessions a sweep ends are condensed in the write that ends them, so
// no to-condense mark is set for them: here one could not be (a directory
// stands where dead-1's mark would go), and the sweep still ends and
// condenses it. Ended first and condensed after, it would fail to end.
func TestEndedSessionsAreCondensedInTheWriteThatEndsThem(t *testing.T) {
	repo, st := newRepo(t)
	startTurn(t, st, repo, "dead-1", deadOwner(t))
	if err := os.MkdirAll(filepath.Join(repo.CommonDir, "tether", string(state.MarkCondense), "dead-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(repo, st, Options{})
	if err != nil || len(rep.Finalized) != 1 || len(rep.Checkpoints) != 1 || len(rep.Warnings) != 0 {
		t.Fatalf("finalized %+v, checkpoints %+v, warnings %v, %v; want dead-1 ended and condensed", rep.Finalized, rep.Checkpoints, rep.Warnings, err)
	}
	if s, err := st.Load("dead-1"); err != nil || s.Phase != state.PhaseEnded || s.HasPending() || len(s.Checkpoints) != 1 {
		t.Errorf("dead-1 as stored: %+v, %v", s, err)
	}
}

// A sweep condenses the sessions it ends in the write that ends them, under
// the checkpoints lock. While another process holds that lock, the sweep
// still finalizes: the sessions end marked to condense, and a later sweep
// condenses them.
func TestFinalizesWhileTheCheckpointsAreLocked(t *testing.T) {
	repo, st := newRepo(t)
	startTurn(t, st, repo, "dead-1", deadOwner(t))
	unlock, err := st.Lock("checkpoints")
	if err != nil {
		t.Fatal(err)
	}
	impatient, err := state.Open(repo.CommonDir, state.Options{LockWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer impatient.Close()
	rep, err := Run(repo, impatient, Options{})
	if !errors.Is(err, state.ErrLockTimeout) || len(rep.Finalized) != 1 || len(rep.Checkpoints) != 0 {
		t.Fatalf("sweep while locked: finalized %+v, checkpoints %+v, %v; want dead-1 finalized and a lock timeout", rep.Finalized, rep.Checkpoints, err)
	}
	if marked, _ := st.Marked(state.MarkCondense); !slices.Equal(marked, []string{"dead-1"}) {
		t.Errorf("to condense: %v, want dead-1", marked)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	if rep, err = Run(repo, st, Options{}); err != nil || len(rep.Checkpoints) != 1 {
		t.Fatalf("next sweep: checkpoints %+v, %v", rep.Checkpoints, err)
	}
	if s, _ := st.Load("dead-1"); s.Phase != state.PhaseEnded || s.HasPending() || len(s.Checkpoints) != 1 {
		t.Errorf("dead-1 after: phase %s, pending %v, checkpoints %v", s.Phase, s.HasPending(), s.Checkpoints)
	}
	if marked, _ := st.Marked(state.MarkCondense); len(marked) != 0 {
		t.Errorf("to condense after: %v", marked)
	}
}
