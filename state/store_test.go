package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/proclive"
)

// clock is a settable time source for Options.Now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newStore(t *testing.T, opts Options) (*Store, string) {
	t.Helper()
	common := t.TempDir()
	s, err := Open(common, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, s.Dir()
}

func mustMutate(t *testing.T, s *Store, id string, fn func(*Tx) error) *Session {
	t.Helper()
	sess, err := s.MutateTx(id, fn)
	if err != nil {
		t.Fatalf("MutateTx(%s): %v", id, err)
	}
	return sess
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Lstat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

func writeRaw(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readRaw(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidateID(t *testing.T) {
	good := []string{"a", "abc-DEF_0.9", "...", ".hidden", "0c9f1b9e-6d3a-4f57-9b1e-2f0b7e6d1a11", strings.Repeat("x", 128)}
	bad := []string{"", ".", "..", "../x", "/abs", `C:\x`, "a/b", `a\b`, "a\x00b", "é", "a b", "a\n", strings.Repeat("x", 129)}
	for _, id := range good {
		if err := ValidateID(id); err != nil {
			t.Errorf("ValidateID(%q) = %v", id, err)
		}
	}
	for _, id := range bad {
		if err := ValidateID(id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("ValidateID(%q) = %v, want ErrInvalidID", id, err)
		}
	}
}

func TestOpenTouchesNothing(t *testing.T) {
	common := t.TempDir()
	s, err := Open(common, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load on an empty store: %v", err)
	}
	if l, w, err := s.List(); err != nil || l != nil || w != nil {
		t.Fatalf("List on an empty store: %v %v %v", l, w, err)
	}
	if recs, next, err := s.ReadTurns("x", 0); err != nil || recs != nil || next != 0 {
		t.Fatalf("ReadTurns on an empty store: %v %v %v", recs, next, err)
	}
	if exists(t, s.Dir()) {
		t.Fatal("reads created the store directory")
	}
	if s.Dir() != filepath.Join(common, "tether") {
		t.Fatalf("Dir() = %s", s.Dir())
	}
}

func TestMutateLifecycle(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}
	s, dir := newStore(t, Options{Now: c.now})
	sess := mustMutate(t, s, "s1", func(tx *Tx) error {
		if tx.Exists || tx.Session.Version != SchemaVersion || tx.Session.ID != "s1" || tx.Session.Phase != PhaseNone {
			t.Errorf("fresh tx: exists=%v %+v", tx.Exists, tx.Session)
		}
		tx.Session.Phase = PhaseIdle
		tx.Session.Agent = "claude-code"
		tx.Session.StartedAt = c.t
		tx.Session.Owner = &proclive.Identity{OS: "linux", PID: 42, Start: 7}
		return nil
	})
	if !sess.UpdatedAt.Equal(c.t) {
		t.Errorf("UpdatedAt = %v, want the clock's %v", sess.UpdatedAt, c.t)
	}
	got, err := s.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Agent != "claude-code" || got.Phase != PhaseIdle || got.Owner == nil || got.Owner.PID != 42 || !got.UpdatedAt.Equal(c.t) {
		t.Errorf("Load = %+v", got)
	}
	for path, mode := range map[string]fs.FileMode{
		dir:                                    0o700 | fs.ModeDir,
		filepath.Join(dir, "sessions"):         0o700 | fs.ModeDir,
		filepath.Join(dir, "locks"):            0o700 | fs.ModeDir,
		filepath.Join(dir, "sessions/s1.json"): 0o600,
		filepath.Join(dir, "locks/s1.lock"):    0o600,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != mode {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode(), mode)
		}
	}
	c.t = c.t.Add(time.Minute)
	mustMutate(t, s, "s1", func(tx *Tx) error {
		if !tx.Exists {
			t.Error("second tx: Exists = false")
		}
		tx.Session.Turns = 3
		return nil
	})
	if got, _ := s.Load("s1"); got.Turns != 3 || !got.UpdatedAt.Equal(c.t) {
		t.Errorf("after update: %+v", got)
	}
}

func TestUpdatedAtStrictlyIncreases(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s, _ := newStore(t, Options{Now: c.now})
	a := mustMutate(t, s, "x", func(*Tx) error { return nil })
	b := mustMutate(t, s, "x", func(*Tx) error { return nil })
	c.t = c.t.Add(-time.Hour) // the clock steps back
	d := mustMutate(t, s, "x", func(*Tx) error { return nil })
	if !b.UpdatedAt.After(a.UpdatedAt) || !d.UpdatedAt.After(b.UpdatedAt) {
		t.Fatalf("UpdatedAt not increasing: %v %v %v", a.UpdatedAt, b.UpdatedAt, d.UpdatedAt)
	}
}

func TestNoChangeWritesNothing(t *testing.T) {
	s, dir := newStore(t, Options{})
	mustMutate(t, s, "x", func(tx *Tx) error { tx.Session.Phase = PhaseIdle; return nil })
	before := readRaw(t, filepath.Join(dir, "sessions/x.json"))
	got, err := s.MutateTx("x", func(tx *Tx) error {
		if err := tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 1}); err != nil {
			return err
		}
		return ErrNoChange
	})
	if err != nil || got == nil {
		t.Fatalf("MutateTx with ErrNoChange = %+v, %v", got, err)
	}
	if after := readRaw(t, filepath.Join(dir, "sessions/x.json")); !bytes.Equal(before, after) {
		t.Errorf("state rewritten:\n%s\n%s", before, after)
	}
	if exists(t, filepath.Join(dir, "sessions/x.turns.jsonl")) {
		t.Error("turn record written despite ErrNoChange")
	}
	// A fresh session and ErrNoChange: nothing at all is stored.
	if _, err := s.Mutate("fresh", func(*Session) error { return ErrNoChange }); err != nil {
		t.Fatal(err)
	}
	if exists(t, filepath.Join(dir, "sessions/fresh.json")) {
		t.Error("fresh session stored despite ErrNoChange")
	}
}

