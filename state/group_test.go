package state

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// MutateEach keeps MutateTx's promises for every session of the group:
// moves between homes with their turn logs and marks, newer versions
// refused, ErrNoChange and callback errors writing nothing, and a session
// that fails leaves the others written.
func TestMutateEach(t *testing.T) {
	s, dir := newStore(t, Options{})
	for _, id := range []string{"a", "b", "c", "newer"} {
		mustMutate(t, s, id, func(tx *Tx) error {
			tx.Session.Phase = PhaseActive
			return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 1, At: time.Now(), Prompt: "p " + id})
		})
	}
	writeRaw(t, filepath.Join(dir, "sessions", "newer.json"), `{"version":99,"id":"newer","phase":"idle"}`)
	ids := []string{"c", "a", "unchanged", "newer", "fails", "b", "../bad", "a"}
	sessions, errs := s.MutateEach(ids, func(tx *Tx) error {
		switch tx.Session.ID {
		case "unchanged":
			return ErrNoChange
		case "fails":
			return errors.New("callback says no")
		}
		tx.Session.Phase, tx.Session.EndReason = PhaseEnded, "manual"
		return nil
	})
	want := map[int]string{3: "newer", 4: "callback says no", 6: "invalid", 7: "listed twice"}
	for i, err := range errs {
		switch w, bad := want[i]; {
		case bad && (err == nil || !strings.Contains(strings.ToLower(err.Error()), w)):
			t.Errorf("%s: error %v, want one saying %q", ids[i], err, w)
		case !bad && err != nil:
			t.Errorf("%s: %v", ids[i], err)
		case bad && sessions[i] != nil:
			t.Errorf("%s failed but returned a session", ids[i])
		}
	}
	if !errors.Is(errs[3], ErrNewerVersion) {
		t.Errorf("newer: %v, want ErrNewerVersion", errs[3])
	}
	for _, id := range []string{"a", "b", "c"} {
		if !exists(t, filepath.Join(dir, "ended", id+".json")) || !exists(t, filepath.Join(dir, "ended", id+".turns.jsonl")) ||
			exists(t, filepath.Join(dir, "sessions", id+".json")) || exists(t, filepath.Join(dir, "sessions", id+".turns.jsonl")) {
			t.Errorf("%s did not move to ended/ with its turn log", id)
		}
		sess, err := s.Load(id)
		if err != nil || sess.Phase != PhaseEnded || sess.Turns != 1 || sess.LastPrompt != "p "+id {
			t.Errorf("%s after the group write: %+v, %v", id, sess, err)
		}
	}
	if sessions[2] == nil || sessions[2].ID != "unchanged" || exists(t, filepath.Join(dir, "sessions", "unchanged.json")) {
		t.Errorf("ErrNoChange: session %+v, or a file was written", sessions[2])
	}
	if exists(t, filepath.Join(dir, "sessions", "fails.json")) {
		t.Error("a failed callback wrote its session")
	}
	marked, _ := s.Marked(MarkCondense)
	slices.Sort(marked)
	if !slices.Equal(marked, []string{"a", "b", "c"}) {
		t.Errorf("condense marks = %v", marked)
	}
}

// Groups larger than maxGroup are written in several rounds, each session
// once.
func TestMutateEachLargeGroup(t *testing.T) {
	s, _ := newStore(t, Options{})
	var ids []string
	for i := range maxGroup*2 + 3 {
		ids = append(ids, fmt.Sprintf("s%04d", i))
	}
	for round := 1; round <= 2; round++ {
		_, errs := s.MutateEach(ids, func(tx *Tx) error {
			tx.Session.Phase = PhaseIdle
			tx.Session.Turns++
			return nil
		})
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	}
	list, _, err := s.List()
	if err != nil || len(list) != len(ids) {
		t.Fatalf("List: %d sessions, %v", len(list), err)
	}
	for _, sess := range list {
		if sess.Turns != 2 {
			t.Errorf("%s: %d writes, want 2", sess.ID, sess.Turns)
		}
	}
}

