package state

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testApply applies the spooled events of these tests: "start N" is a
// turn start keyed ev-N, "end" a turn end, "phase P" sets the phase, and
// "bad" is refused.
func testApply(tx *Tx, event []byte) error {
	verb, arg, _ := strings.Cut(string(event), " ")
	s := tx.Session
	switch verb {
	case "start":
		if s.Phase == PhaseNone {
			s.Phase = PhaseIdle
		}
		return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: s.Turns + 1, At: time.Now(), Key: "ev-" + arg})
	case "end":
		return tx.AppendTurn(TurnRecord{T: RecTurnEnd, Turn: s.Turns, At: time.Now()})
	case "phase":
		s.Phase = Phase(arg)
		return nil
	}
	return fmt.Errorf("unknown spooled event %q", event)
}

// keys lists the keys of the session's turn starts, in the log's order.
func keys(t *testing.T, s *Store, id string) []string {
	t.Helper()
	recs, _, err := s.ReadTurns(id, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		if r.T == RecTurnStart {
			out = append(out, r.Key)
		}
	}
	return out
}

// Spooled events are seen by every reader at once, applied by the next
// writer before its own change, in order, once; their files then go.
func TestSpoolAppliedOnceInOrder(t *testing.T) {
	s, dir := newStore(t, Options{Apply: testApply})
	mustMutate(t, s, "sp", func(tx *Tx) error {
		tx.Session.Phase = PhaseIdle
		return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 1, Key: "ev-0"})
	})
	for i := 1; i <= 3; i++ {
		if err := s.Spool("sp", []byte("start "+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Spool("sp", []byte("end")); err != nil {
		t.Fatal(err)
	}
	// Readers: Load, List, Preview.
	if sess, err := s.Load("sp"); err != nil || sess.Turns != 4 || sess.LastTurnEndedAt.IsZero() {
		t.Fatalf("Load = %+v, %v; want the 3 spooled turns counted and the last ended", sess, err)
	}
	if live, _, err := s.List(); err != nil || len(live) != 1 || live[0].Turns != 4 {
		t.Fatalf("List = %v, %v", live, err)
	}
	if sess, err := s.Preview("sp", func(tx *Tx) error { return nil }); err != nil || sess.Turns != 4 {
		t.Fatalf("Preview = %+v, %v", sess, err)
	}
	if got := keys(t, s, "sp"); !slices.Equal(got, []string{"ev-0"}) {
		t.Fatalf("the log holds %v before any writer: readers wrote", got)
	}
	// The next writer: the spooled events first, then its own.
	sess := mustMutate(t, s, "sp", func(tx *Tx) error {
		if tx.Session.Turns != 4 {
			t.Errorf("the writer sees %d turns, want the spooled ones applied first", tx.Session.Turns)
		}
		return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: tx.Session.Turns + 1, Key: "ev-own"})
	})
	if want := []string{"ev-0", "ev-1", "ev-2", "ev-3", "ev-own"}; !slices.Equal(keys(t, s, "sp"), want) || sess.Turns != 5 {
		t.Fatalf("after the writer: %v, %d turns; want %v", keys(t, s, "sp"), sess.Turns, want)
	}
	if exists(t, filepath.Join(dir, spoolDir, "sp")) {
		t.Error("the applied events' directory is still there")
	}
	mustMutate(t, s, "sp", func(tx *Tx) error { return ErrNoChange })
	if sess, err := s.Load("sp"); err != nil || sess.Turns != 5 || len(keys(t, s, "sp")) != 5 {
		t.Fatalf("a second writer applied again: %+v, %v", sess, err)
	}
}

