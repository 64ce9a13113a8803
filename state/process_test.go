package state

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	procs     = 16
	perProc   = 200
	wantTotal = procs * perProc
)

// TestConcurrentProcesses runs 16 processes × 200 locked increments, all on
// one session and then each on its own, while the parent keeps reading:
// no update may be lost, and every file must be valid JSON whenever a
// reader looks.
func TestConcurrentProcesses(t *testing.T) {
	for _, shared := range []bool{true, false} {
		name := map[bool]string{true: "one session", false: "distinct sessions"}[shared]
		t.Run(name, func(t *testing.T) {
			common := t.TempDir()
			ids := make([]string, procs)
			for i := range ids {
				ids[i] = "shared"
				if !shared {
					ids[i] = fmt.Sprintf("s%02d", i)
				}
			}
			s, err := Open(common, Options{LockWait: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()

			stop := make(chan struct{})
			var reads atomic.Int64
			var readerErr error
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				readerErr = readerLoop(s, stop, &reads)
			}()

			cmds := make([]*exec.Cmd, procs)
			for i := range cmds {
				cmds[i] = child(t, "count", common, ids[i], "CHILD_N="+strconv.Itoa(perProc))
				if err := cmds[i].Start(); err != nil {
					t.Fatal(err)
				}
			}
			for i, c := range cmds {
				if err := c.Wait(); err != nil {
					t.Errorf("child %d: %v", i, err)
				}
			}
			close(stop)
			wg.Wait()
			if readerErr != nil {
				t.Fatal(readerErr)
			}
			if reads.Load() == 0 {
				t.Fatal("the reader never read a file")
			}
			list, warns, err := s.List()
			if err != nil || len(warns) != 0 {
				t.Fatalf("List = %v, %v", warns, err)
			}
			total := 0
			for _, sess := range list {
				total += sess.Turns
				if !shared && sess.Turns != perProc {
					t.Errorf("%s: %d increments, want %d", sess.ID, sess.Turns, perProc)
				}
			}
			if total != wantTotal {
				t.Errorf("total increments = %d, want %d", total, wantTotal)
			}
			t.Logf("%d file reads by the concurrent reader", reads.Load())
		})
	}
}

// readerLoop reads every state file, raw and through the store, until
// stop; any partial or invalid file is an error.
func readerLoop(s *Store, stop <-chan struct{}, reads *atomic.Int64) error {
	dir := filepath.Join(s.Dir(), "sessions")
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".json") {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				continue // replaced between ReadDir and ReadFile: fine
			}
			reads.Add(1)
			if !json.Valid(data) {
				return fmt.Errorf("%s is not valid JSON: %q", e.Name(), data)
			}
			id := strings.TrimSuffix(e.Name(), ".json")
			if _, err := s.Load(id); err != nil {
				return fmt.Errorf("Load(%s) during writes: %w", id, err)
			}
		}
		if _, warns, err := s.List(); err != nil || len(warns) != 0 {
			return fmt.Errorf("List during writes: %v %v", warns, err)
		}
		// Leave the two cores mostly to the writers; thousands of looks
		// remain.
		time.Sleep(200 * time.Microsecond)
	}
}

// TestCrashKill9 kills a writing process with SIGKILL at random moments,
// 100 times. After each kill the state loads, the turn log parses, and
// nothing the child reported as written is lost. The child ends the
// session every fifth turn and revives it on the next, so kills also land
// in the middle of moves between sessions/ and ended/. The child writes
// one session with MutateTx, or a group of three with MutateEach (one
// grouped write per turn), which must keep the same promises for each.
func TestCrashKill9(t *testing.T) {
	for _, ids := range [][]string{{"crashy"}, {"g1", "g2", "g3"}} {
		t.Run(fmt.Sprintf("%d session(s)", len(ids)), func(t *testing.T) { crashKill9(t, ids) })
	}
	// Each write that ends a session records it condensed (it clears its
	// to-condense mark), as a sweep's does.
	t.Run("condensed as they end", func(t *testing.T) { crashKill9(t, []string{"c1", "c2", "c3"}, "CHILD_CONDENSED=1") })
}

