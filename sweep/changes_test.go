package sweep

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tetherdev/tether/capture"
	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/state"
)

// The capture of a turn's end runs in the background, after the turn: a
// machine under load can start it after the user has written a file of
// their own. That file is not the turn's: the checkpoint names it late,
// and the commit that takes it is not linked to the checkpoint (CI caught
// the commit linked when the capture ran late).
func TestACaptureLateToTheTurnsEndTakesNothingOfTheUsers(t *testing.T) {
	repo, st := newRepo(t)
	w := capture.New(repo, st)
	startTurn(t, st, repo, "late-1", aliveOwner(t))
	if _, err := w.CaptureTurn("late-1", 1, capture.Start, time.Now()); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(repo.WorkTree, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("agent.txt", "the agent's\n")
	ended := time.Now().UTC()
	if _, err := st.MutateTx("late-1", func(tx *state.Tx) error {
		tx.Session.Phase, tx.Session.LastTurnEndedAt = state.PhaseIdle, ended
		return tx.AppendTurn(state.TurnRecord{T: state.RecTurnEnd, Turn: 1, At: ended})
	}); err != nil {
		t.Fatal(err)
	}
	endByAgent(t, st, "late-1")

	// The user writes and commits a file of theirs; the turn's end capture
	// runs only then (a file's time may lag a tick of the kernel's clock).
	time.Sleep(50 * time.Millisecond)
	write("user.txt", "mine\n")
	if _, err := w.CaptureTurn("late-1", 1, capture.End, ended); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "user.txt"}, {"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "the user's"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo.WorkTree}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	rep, err := Run(repo, st, Options{PostCommit: true})
	if err != nil || len(rep.Checkpoints) != 1 {
		t.Fatalf("post-commit sweep: %+v, %v", rep.Checkpoints, err)
	}

	s, err := st.Load("late-1")
	if err != nil || len(s.Checkpoints) != 1 {
		t.Fatalf("late-1: %+v, %v", s, err)
	}
	if len(s.Checkpoints[0].Linked) != 0 {
		t.Errorf("the commit of the user's file is linked to the turn's checkpoint: %v", s.Checkpoints[0].Linked)
	}
	cp, err := checkpoint.Open(repo.CommonDir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cp.Read(s.Checkpoints[0].ID)
	if err != nil || len(c.Turns) != 1 || c.Turns[0].Changes == nil {
		t.Fatalf("checkpoint: %+v, %v", c, err)
	}
	ch := c.Turns[0].Changes
	if !slices.Equal(ch.Paths(), []string{"agent.txt"}) || !slices.Equal(ch.Late, []string{"user.txt"}) {
		t.Errorf("the turn changed %q, late %q; want agent.txt, and user.txt late", ch.Paths(), ch.Late)
	}
}