// A writer with nothing to change writes the spooled events all the same;
// one that fails writes nothing, and leaves them for the next.
func TestSpoolWrittenByANoChangeWriter(t *testing.T) {
	s, _ := newStore(t, Options{Apply: testApply})
	if err := s.Spool("nc", []byte("start 1")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MutateTx("nc", func(tx *Tx) error { return errors.New("no") }); err == nil {
		t.Fatal("a failing callback succeeded")
	}
	if got := keys(t, s, "nc"); len(got) != 0 {
		t.Fatalf("a failed write applied %v", got)
	}
	sess := mustMutate(t, s, "nc", func(tx *Tx) error {
		tx.Session.LastError = "not kept"
		return ErrNoChange
	})
	if sess.Turns != 1 || sess.LastError != "" || !slices.Equal(keys(t, s, "nc"), []string{"ev-1"}) {
		t.Fatalf("after a no-change writer: %+v, log %v", sess, keys(t, s, "nc"))
	}
	if disk := lastWritten(t, s, "nc"); disk.Turns != 1 || disk.Phase != PhaseActive {
		t.Errorf("the state file holds %+v", disk)
	}
}

// A session whose every event so far is spooled exists for readers, and
// a spooled event that cannot be applied is set aside without holding the
// others; a store that cannot apply them refuses to write the session.
func TestSpoolOnlyAndBadEvents(t *testing.T) {
	s, dir := newStore(t, Options{Apply: testApply})
	for _, ev := range []string{"start 1", "bad", "start 2"} {
		if err := s.Spool("new", []byte(ev)); err != nil {
			t.Fatal(err)
		}
	}
	if live, _, err := s.List(); err != nil || len(live) != 1 || live[0].ID != "new" || live[0].Turns != 2 {
		t.Fatalf("List = %v, %v; want the spooled session", live, err)
	}
	plain, err := Open(filepath.Dir(dir), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.MutateTx("new", func(*Tx) error { return nil }); !errors.Is(err, errNoApply) {
		t.Fatalf("a store without Apply wrote over spooled events: %v", err)
	}
	mustMutate(t, s, "new", func(*Tx) error { return ErrNoChange })
	if got := keys(t, s, "new"); !slices.Equal(got, []string{"ev-1", "ev-2"}) {
		t.Fatalf("log %v", got)
	}
	q, err := os.ReadDir(filepath.Join(dir, "quarantine"))
	if err != nil || len(q) != 2 {
		t.Fatalf("quarantine holds %v (%v); want the bad event and its reason", q, err)
	}
	// A spooled event that ends the session moves it to ended/, for every
	// reader at once, and the store stays active until a writer applied it.
	if err := s.Spool("new", []byte("phase ended")); err != nil {
		t.Fatal(err)
	}
	if live, _, _ := s.List(); len(live) != 0 {
		t.Errorf("List shows %v; the spooled end ended it", live[0].ID)
	}
	if ended, _, _ := s.ListEnded(); len(ended) != 1 {
		t.Errorf("ListEnded = %v", ended)
	}
	if stays, err := s.SettleActive(); err != nil || !stays {
		t.Errorf("SettleActive with a spooled event = %v, %v", stays, err)
	}
	if err := s.Remove("new"); err == nil {
		t.Error("Remove dropped a session whose end waits in the spool")
	}
}

// Many processes spool events of one session while others apply them,
// and all are killed -9 at random points, over and over: every event a
// spooler reported is applied exactly once, in the order it spooled them,
// and no event, reported or not, is ever applied twice.
func TestSpoolCrashKill9(t *testing.T) {
	common := t.TempDir()
	rng := rand.New(rand.NewPCG(2, uint64(time.Now().UnixNano())))
	var reported []int // events a spooler said were spooled
	next := 1
	rounds := 60
	if testing.Short() {
		rounds = 15
	}
	for round := range rounds {
		spooler := child(t, "spool", common, "crash-sp", "CHILD_N="+strconv.Itoa(next))
		next += 100_000
		applier := child(t, "apply", common, "crash-sp")
		out, err := spooler.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []*exec.Cmd{spooler, applier} {
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
		}
		lines := make(chan int, 1<<16)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if n, err := strconv.Atoi(sc.Text()); err == nil {
					lines <- n
				}
			}
		}()
		// Most rounds let the spooler get going (processes start slowly on
		// a loaded machine); some kill them while they may still start.
		if rng.IntN(4) != 0 {
			if n, ok := <-lines; ok {
				reported = append(reported, n)
			}
		}
		time.Sleep(time.Duration(rng.IntN(40_000)) * time.Microsecond)
		first, second := spooler, applier
		if rng.IntN(2) == 0 {
			first, second = second, first
		}
		_ = first.Process.Kill()
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
		_ = second.Process.Kill()
		_ = spooler.Wait()
		_ = applier.Wait()
		for n := range lines {
			reported = append(reported, n)
		}
		checkSpoolAfterCrash(t, common, round, reported)
	}
	// A last writer applies what is left: every reported event, once, in
	// order.
	s, err := Open(common, Options{Apply: testApply})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.MutateTx("crash-sp", func(*Tx) error { return ErrNoChange }); err != nil {
		t.Fatal(err)
	}
	got := checkSpoolAfterCrash(t, common, rounds, reported)
	have := map[int]bool{}
	for _, n := range got {
		have[n] = true
	}
	for _, n := range reported {
		if !have[n] {
			t.Fatalf("event %d was reported spooled and never applied", n)
		}
	}
	left, err := spooled(mustRoot(t, s), "crash-sp")
	if err != nil || len(left) > 0 {
		t.Errorf("events left in the spool after the last write: %v, %v", left, err)
	}
	t.Logf("%d events reported spooled over %d rounds, %d applied", len(reported), rounds, len(got))
	if len(reported) < rounds {
		t.Errorf("only %d events spooled: the kills came too early to test much", len(reported))
	}
}