func crashKill9(t *testing.T, ids []string, env ...string) {
	common := t.TempDir()
	id := strings.Join(ids, ",")
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	reported := 0            // highest turn reported
	last := map[string]int{} // turns found after the last kill, per session
	halfMoved := 0           // kills that left a move between homes unfinished
	for round := range 100 {
		cmd := child(t, "crash", common, id, env...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan int, 1024)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				n, err := strconv.Atoi(sc.Text())
				if err == nil {
					lines <- n
				}
			}
		}()
		// Most rounds let the child get going; some kill it while it may
		// still be starting or on its first write.
		if rng.IntN(4) != 0 {
			if n, ok := <-lines; ok {
				reported = max(reported, n)
			}
		}
		time.Sleep(time.Duration(rng.IntN(15_000)) * time.Microsecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		for n := range lines {
			reported = max(reported, n)
		}
		if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("round %d: child ended with %v, not by the kill", round, err)
		}
		dir := filepath.Join(common, "tether")
		for _, id := range ids {
			last[id] = checkAfterCrash(t, common, id, round, max(reported, last[id]))
			if exists(t, filepath.Join(dir, "sessions", id+".json")) && exists(t, filepath.Join(dir, "ended", id+".json")) {
				halfMoved++
			}
		}
	}
	if reported < 100 {
		t.Errorf("only %d writes completed over 100 rounds: the kills came too early to test much", reported)
	}
	t.Logf("%d writes reported over 100 kills; %d kills left a move half done", reported, halfMoved)

	// The next write completes any interrupted move: one home only.
	s, err := Open(common, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range ids {
		sess, err := s.Mutate(id, func(sess *Session) error { sess.LastError = "checked"; return nil })
		if err != nil {
			t.Fatal(err)
		}
		home, away := "sessions", "ended"
		if sess.Phase == PhaseEnded {
			home, away = away, home
		}
		if !exists(t, filepath.Join(s.Dir(), home, id+".json")) || exists(t, filepath.Join(s.Dir(), away, id+".json")) ||
			exists(t, filepath.Join(s.Dir(), away, id+".turns.jsonl")) {
			t.Errorf("after a clean write %s is not only in %s/", id, home)
		}
	}
}

// checkAfterCrash checks the store after a kill and returns the turns the
// state holds. floor is what must have survived: every reported write, and
// everything found after the previous kill.
// lastWritten is the session as its newest state file says, before any
// turn records past it are replayed.
func lastWritten(t *testing.T, s *Store, id string) Session {
	t.Helper()
	var newest Session
	for _, home := range []string{"sessions", "ended"} {
		data, err := os.ReadFile(filepath.Join(s.Dir(), home, id+".json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		var sess Session
		if err == nil {
			err = json.Unmarshal(data, &sess)
		}
		if err != nil {
			t.Fatalf("read %s state: %v", home, err)
		}
		if !sess.UpdatedAt.Before(newest.UpdatedAt) {
			newest = sess
		}
	}
	return newest
}

func checkAfterCrash(t *testing.T, common, id string, round, floor int) int {
	t.Helper()
	s, err := Open(common, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sess, err := s.Load(id)
	if floor == 0 && errors.Is(err, ErrNotFound) {
		return 0 // killed before the first write ever completed
	}
	if err != nil {
		t.Fatalf("round %d: Load after kill: %v", round, err)
	}
	// A session a half-finished move left in both homes is listed as it
	// is: live only if its newest copy is.
	live, _, err := s.List()
	if err != nil {
		t.Fatalf("round %d: List after kill: %v", round, err)
	}
	if listed := slices.ContainsFunc(live, func(l *Session) bool { return l.ID == id }); listed != (sess.Phase != PhaseEnded) {
		t.Fatalf("round %d: %s in phase %s, listed live: %v", round, id, sess.Phase, listed)
	}
	// Nothing reported may be missing.
	if sess.Turns < floor {
		t.Fatalf("round %d: state has %d turns, want at least %d", round, sess.Turns, floor)
	}
	// The phase is the last completed write's: records a kill left past
	// its turn_log_size are turn starts, which keep an active session
	// active and do not revive an ended one.
	if disk := lastWritten(t, s, id); sess.Phase != crashPhase(disk.Turns) {
		t.Fatalf("round %d: turn %d in phase %s, last written turn %d", round, sess.Turns, sess.Phase, disk.Turns)
	}
	recs, _, err := s.ReadTurns(id, 0)
	if err != nil {
		t.Fatalf("round %d: ReadTurns after kill: %v", round, err)
	}
	// Every turn the state counts is in the log, numbered without repeats
	// or gaps: a record appended just before a kill that prevented its
	// state write is counted by the next writer, never numbered again. The
	// records the state does not count yet are exactly those past its
	// turn_log_size.
	seen := 0
	for i, r := range recs {
		if r.Turn != seen+1 {
			t.Fatalf("round %d: record %d is turn %d after turn %d", round, i, r.Turn, seen)
		}
		seen = r.Turn
	}
	uncounted, _, err := s.ReadTurns(id, sess.TurnLogSize)
	if err != nil {
		t.Fatalf("round %d: ReadTurns past the counted size: %v", round, err)
	}
	if seen != sess.Turns+len(uncounted) {
		t.Fatalf("round %d: log reaches turn %d, state counts %d, %d records past its size", round, seen, sess.Turns, len(uncounted))
	}
	return sess.Turns
}