func TestCallbackErrorAborts(t *testing.T) {
	s, dir := newStore(t, Options{})
	mustMutate(t, s, "x", func(tx *Tx) error { tx.Session.Turns = 1; return nil })
	boom := errors.New("boom")
	_, err := s.MutateTx("x", func(tx *Tx) error {
		tx.Session.Turns = 99
		if err := tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 99}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("MutateTx = %v, want boom", err)
	}
	if got, _ := s.Load("x"); got.Turns != 1 {
		t.Errorf("aborted write stored: turns = %d", got.Turns)
	}
	if exists(t, filepath.Join(dir, "sessions/x.turns.jsonl")) {
		t.Error("aborted turn record written")
	}
	if _, err := s.Mutate("x", func(sess *Session) error { sess.ID = "y"; return nil }); err == nil {
		t.Error("changing the ID was accepted")
	}
	if _, err := s.MutateTx("x", func(tx *Tx) error { return tx.AppendTurn(TurnRecord{}) }); err == nil {
		t.Error("a turn record without kind was accepted")
	}
}

func TestUnknownFieldsSurvive(t *testing.T) {
	s, dir := newStore(t, Options{})
	path := filepath.Join(dir, "sessions/u.json")
	writeRaw(t, path, `{"version":1,"id":"u","agent":"codex","phase":"idle","turns":2,"future":{"nested":[1,2,{"x":null}]},"zz_top":"keep \u00e9","owner":{"os":"linux","pid":7,"start":9,"future_owner_field":true}}`)
	mustMutate(t, s, "u", func(tx *Tx) error { tx.Session.Turns++; return nil })
	var m map[string]json.RawMessage
	if err := json.Unmarshal(readRaw(t, path), &m); err != nil {
		t.Fatal(err)
	}
	if string(m["future"]) != `{"nested":[1,2,{"x":null}]}` || string(m["zz_top"]) != `"keep \u00e9"` || string(m["turns"]) != "3" || string(m["agent"]) != `"codex"` {
		t.Errorf("after rewrite: %s", readRaw(t, path))
	}
	// Case variants of known keys are the known field to encoding/json,
	// and must not be written back a second time.
	writeRaw(t, path, `{"version":1,"ID":"u","Phase":"idle"}`)
	mustMutate(t, s, "u", func(tx *Tx) error { tx.Session.Turns = 5; return nil })
	if raw := readRaw(t, path); bytes.Contains(raw, []byte(`"ID"`)) || bytes.Contains(raw, []byte(`"Phase"`)) {
		t.Errorf("case variant kept as unknown: %s", raw)
	}
}