// Processes running MutateEach over overlapping groups, listed in
// different orders, neither deadlock nor lose an update.
func TestMutateEachConcurrentGroups(t *testing.T) {
	common := t.TempDir()
	const n, procs = 40, 6
	ids := []string{"g1", "g2", "g3", "g4", "g5"}
	cmds := make([]*exec.Cmd, procs)
	for i := range cmds {
		order := slices.Clone(ids)
		if i%2 == 1 {
			slices.Reverse(order)
		}
		cmds[i] = child(t, "count-group", common, strings.Join(order, ","), "CHILD_N="+strconv.Itoa(n))
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("child %d: %v", i, err)
		}
	}
	s, err := Open(common, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range ids {
		sess, err := s.Load(id)
		if err != nil || sess.Turns != n*procs {
			t.Errorf("%s: %d increments (%v), want %d", id, sess.Turns, err, n*procs)
		}
	}
}

// The active flag follows the store: set by a live session or a mark,
// kept by SettleActive while either remains, removed once neither does.
func TestActiveFlag(t *testing.T) {
	s, dir := newStore(t, Options{})
	flag := filepath.Join(dir, ActiveFlag)
	settle := func(want bool) {
		t.Helper()
		got, err := s.SettleActive()
		if err != nil || got != want || exists(t, flag) != want {
			t.Fatalf("SettleActive = %v, %v (flag on disk: %v); want %v", got, err, exists(t, flag), want)
		}
	}
	settle(false) // no store at all
	mustMutate(t, s, "a", func(tx *Tx) error { tx.Session.Phase = PhaseIdle; return nil })
	if !exists(t, flag) {
		t.Fatal("a live session did not flag the store")
	}
	settle(true)
	mustMutate(t, s, "a", func(tx *Tx) error { tx.Session.Phase = PhaseEnded; return nil })
	settle(true) // the condense mark
	if err := s.ClearMark(MarkCondense, "a"); err != nil {
		t.Fatal(err)
	}
	writeRaw(t, filepath.Join(dir, "sessions", "left.json.tmp"), "{") // a crash's leftover is no work
	settle(false)
	if err := s.SetMark(MarkUnlinked, "a"); err != nil {
		t.Fatal(err)
	}
	if !exists(t, flag) {
		t.Fatal("a mark did not flag the store")
	}
	settle(true)
	if err := s.ClearMark(MarkUnlinked, "a"); err != nil {
		t.Fatal(err)
	}
	settle(false)
	// A turn revives the ended session: live again, flagged again.
	mustMutate(t, s, "a", func(tx *Tx) error {
		tx.Session.Phase = PhaseActive
		return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 1, At: time.Now()})
	})
	if !exists(t, flag) {
		t.Fatal("a revived session did not flag the store")
	}
}