// checkSpoolAfterCrash checks that the events the session's log holds are
// each there once, in the order spooled (each spooler's numbers grow),
// and returns them. A reader sees the same plus what waits in the spool.
func checkSpoolAfterCrash(t *testing.T, common string, round int, reported []int) []int {
	t.Helper()
	s, err := Open(common, Options{Apply: testApply})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []int
	seen := map[int]bool{}
	for _, k := range keys(t, s, "crash-sp") {
		n, err := strconv.Atoi(strings.TrimPrefix(k, "ev-"))
		if err != nil {
			t.Fatalf("round %d: key %q", round, k)
		}
		if seen[n] {
			t.Fatalf("round %d: event %d applied twice", round, n)
		}
		if len(got) > 0 && n < got[len(got)-1] {
			t.Fatalf("round %d: event %d applied after %d", round, n, got[len(got)-1])
		}
		seen[n] = true
		got = append(got, n)
	}
	sess, err := s.Load("crash-sp")
	if errors.Is(err, ErrNotFound) && len(reported) == 0 {
		return got
	}
	if err != nil {
		t.Fatalf("round %d: Load: %v", round, err)
	}
	if sess.Turns < len(reported) {
		t.Fatalf("round %d: a reader sees %d turns; %d events were reported spooled", round, sess.Turns, len(reported))
	}
	return got
}

// A spooled event that adds turns to a session ended and condensed since
// it was spooled (a sweep held the lock, the hook spooled its turn start,
// the sweep ended the session) leaves it marked to condense: those turns
// reach the checkpoints too.
func TestSpoolAfterTheEndIsCondensed(t *testing.T) {
	s, _ := newStore(t, Options{Apply: testApply})
	mustMutate(t, s, "late", func(tx *Tx) error {
		tx.Session.Phase = PhaseEnded
		tx.ClearMark(MarkCondense) // condensed as it ended
		return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 1, Key: "ev-0"})
	})
	if marked, _ := s.Marked(MarkCondense); len(marked) != 0 {
		t.Fatalf("marked %v after a write that condensed as it ended", marked)
	}
	if err := s.Spool("late", []byte("start 1")); err != nil {
		t.Fatal(err)
	}
	sess := mustMutate(t, s, "late", func(*Tx) error { return ErrNoChange })
	if sess.Phase != PhaseEnded || sess.Turns != 2 {
		t.Fatalf("after the spooled turn: %+v", sess)
	}
	if marked, _ := s.Marked(MarkCondense); !slices.Equal(marked, []string{"late"}) {
		t.Errorf("marked %v; the spooled turn is still to condense", marked)
	}
}