func TestNewerVersionIsReadOnly(t *testing.T) {
	s, dir := newStore(t, Options{})
	path := filepath.Join(dir, "sessions/n.json")
	content := `{"version":2,"id":"n","phase":"idle","turns":4,"new_thing":[1]}`
	writeRaw(t, path, content)
	got, err := s.Load("n")
	if err != nil || got.Version != 2 || got.Turns != 4 {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	called := false
	_, err = s.Mutate("n", func(*Session) error { called = true; return nil })
	if !errors.Is(err, ErrNewerVersion) || !strings.Contains(err.Error(), "upgrade tether") {
		t.Fatalf("Mutate = %v, want ErrNewerVersion saying to upgrade", err)
	}
	if called {
		t.Error("callback ran on a newer session")
	}
	if string(readRaw(t, path)) != content {
		t.Error("newer session rewritten")
	}
	if l, _, err := s.List(); err != nil || len(l) != 1 {
		t.Errorf("List = %v, %v", l, err)
	}
}

func TestCorruptFilesQuarantined(t *testing.T) {
	s, dir := newStore(t, Options{})
	for _, id := range []string{"a", "b"} {
		mustMutate(t, s, id, func(tx *Tx) error { tx.Session.Phase = PhaseIdle; return nil })
	}
	writeRaw(t, filepath.Join(dir, "sessions/c.json"), `{"version":1,"id":"c",`)
	writeRaw(t, filepath.Join(dir, "sessions/d.json"), `{"version":1,"id":"someone-else"}`)
	writeRaw(t, filepath.Join(dir, "sessions/e.json"), `[]`)
	writeRaw(t, filepath.Join(dir, "sessions/bad id.json"), `{}`)
	start := time.Now()
	list, warns, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "a" || list[1].ID != "b" {
		t.Errorf("List = %v", list)
	}
	if len(warns) != 4 {
		t.Errorf("warnings = %+v, want 4", warns)
	}
	for _, id := range []string{"c", "d", "e", "bad id"} {
		if exists(t, filepath.Join(dir, "sessions", id+".json")) {
			t.Errorf("%s.json not moved", id)
		}
		matches, _ := filepath.Glob(filepath.Join(dir, "quarantine", "sessions-"+id+".json.*"))
		var data, reason []byte
		for _, m := range matches {
			if strings.HasSuffix(m, ".reason") {
				reason = readRaw(t, m)
			} else {
				data = readRaw(t, m)
			}
		}
		if data == nil || !bytes.Contains(reason, []byte("error: ")) || !bytes.Contains(reason, []byte("file: sessions/"+id+".json")) {
			t.Errorf("%s: quarantine holds %v (reason %q)", id, matches, reason)
		}
	}
	if _, again, err := s.List(); err != nil || len(again) != 0 {
		t.Errorf("second List warns again: %v, %v", again, err)
	}
	logged, err := s.Warnings(start.Add(-time.Second))
	if err != nil || len(logged) < 4 {
		t.Errorf("Warnings = %+v, %v", logged, err)
	}

	// Under the lock, Mutate quarantines a corrupt state and starts over.
	writeRaw(t, filepath.Join(dir, "sessions/f.json"), "\x00\x01garbage")
	mustMutate(t, s, "f", func(tx *Tx) error {
		if tx.Exists {
			t.Error("corrupt state presented as existing")
		}
		tx.Session.Phase = PhaseIdle
		return nil
	})
	if matches, _ := filepath.Glob(filepath.Join(dir, "quarantine", "sessions-f.json.*")); len(matches) != 2 {
		t.Errorf("quarantine for f: %v", matches)
	}
	// Load never moves anything: it reports the corruption.
	writeRaw(t, filepath.Join(dir, "sessions/g.json"), "nope")
	if _, err := s.Load("g"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Load of a corrupt file: %v", err)
	}
	if !exists(t, filepath.Join(dir, "sessions/g.json")) {
		t.Error("Load moved the corrupt file")
	}
}

// A quarantined state file takes its turn log with it, whoever finds it
// corrupt (List, or a Mutate under the lock): a session that comes back
// under the same ID starts with its own turns, not the old record's.
func TestQuarantineTakesTheTurnLog(t *testing.T) {
	for _, finder := range []string{"List", "Mutate"} {
		t.Run(finder, func(t *testing.T) {
			s, dir := newStore(t, Options{})
			for i := 1; i <= 3; i++ {
				mustMutate(t, s, "x", func(tx *Tx) error {
					tx.Session.Phase, tx.Session.Turns = PhaseActive, i
					return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: i, At: time.Now(), Prompt: "old"})
				})
			}
			writeRaw(t, filepath.Join(dir, "sessions/x.json"), `{"version":1,"id":"x",`)
			if finder == "List" {
				if _, warns, err := s.List(); err != nil || len(warns) != 1 {
					t.Fatalf("List: %v, %v", warns, err)
				}
			}
			sess := mustMutate(t, s, "x", func(tx *Tx) error {
				if tx.Exists || tx.Session.Turns != 0 {
					t.Errorf("the new record starts with %d turns (exists %v)", tx.Session.Turns, tx.Exists)
				}
				tx.Session.Phase, tx.Session.Turns = PhaseActive, 1
				return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 1, At: time.Now(), Prompt: "new"})
			})
			if recs, _, err := s.ReadTurns("x", 0); err != nil || len(recs) != 1 || recs[0].Prompt != "new" || sess.Turns != 1 {
				t.Errorf("turns of the new record: %+v (%d turns), %v", recs, sess.Turns, err)
			}
			logs, _ := filepath.Glob(filepath.Join(dir, "quarantine", "sessions-x.turns.jsonl.*"))
			var log, reason []byte
			for _, m := range logs {
				if strings.HasSuffix(m, ".reason") {
					reason = readRaw(t, m)
				} else {
					log = readRaw(t, m)
				}
			}
			if bytes.Count(log, []byte(`"prompt":"old"`)) != 3 || !bytes.Contains(reason, []byte("turn log of the quarantined state file")) {
				t.Errorf("quarantined log %q, reason %q", log, reason)
			}
		})
	}
}

