package state

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestMarks(t *testing.T) {
	st, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ids, err := st.Marked(MarkUnlinked); err != nil || len(ids) != 0 {
		t.Fatalf("fresh store: %v, %v", ids, err)
	}
	if marked, err := st.AnyMarked(MarkUnlinked); err != nil || marked {
		t.Fatalf("AnyMarked of a fresh store = %v, %v", marked, err)
	}
	for _, id := range []string{"b", "a", "a"} {
		if err := st.SetMark(MarkUnlinked, id); err != nil {
			t.Fatal(err)
		}
	}
	if marked, err := st.AnyMarked(MarkUnlinked); err != nil || !marked {
		t.Fatalf("AnyMarked = %v, %v", marked, err)
	}
	if marked, err := st.AnyMarked(MarkCondense); err != nil || marked {
		t.Fatalf("AnyMarked of another kind = %v, %v", marked, err)
	}
	ids, err := st.Marked(MarkUnlinked)
	slices.Sort(ids)
	if err != nil || !slices.Equal(ids, []string{"a", "b"}) {
		t.Fatalf("marked = %v, %v", ids, err)
	}
	if other, _ := st.Marked(MarkCondense); len(other) != 0 {
		t.Fatalf("marks leak between kinds: %v", other)
	}
	if err := st.ClearMark(MarkUnlinked, "a"); err != nil {
		t.Fatal(err)
	}
	if err := st.ClearMark(MarkUnlinked, "never-marked"); err != nil {
		t.Fatal(err)
	}
	if ids, _ := st.Marked(MarkUnlinked); !slices.Equal(ids, []string{"b"}) {
		t.Fatalf("after clear: %v", ids)
	}
	if err := st.SetMark(MarkUnlinked, "../escape"); err == nil {
		t.Fatal("a bad ID was marked")
	}
}

// Finalizing marks the session for condensing before the ended state is
// written.
func TestFinalizeSetsCondenseMark(t *testing.T) {
	st, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Mutate("s1", func(s *Session) error { s.Phase = PhaseIdle; return nil }); err != nil {
		t.Fatal(err)
	}
	if ids, _ := st.Marked(MarkCondense); len(ids) != 0 {
		t.Fatalf("a live session is marked: %v", ids)
	}
	if _, err := st.Mutate("s1", func(s *Session) error { s.Phase = PhaseEnded; return nil }); err != nil {
		t.Fatal(err)
	}
	if ids, _ := st.Marked(MarkCondense); !slices.Equal(ids, []string{"s1"}) {
		t.Fatalf("after finalize: %v", ids)
	}
}

// A writer killed mid-move leaves the session in both homes; List shows it
// once, as its newer copy says, and finishes the move.
func TestListFinishesAHalfDoneMove(t *testing.T) {
	st, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Mutate("half", func(s *Session) error { s.Phase = PhaseActive; return nil }); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(st.Dir(), "sessions", "half.json")
	stale, err := os.ReadFile(live)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Mutate("half", func(s *Session) error { s.Phase = PhaseEnded; return nil }); err != nil {
		t.Fatal(err)
	}
	// The crash: the old live copy is still there.
	if err := os.WriteFile(live, stale, 0o600); err != nil {
		t.Fatal(err)
	}
	sessions, _, err := st.List()
	if err != nil || len(sessions) != 0 {
		t.Fatalf("List = %d sessions, %v; want none", len(sessions), err)
	}
	if _, err := os.Stat(live); !os.IsNotExist(err) {
		t.Fatalf("the stale live copy is still there: %v", err)
	}
	ended, _, err := st.ListEnded()
	if err != nil || len(ended) != 1 || ended[0].Phase != PhaseEnded {
		t.Fatalf("ListEnded = %v, %v", ended, err)
	}
}

// A writer killed between appending a turn and writing the state that
// counts it leaves an uncounted record; the next transaction counts it, so
// turn numbers are never reused.
func TestUncountedTurnIsCounted(t *testing.T) {
	st, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	turn := func() {
		t.Helper()
		if _, err := st.MutateTx("u", func(tx *Tx) error {
			tx.Session.Turns++
			tx.Session.Phase = PhaseActive
			return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: tx.Session.Turns})
		}); err != nil {
			t.Fatal(err)
		}
	}
	turn()
	// The crash: turn 2 reached the log, its state never did.
	log := filepath.Join(st.Dir(), "sessions", "u.turns.jsonl")
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"t":"turn-start","turn":2,"at":"2026-11-21T12:00:00Z","transcript_size":0}` + "\n")
	f.Close()
	turn()
	recs, _, err := st.ReadTurns("u", 0)
	if err != nil || len(recs) != 3 {
		t.Fatalf("records %v, %v", recs, err)
	}
	for i, r := range recs {
		if r.Turn != i+1 {
			t.Fatalf("record %d has turn %d: numbers reused", i, r.Turn)
		}
	}
	s, _ := st.Load("u")
	if fi, _ := os.Stat(log); s.Turns != 3 || s.TurnLogSize != fi.Size() {
		t.Fatalf("state: turns %d, log size %d", s.Turns, s.TurnLogSize)
	}
}

// A transaction clears the marks it asks to once it has committed, with
// or without a write, under the session's lock; a transaction that fails
// leaves them, alone or grouped.
func TestTxClearMark(t *testing.T) {
	st, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"written", "unchanged", "failed", "grouped-ok", "grouped-failed"} {
		if _, err := st.Mutate(id, func(s *Session) error { s.Phase = PhaseIdle; return nil }); err != nil {
			t.Fatal(err)
		}
		if err := st.SetMark(MarkCondense, id); err != nil {
			t.Fatal(err)
		}
	}
	refused := errors.New("refused")
	if _, err := st.MutateTx("written", func(tx *Tx) error { tx.ClearMark(MarkCondense); tx.Session.Turns++; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := st.MutateTx("unchanged", func(tx *Tx) error { tx.ClearMark(MarkCondense); return ErrNoChange }); err != nil {
		t.Fatal(err)
	}
	if _, err := st.MutateTx("failed", func(tx *Tx) error { tx.ClearMark(MarkCondense); return refused }); !errors.Is(err, refused) {
		t.Fatalf("MutateTx = %v, want %v", err, refused)
	}
	_, errs := st.MutateEach([]string{"grouped-ok", "grouped-failed"}, func(tx *Tx) error {
		tx.ClearMark(MarkCondense)
		if tx.Session.ID == "grouped-failed" {
			return refused
		}
		tx.Session.Turns++
		return nil
	})
	if errs[0] != nil || !errors.Is(errs[1], refused) {
		t.Fatalf("MutateEach errors = %v", errs)
	}
	ids, err := st.Marked(MarkCondense)
	slices.Sort(ids)
	if err != nil || !slices.Equal(ids, []string{"failed", "grouped-failed"}) {
		t.Fatalf("still marked: %v, %v; want the failed ones only", ids, err)
	}
}