// A session or mark written while SettleActive runs is never left without
// the flag: the other writer runs at every step of SettleActive, and
// SettleActive at the one point of a write where the flag could be lost
// (after the state, before the flag), and once both are done the flag is
// there.
func TestActiveFlagRace(t *testing.T) {
	steps := []string{"settle:removed", "settle:read sessions", "settle:read condense", "settle:read unlinked"}
	writers := map[string]func(s *Store, id string) error{
		"live session": func(s *Store, id string) error {
			_, err := s.Mutate(id, func(sess *Session) error { sess.Phase = PhaseIdle; return nil })
			return err
		},
		"ended session": func(s *Store, id string) error {
			_, err := s.Mutate(id, func(sess *Session) error { sess.Phase = PhaseEnded; return nil })
			return err
		},
		"unlinked mark": func(s *Store, id string) error { return s.SetMark(MarkUnlinked, id) },
	}
	for name, write := range writers {
		for _, step := range steps {
			t.Run(name+" at "+step, func(t *testing.T) {
				s, dir := newStore(t, Options{})
				mustMutate(t, s, "old", func(tx *Tx) error { tx.Session.Phase = PhaseEnded; return nil })
				if err := s.ClearMark(MarkCondense, "old"); err != nil {
					t.Fatal(err)
				}
				s.pause = func(point string) {
					if point == step {
						s.pause = nil
						if err := write(s, "new"); err != nil {
							t.Error(err)
						}
					}
				}
				if _, err := s.SettleActive(); err != nil {
					t.Fatal(err)
				}
				if !exists(t, filepath.Join(dir, ActiveFlag)) {
					t.Fatal("the store holds work and is not flagged")
				}
			})
		}
		t.Run(name+" settled before its flag", func(t *testing.T) {
			s, dir := newStore(t, Options{})
			s.pause = func(point string) {
				if point == "before-flag" {
					s.pause = nil
					if _, err := s.SettleActive(); err != nil {
						t.Error(err)
					}
				}
			}
			if err := write(s, "new"); err != nil {
				t.Fatal(err)
			}
			if !exists(t, filepath.Join(dir, ActiveFlag)) {
				t.Fatal("the store holds work and is not flagged")
			}
		})
	}
}

// A clone is named once; the name survives, a damaged one is replaced
// (the damaged file quarantined), and concurrent first uses agree.
func TestCloneID(t *testing.T) {
	s, dir := newStore(t, Options{})
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Go(func() {
			var err error
			if ids[i], err = s.CloneID(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || len(id) != cloneIDLen {
			t.Fatalf("concurrent first uses named the clone %v", ids)
		}
	}
	writeRaw(t, filepath.Join(dir, cloneFile), "../../etc\n")
	again, err := s.CloneID()
	if err != nil || again == ids[0] || !validCloneID(again) {
		t.Fatalf("after damage: %q, %v", again, err)
	}
	if q, _ := filepath.Glob(filepath.Join(dir, "quarantine", cloneFile+".*")); len(q) == 0 {
		t.Error("the damaged name was not quarantined")
	}
	if same, _ := s.CloneID(); same != again {
		t.Errorf("the name changed: %q then %q", again, same)
	}
}

// MutateEachThen's step sees the transactions that will write, locks held,
// and what it changes is written with them. A session the step records as
// condensed (it clears the to-condense mark) ends without the mark ever
// being set; the one it leaves alone ends marked, as with MutateEach.
func TestMutateEachThen(t *testing.T) {
	s, _ := newStore(t, Options{})
	ids := []string{"condensed", "left", "untouched"}
	for _, id := range ids {
		if _, err := s.Mutate(id, func(sess *Session) error { sess.Phase = PhaseIdle; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	var midWrite []string // the marks while the states are on disk
	s.pause = func(point string) {
		if point == "before-flag" {
			midWrite, _ = s.Marked(MarkCondense)
		}
	}
	var seen []string
	_, errs := s.MutateEachThen(ids, func(tx *Tx) error {
		if tx.Session.ID == "untouched" {
			return ErrNoChange
		}
		tx.Session.Phase = PhaseEnded
		return nil
	}, func(txs []*Tx) {
		for _, tx := range txs {
			seen = append(seen, tx.Session.ID)
			if tx.Session.ID == "condensed" {
				tx.Session.Condensed = 42
				tx.ClearMark(MarkCondense)
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []string{"condensed", "left"}) {
		t.Errorf("then saw %v, want the two that write", seen)
	}
	if got, err := s.Load("condensed"); err != nil || got.Condensed != 42 || got.Phase != PhaseEnded {
		t.Errorf("condensed as stored: %+v, %v", got, err)
	}
	if !slices.Equal(midWrite, []string{"left"}) {
		t.Errorf("to condense during the write: %v, want only the session the step left alone", midWrite)
	}
	if marked, err := s.Marked(MarkCondense); err != nil || !slices.Equal(marked, []string{"left"}) {
		t.Errorf("to condense after: %v (%v)", marked, err)
	}
}