func TestFinalizeAndRevive(t *testing.T) {
	s, dir := newStore(t, Options{})
	rec := func(kind string, n int) TurnRecord {
		return TurnRecord{T: kind, Turn: n, At: time.Date(2026, 1, 1, 0, 0, n, 0, time.UTC), Prompt: fmt.Sprintf("prompt %d", n)}
	}
	mustMutate(t, s, "s", func(tx *Tx) error {
		tx.Session.Phase = PhaseActive
		return tx.AppendTurn(rec(RecTurnStart, 1))
	})
	mustMutate(t, s, "s", func(tx *Tx) error {
		tx.Session.Phase = PhaseEnded
		tx.Session.EndReason = EndSessionEnd
		return tx.AppendTurn(rec(RecTurnEnd, 1))
	})
	for path, want := range map[string]bool{
		"sessions/s.json": false, "sessions/s.turns.jsonl": false,
		"ended/s.json": true, "ended/s.turns.jsonl": true,
	} {
		if exists(t, filepath.Join(dir, path)) != want {
			t.Errorf("after finalize: %s exists = %v", path, !want)
		}
	}
	live, _, _ := s.List()
	ended, _, _ := s.ListEnded()
	if len(live) != 0 || len(ended) != 1 || ended[0].Phase != PhaseEnded {
		t.Errorf("List = %v, ListEnded = %v", live, ended)
	}
	recs, next, err := s.ReadTurns("s", 0)
	if err != nil || len(recs) != 2 || recs[0] != rec(RecTurnStart, 1) || recs[1] != rec(RecTurnEnd, 1) {
		t.Fatalf("ReadTurns = %+v, %d, %v", recs, next, err)
	}
	mustMutate(t, s, "s", func(tx *Tx) error {
		if !tx.Exists || tx.Session.Phase != PhaseEnded {
			t.Errorf("revival tx sees %+v", tx.Session)
		}
		tx.Session.Phase = PhaseActive
		return tx.AppendTurn(rec(RecTurnStart, 2))
	})
	if !exists(t, filepath.Join(dir, "sessions/s.json")) || exists(t, filepath.Join(dir, "ended/s.json")) ||
		!exists(t, filepath.Join(dir, "sessions/s.turns.jsonl")) || exists(t, filepath.Join(dir, "ended/s.turns.jsonl")) {
		t.Error("revival did not move the session back to sessions/")
	}
	// Offsets survive the moves.
	recs, next2, err := s.ReadTurns("s", next)
	if err != nil || len(recs) != 1 || recs[0] != rec(RecTurnStart, 2) || next2 <= next {
		t.Fatalf("ReadTurns after revival = %+v, %d, %v", recs, next2, err)
	}
}

