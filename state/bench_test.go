package state

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetherdev/tether/proclive"
)

func benchStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// sampleSession is a session as the hook leaves it mid-life.
func sampleSession(id string) *Session {
	t := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	return &Session{
		Version: SchemaVersion, ID: id, Agent: "claude-code", Phase: PhaseIdle,
		Worktree: "/home/dev/src/project", Branch: "main",
		StartedAt: t, UpdatedAt: t.Add(time.Hour), LastTurnStartedAt: t.Add(50 * time.Minute), LastTurnEndedAt: t.Add(time.Hour),
		Turns: 12, LastPrompt: "make the tests pass and explain what was wrong",
		Owner:          &proclive.Identity{OS: "linux", PID: 41234, Start: 987654321, Boot: "6c1c3d1e-0c7e-4a8e-9f62-3f0e8a1d2b4c", Host: "devbox", PIDNS: "pid:[4026531836]", Name: "claude"},
		TranscriptPath: "/home/dev/.claude/projects/project/" + id + ".jsonl", Resumable: true,
	}
}

func BenchmarkMutate(b *testing.B) {
	s := benchStore(b)
	for b.Loop() {
		if _, err := s.Mutate("bench", func(sess *Session) error {
			sess.Phase = PhaseIdle
			sess.Turns++
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppend is the hook's transaction: a state change and one turn
// record.
func BenchmarkAppend(b *testing.B) {
	s := benchStore(b)
	for b.Loop() {
		if _, err := s.MutateTx("bench", func(tx *Tx) error {
			tx.Session.Phase = PhaseActive
			tx.Session.Turns++
			return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: tx.Session.Turns, At: time.Now(), Prompt: "make the tests pass"})
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHookPath is what one hook run costs the store: Open, the
// transaction with one turn record, a log line, Close.
func BenchmarkHookPath(b *testing.B) {
	common := b.TempDir()
	for b.Loop() {
		s, err := Open(common, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.MutateTx("bench", func(tx *Tx) error {
			tx.Session.Phase = PhaseActive
			tx.Session.Turns++
			return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: tx.Session.Turns, At: time.Now()})
		}); err != nil {
			b.Fatal(err)
		}
		s.Logger().Info("transition", LogKeySession, "bench")
		s.Close()
	}
}

// BenchmarkList lists 1,000 live sessions with no ended ones, then with
// 100,000 ended ones beside them: the two figures should match, since
// List never looks at ended/. The stores are built once, with plain file
// writes (the files are what Mutate would write, minus the fsyncs).
func BenchmarkList(b *testing.B) {
	const live, ended = 1000, 100_000
	build := func(common string, nEnded int) {
		for i := range live {
			writeSession(b, common, "sessions", fmt.Sprintf("live-%04d", i), PhaseIdle)
		}
		for i := range nEnded {
			writeSession(b, common, "ended", fmt.Sprintf("ended-%06d", i), PhaseEnded)
		}
	}
	for _, n := range []int{0, ended} {
		common := b.TempDir()
		build(common, n)
		b.Run(fmt.Sprintf("live=%d/ended=%d", live, n), func(b *testing.B) {
			s, err := Open(common, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for b.Loop() {
				l, w, err := s.List()
				if err != nil || len(w) != 0 || len(l) != live {
					b.Fatalf("List: %d sessions, %v, %v", len(l), w, err)
				}
			}
		})
	}
}

func writeSession(b *testing.B, common, dir, id string, phase Phase) {
	sess := sampleSession(id)
	sess.Phase = phase
	data, err := json.Marshal(sess)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(common, "tether", dir, id+".json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkMutateEach writes 30 sessions in one grouped write against 30
// MutateTx calls: what a sweep finalizing 30 sessions does.
func BenchmarkMutateEach(b *testing.B) {
	ids := make([]string, 30)
	for i := range ids {
		ids[i] = fmt.Sprintf("s%02d", i)
	}
	touch := func(tx *Tx) error {
		tx.Session.Phase = PhaseIdle
		tx.Session.Turns++
		return nil
	}
	b.Run("grouped", func(b *testing.B) {
		s := benchStore(b)
		for b.Loop() {
			if _, errs := s.MutateEach(ids, touch); errs[0] != nil {
				b.Fatal(errs[0])
			}
		}
	})
	b.Run("one by one", func(b *testing.B) {
		s := benchStore(b)
		for b.Loop() {
			for _, id := range ids {
				if _, err := s.MutateTx(id, touch); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