// TestCrashLeftovers builds, by hand, each state a crash can leave between
// the steps of a move, and checks that Load reads the truth and the next
// Mutate completes the move.
func TestCrashLeftovers(t *testing.T) {
	t1 := `"updated_at":"2026-01-01T00:00:01Z"`
	t2 := `"updated_at":"2026-01-01T00:00:02Z"`
	logLine := `{"t":"turn-start","turn":1,"at":"2026-01-01T00:00:00Z","transcript_size":0}` + "\n"
	// Each state was written after the log line it counts.
	counted := `"turn_log_size":` + strconv.Itoa(len(logLine)) + `,`
	cases := []struct {
		name  string
		files map[string]string
		phase Phase    // what Load must see
		home  string   // where everything must be after a Mutate
		recs  int      // turn records readable throughout
		quar  []string // files that must end up in quarantine
	}{
		{"finalize: ended state written, log not moved", map[string]string{
			"sessions/x.json":        `{"version":1,"id":"x",` + counted + `"phase":"idle",` + t1 + `}`,
			"sessions/x.turns.jsonl": logLine,
			"ended/x.json":           `{"version":1,"id":"x",` + counted + `"phase":"ended",` + t2 + `}`,
		}, PhaseEnded, "ended", 1, nil},
		{"finalize: log moved, live state not removed", map[string]string{
			"sessions/x.json":     `{"version":1,"id":"x",` + counted + `"phase":"idle",` + t1 + `}`,
			"ended/x.json":        `{"version":1,"id":"x",` + counted + `"phase":"ended",` + t2 + `}`,
			"ended/x.turns.jsonl": logLine,
		}, PhaseEnded, "ended", 1, nil},
		{"revival: live state written, log not moved", map[string]string{
			"ended/x.json":        `{"version":1,"id":"x",` + counted + `"phase":"ended",` + t1 + `}`,
			"ended/x.turns.jsonl": logLine,
			"sessions/x.json":     `{"version":1,"id":"x",` + counted + `"phase":"active",` + t2 + `}`,
		}, PhaseActive, "sessions", 1, nil},
		{"a log in both homes", map[string]string{
			"sessions/x.json":        `{"version":1,"id":"x",` + counted + `"phase":"idle",` + t1 + `}`,
			"sessions/x.turns.jsonl": logLine,
			"ended/x.turns.jsonl":    logLine + logLine,
		}, PhaseIdle, "sessions", 1, []string{"ended-x.turns.jsonl"}},
		{"first append landed, state did not", map[string]string{
			"sessions/x.turns.jsonl": logLine,
		}, PhaseNone, "sessions", 1, []string{"sessions-x.turns.jsonl"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, dir := newStore(t, Options{})
			for p, content := range c.files {
				writeRaw(t, filepath.Join(dir, p), content)
			}
			got, err := s.Load("x")
			switch {
			case c.phase == PhaseNone && !errors.Is(err, ErrNotFound):
				t.Fatalf("Load = %+v, %v; want ErrNotFound", got, err)
			case c.phase != PhaseNone && (err != nil || got.Phase != c.phase):
				t.Fatalf("Load = %+v, %v; want phase %s", got, err, c.phase)
			}
			if recs, _, err := s.ReadTurns("x", 0); err != nil || len(recs) < c.recs {
				t.Fatalf("ReadTurns before repair = %v, %v", recs, err)
			}
			mustMutate(t, s, "x", func(tx *Tx) error {
				if tx.Session.Phase != c.phase {
					t.Errorf("tx sees phase %q", tx.Session.Phase)
				}
				tx.Session.LastError = "touched"
				return tx.AppendTurn(TurnRecord{T: RecTurnEnd, Turn: 1})
			})
			other := map[string]string{"sessions": "ended", "ended": "sessions"}[c.home]
			for _, p := range []string{c.home + "/x.json", c.home + "/x.turns.jsonl"} {
				if !exists(t, filepath.Join(dir, p)) {
					t.Errorf("%s missing after repair", p)
				}
			}
			for _, p := range []string{other + "/x.json", other + "/x.turns.jsonl"} {
				if exists(t, filepath.Join(dir, p)) {
					t.Errorf("%s left after repair", p)
				}
			}
			want := c.recs + 1
			if c.phase == PhaseNone {
				// No state owned the log: it went to quarantine, and the
				// session started afresh.
				want = 1
			}
			recs, _, err := s.ReadTurns("x", 0)
			if err != nil || len(recs) != want || recs[len(recs)-1].T != RecTurnEnd {
				t.Errorf("ReadTurns after repair = %+v, %v", recs, err)
			}
			for _, q := range c.quar {
				if m, _ := filepath.Glob(filepath.Join(dir, "quarantine", q+".*")); len(m) != 2 {
					t.Errorf("quarantine for %s: %v", q, m)
				}
			}
		})
	}
}

func TestTurnLogTornTail(t *testing.T) {
	s, dir := newStore(t, Options{})
	logFile := filepath.Join(dir, "sessions/x.turns.jsonl")
	mustMutate(t, s, "x", func(tx *Tx) error {
		tx.Session.Phase = PhaseActive
		if err := tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 1}); err != nil {
			return err
		}
		return tx.AppendTurn(TurnRecord{T: RecTurnEnd, Turn: 1})
	})
	good := int64(len(readRaw(t, logFile)))
	f, err := os.OpenFile(logFile, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"t":"turn-start","tu`)
	f.Close()

	recs, next, err := s.ReadTurns("x", 0)
	if err != nil || len(recs) != 2 || next != good {
		t.Fatalf("ReadTurns over a torn tail = %+v, %d, %v; want 2 records up to %d", recs, next, err, good)
	}
	mustMutate(t, s, "x", func(tx *Tx) error { return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 2}) })
	recs, next, err = s.ReadTurns("x", next)
	if err != nil || len(recs) != 1 || recs[0].Turn != 2 {
		t.Fatalf("ReadTurns after the torn tail was cut = %+v, %v", recs, err)
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(readRaw(t, logFile), []byte("\n")), []byte("\n")) {
		if !json.Valid(line) {
			t.Errorf("line %d not JSON after the append: %q", i+1, line)
		}
	}
	// A complete line that is not a record is skipped and consumed.
	f, _ = os.OpenFile(logFile, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("garbage\n\n{}\n")
	f.Close()
	recs, end, err := s.ReadTurns("x", next)
	if err != nil || len(recs) != 0 || end != int64(len(readRaw(t, logFile))) {
		t.Errorf("ReadTurns over junk lines = %+v, %d, %v", recs, end, err)
	}
	if _, _, err := s.ReadTurns("x", end+1); err == nil {
		t.Error("offset beyond the end accepted")
	}
	if _, _, err := s.ReadTurns("x", -1); err == nil {
		t.Error("negative offset accepted")
	}
	if recs, n, err := s.ReadTurns("nolog", 0); err != nil || recs != nil || n != 0 {
		t.Errorf("ReadTurns without a log = %v, %d, %v", recs, n, err)
	}
}

func TestRemove(t *testing.T) {
	s, dir := newStore(t, Options{})
	mustMutate(t, s, "r", func(tx *Tx) error {
		tx.Session.Phase = PhaseActive
		return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 1})
	})
	if err := s.Remove("r"); err == nil || !strings.Contains(err.Error(), "not ended") {
		t.Fatalf("Remove of a live session = %v", err)
	}
	if !exists(t, filepath.Join(dir, "sessions/r.json")) {
		t.Fatal("Remove of a live session deleted it")
	}
	mustMutate(t, s, "r", func(tx *Tx) error { tx.Session.Phase = PhaseEnded; return nil })
	if err := s.Remove("r"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"ended/r.json", "ended/r.turns.jsonl", "locks/r.lock", "sessions/r.json"} {
		if exists(t, filepath.Join(dir, p)) {
			t.Errorf("%s left by Remove", p)
		}
	}
	if err := s.Remove("r"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Remove = %v", err)
	}
	// The lock file comes back when the ID is used again.
	mustMutate(t, s, "r", func(tx *Tx) error { tx.Session.Phase = PhaseIdle; return nil })
}

func TestConfinement(t *testing.T) {
	t.Run("invalid IDs", func(t *testing.T) {
		common := t.TempDir()
		s, err := Open(common, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, id := range []string{"../x", "../../etc/passwd", "/abs", "a\x00b", strings.Repeat("a", 129), ".", ".."} {
			ops := map[string]error{}
			_, ops["Load"] = s.Load(id)
			_, ops["Mutate"] = s.Mutate(id, func(*Session) error { return nil })
			_, _, ops["ReadTurns"] = s.ReadTurns(id, 0)
			ops["Remove"] = s.Remove(id)
			_, ops["Lock"] = s.Lock(id)
			for op, err := range ops {
				if !errors.Is(err, ErrInvalidID) {
					t.Errorf("%s(%q) = %v, want ErrInvalidID", op, id, err)
				}
			}
		}
		if entries, _ := os.ReadDir(common); len(entries) != 0 {
			t.Errorf("invalid IDs created %v", entries)
		}
	})
	// A directory of the store, or a file in it, that is a symlink leading
	// out: refused, and the outside is untouched.
	for _, link := range []string{"sessions", "ended", "locks", "sessions/y.json", "sessions/y.json.tmp", "sessions/y.turns.jsonl"} {
		t.Run("symlink "+link, func(t *testing.T) {
			s, dir := newStore(t, Options{})
			outside := t.TempDir()
			victim := filepath.Join(outside, "y.json")
			writeRaw(t, victim, "precious")
			for _, d := range []string{"sessions", "ended", "locks"} {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if strings.HasSuffix(link, ".turns.jsonl") {
				// A log with no state file is quarantined, link and all:
				// give it a state that owns it, so the write must go through it.
				mustMutate(t, s, "y", func(tx *Tx) error { tx.Session.Phase = PhaseIdle; return nil })
			}
			path := filepath.Join(dir, link)
			target := victim
			if !strings.Contains(link, "/") {
				target = outside
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			}
			rel, err := filepath.Rel(filepath.Dir(path), target)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(rel, path); err != nil {
				t.Fatal(err)
			}
			// A turn while live, then the end: every home, log and lock
			// gets used.
			_, err = s.MutateTx("y", func(tx *Tx) error {
				tx.Session.Phase = PhaseActive
				return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 1})
			})
			if err == nil {
				_, err = s.Mutate("y", func(sess *Session) error { sess.Phase = PhaseEnded; return nil })
			}
			if err == nil {
				t.Fatal("writing through a symlink leading out succeeded")
			}
			t.Logf("refused: %v", err)
			entries, _ := os.ReadDir(outside)
			if len(entries) != 1 || string(readRaw(t, victim)) != "precious" {
				t.Errorf("outside changed: %v, %q", entries, readRaw(t, victim))
			}
		})
	}
}

func TestLoggerAndWarnings(t *testing.T) {
	c := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	s, dir := newStore(t, Options{Now: c.now, LogMaxSize: 4096})
	log := s.Logger()
	log.Info("transition", LogKeySession, "a")
	log.Warn("lock timeout", LogKeySession, "a", LogKeyError, "held by pid 9")
	c.t = c.t.Add(time.Minute)
	log.Error("disk full", LogKeyError, "ENOSPC")
	ws, err := s.Warnings(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Warning{
		{Time: c.t.Add(-time.Minute), Msg: "lock timeout: held by pid 9", Session: "a"},
		{Time: c.t, Msg: "disk full: ENOSPC"},
	}
	if len(ws) != 2 || !ws[0].Time.Equal(want[0].Time) || ws[0].Msg != want[0].Msg || ws[0].Session != "a" ||
		!ws[1].Time.Equal(want[1].Time) || ws[1].Msg != want[1].Msg {
		t.Fatalf("Warnings = %+v, want %+v", ws, want)
	}
	if ws, _ := s.Warnings(c.t); len(ws) != 1 {
		t.Errorf("Warnings since the last one = %+v", ws)
	}
	// Past the size cap the log rotates; recent warnings stay visible
	// across the rotation.
	for i := range 100 {
		c.t = c.t.Add(time.Second)
		log.Warn(fmt.Sprintf("warning %d", i), LogKeySession, "b")
	}
	fi, err := os.Stat(filepath.Join(dir, "log/tether.log"))
	if err != nil || fi.Size() > 4096 || !exists(t, filepath.Join(dir, "log/tether.log.1")) {
		t.Fatalf("log not rotated: %v %v", fi, err)
	}
	ws, err = s.Warnings(c.t.Add(-10 * time.Second))
	if err != nil || len(ws) != 11 || ws[10].Msg != "warning 99" {
		t.Errorf("Warnings after rotation = %d, %v", len(ws), err)
	}

	// Dismissed warnings stay in the log but are reported no more; later
	// ones are.
	s.DismissWarnings()
	if ws, err := s.Warnings(time.Time{}); err != nil || len(ws) != 0 {
		t.Errorf("Warnings after DismissWarnings = %+v, %v", ws, err)
	}
	c.t = c.t.Add(time.Second)
	log.Warn("after", LogKeySession, "b")
	if ws, err := s.Warnings(time.Time{}); err != nil || len(ws) != 1 || ws[0].Msg != "after" {
		t.Errorf("Warnings after a new one = %+v, %v", ws, err)
	}
}

func TestLockNamesHolderAndDiesWithIt(t *testing.T) {
	common := t.TempDir()
	holder := child(t, "hold", common, "checkpoints")
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("holder said %q, %v", line, err)
	}
	s, err := Open(common, Options{LockWait: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Lock("checkpoints")
	if !errors.Is(err, ErrLockTimeout) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", holder.Process.Pid)) {
		t.Fatalf("Lock while held = %v; want a timeout naming pid %d", err, holder.Process.Pid)
	}
	// kill -9: the kernel drops the lock with the process.
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	holder.Wait()
	unlock, err := s.Lock("checkpoints")
	if err != nil {
		t.Fatalf("Lock after the holder died: %v", err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}

	// A session named like a store lock is not blocked by it: the store's
	// own locks live where no session ID can name a file.
	_, release := holdLock(t, "hold", common, "checkpoints")
	if _, err := s.Mutate("checkpoints", func(*Session) error { return nil }); err != nil {
		t.Errorf("Mutate of session \"checkpoints\" while the checkpoints lock is held = %v", err)
	}
	release.Close()

	// A session held elsewhere times out too.
	sessHolder, release := holdLock(t, "hold-session", common, "sess")
	if _, err := s.Mutate("sess", func(*Session) error { return nil }); !errors.Is(err, ErrLockTimeout) {
		t.Errorf("Mutate of a locked session = %v", err)
	}
	release.Close() // the holder unlocks and exits
	if err := sessHolder.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Mutate("sess", func(*Session) error { return nil }); err != nil {
		t.Errorf("Mutate after release = %v", err)
	}
}

// TestLockFileRemovedWhileWaited: Remove deletes a session's lock file
// while holding it. A process that was waiting on the old file must not
// think it holds the lock; it must end up holding the file now at the path.
func TestLockFileRemovedWhileWaited(t *testing.T) {
	s, dir := newStore(t, Options{LockWait: 10 * time.Second})
	root, err := s.openRoot(true)
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.acquire(root, sessionLockPath("r"), "r")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *heldLock)
	go func() {
		lk, err := s.acquire(root, sessionLockPath("r"), "r")
		if err != nil {
			t.Error(err)
		}
		got <- lk
	}()
	// Let the waiter open the old file and start polling it.
	time.Sleep(50 * time.Millisecond)
	first.remove()
	if err := first.release(); err != nil {
		t.Fatal(err)
	}
	second := <-got
	if second == nil {
		t.FailNow()
	}
	defer second.release()
	if same, err := stillAt(root, second.rel, second.f); err != nil || !same {
		t.Fatalf("the waiter holds a file no longer at %s (%v)", second.rel, err)
	}
	other, err := os.OpenFile(filepath.Join(dir, "locks", "r.lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if ok, err := tryLock(other); err != nil || ok {
		t.Fatalf("the lock at the path is free (ok=%v, %v) while the waiter thinks it holds it", ok, err)
	}
}

func TestAnyEnded(t *testing.T) {
	s, dir := newStore(t, Options{})
	check := func(want bool) {
		t.Helper()
		if got, err := s.AnyEnded(); err != nil || got != want {
			t.Errorf("AnyEnded = %v, %v; want %v", got, err, want)
		}
	}
	check(false) // no store yet
	mustMutate(t, s, "live", func(tx *Tx) error { tx.Session.Phase = PhaseIdle; return nil })
	check(false)
	if err := os.MkdirAll(filepath.Join(dir, "ended"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ended", "orphan.turns.jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	check(false) // a turn log is not a session
	mustMutate(t, s, "gone", func(tx *Tx) error { tx.Session.Phase = PhaseEnded; return nil })
	check(true)
}

// An agent may kill its hook as it exits (Claude Code does, after a model
// error: StopFailure, then SessionEnd). A hook killed once the turn-end
// record of the failed turn is appended, before the state file is
// rewritten, leaves the error all the same: the record carries it.
func TestTurnErrorSurvivesAHookKilledAfterItsRecord(t *testing.T) {
	s, dir := newStore(t, Options{})
	mustMutate(t, s, "x", func(tx *Tx) error {
		tx.Session.Phase, tx.Session.Turns = PhaseActive, 1
		return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 1, At: time.Now(), Prompt: "break"})
	})
	rec, err := encodeTurn(TurnRecord{T: RecTurnEnd, Turn: 1, At: time.Now(), Error: "API Error: 400"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "sessions", "x.turns.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(append(rec, '\n')); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, err := s.Load("x")
	if err != nil || got.Phase != PhaseIdle || got.LastError != "API Error: 400" {
		t.Fatalf("after the cut-short write: %+v, %v; want idle, with the turn's error", got, err)
	}
}

// A first write killed after its turn record was appended, before its state
// file existed, leaves a log no state owns: the next write starts the
// session afresh and keeps that log in quarantine rather than numbering
// turn 1 a second time after it.
func TestFirstWriteCutShortLeavesNoTwiceNumberedTurn(t *testing.T) {
	s, dir := newStore(t, Options{})
	writeRaw(t, filepath.Join(dir, "sessions/x.turns.jsonl"), `{"t":"turn-start","turn":1,"at":"2026-01-01T00:00:00Z","prompt":"cut"}`+"\n")
	sess := mustMutate(t, s, "x", func(tx *Tx) error {
		if tx.Exists || tx.Session.Turns != 0 {
			t.Errorf("the record starts with %d turns (exists %v)", tx.Session.Turns, tx.Exists)
		}
		tx.Session.Phase, tx.Session.Turns = PhaseActive, 1
		return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 1, At: time.Now(), Prompt: "new"})
	})
	if recs, _, err := s.ReadTurns("x", 0); err != nil || len(recs) != 1 || recs[0].Prompt != "new" || sess.Turns != 1 {
		t.Errorf("turns: %+v (%d turns), %v", recs, sess.Turns, err)
	}
	reasons, _ := filepath.Glob(filepath.Join(dir, "quarantine", "sessions-x.turns.jsonl.*.reason"))
	if len(reasons) != 1 || !bytes.Contains(readRaw(t, reasons[0]), []byte("first write was cut short")) {
		t.Errorf("quarantined: %v", reasons)
	}
}
