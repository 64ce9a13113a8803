package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBeginWait covers how wait signals add up: a repeated signal keeps the
// first one's time and fills in what it lacked, another request is a new
// wait, and a signal older than the running turn changes nothing.
func TestBeginWait(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	perm := Wait{Since: at(1), Kind: WaitPermission, Detail: "Bash `npm test`", Key: "Bash"}
	cases := []struct {
		name    string
		old     *Wait
		signal  Wait
		changed bool
		want    *Wait
	}{
		{"first signal", nil, perm, true, &perm},
		{"the reminder of the same dialog", &perm, Wait{Since: at(7), Kind: WaitPermission}, false, &perm},
		{"the same request again", &perm, Wait{Since: at(9), Kind: WaitPermission, Detail: perm.Detail, Key: "Bash"}, false, &perm},
		{"the reminder first, the dialog's detail after",
			&Wait{Since: at(1), Kind: WaitPermission}, Wait{Since: at(2), Kind: WaitPermission, Detail: "Write `a.txt`", Key: "Write"}, true,
			&Wait{Since: at(1), Kind: WaitPermission, Detail: "Write `a.txt`", Key: "Write"}},
		{"another tool's dialog", &perm, Wait{Since: at(20), Kind: WaitPermission, Detail: "Write `b`", Key: "Write"}, true,
			&Wait{Since: at(20), Kind: WaitPermission, Detail: "Write `b`", Key: "Write"}},
		{"a question after a permission", &perm, Wait{Since: at(30), Kind: WaitQuestion, Detail: "which?"}, true,
			&Wait{Since: at(30), Kind: WaitQuestion, Detail: "which?"}},
		{"a reminder of a question's dialog", &Wait{Since: at(1), Kind: WaitQuestion, Detail: "which?", Key: "AskUserQuestion"},
			Wait{Since: at(7), Kind: WaitPermission}, false, &Wait{Since: at(1), Kind: WaitQuestion, Detail: "which?", Key: "AskUserQuestion"}},
		{"a signal from before the turn started", nil, Wait{Since: at(-5), Kind: WaitPermission}, false, nil},
	}
	for _, c := range cases {
		s := &Session{Phase: PhaseWaiting, Waiting: c.old, LastTurnStartedAt: t0}
		if c.old != nil {
			old := *c.old
			s.Waiting = &old
		}
		changed := s.BeginWait(c.signal)
		if changed != c.changed || (s.Waiting == nil) != (c.want == nil) || s.Waiting != nil && *s.Waiting != *c.want {
			t.Errorf("%s: BeginWait = %v, waiting %+v; want %v, %+v", c.name, changed, s.Waiting, c.changed, c.want)
		}
	}
}

// TestEndWait: a signal about the request waited on, or one that names
// none, ends the wait; one about another request does not.
func TestEndWait(t *testing.T) {
	for _, c := range []struct {
		key, signal string
		ends        bool
	}{
		{"Bash", "Bash", true},
		{"Bash", "", true},
		{"", "Read", true},
		{"Bash", "Read", false},
		{"per_1", "per_2", false},
	} {
		s := &Session{Phase: PhaseWaiting, Waiting: &Wait{Kind: WaitPermission, Key: c.key}}
		if got := s.EndWait(c.signal); got != c.ends || (s.Waiting == nil) != c.ends {
			t.Errorf("waiting on %q, over for %q: EndWait = %v, waiting %+v", c.key, c.signal, got, s.Waiting)
		}
	}
	if (&Session{Phase: PhaseActive}).EndWait("") {
		t.Error("EndWait ended a wait nobody waited")
	}
}

// TestTablePhase: a wait at the prompt reads as its own row; every other
// session reads as its phase.
func TestTablePhase(t *testing.T) {
	for _, c := range []struct {
		s       Session
		want    Phase
		running bool
	}{
		{Session{Phase: PhaseWaiting, Waiting: &Wait{Kind: WaitInput}}, PhaseAtPrompt, false},
		{Session{Phase: PhaseWaiting, Waiting: &Wait{Kind: WaitPermission}}, PhaseWaiting, true},
		{Session{Phase: PhaseWaiting}, PhaseWaiting, true},
		{Session{Phase: PhaseActive}, PhaseActive, true},
		{Session{Phase: PhaseIdle}, PhaseIdle, false},
		{Session{Phase: PhaseEnded, Waiting: &Wait{Kind: WaitInput}}, PhaseEnded, false},
	} {
		if got := TablePhase(&c.s); got != c.want || c.s.TurnRunning() != c.running {
			t.Errorf("%+v: TablePhase %q, TurnRunning %v; want %q, %v", c.s, got, c.s.TurnRunning(), c.want, c.running)
		}
	}
}

// TestTurnRecordsEndAWait: a turn's start or end moves a waiting session
// out of its wait, through the record alone, as a reader replays it.
func TestTurnRecordsEndAWait(t *testing.T) {
	st, _ := newStore(t, Options{})
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	if _, err := st.MutateTx("s1", func(tx *Tx) error {
		if err := tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 1, At: t0}); err != nil {
			return err
		}
		tx.Session.SetPhase(PhaseWaiting)
		tx.Session.BeginWait(Wait{Since: t0.Add(time.Second), Kind: WaitPermission, Detail: "Bash `ls`"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if s, err := st.Load("s1"); err != nil || s.Phase != PhaseWaiting || s.Waiting == nil || s.Waiting.Detail != "Bash `ls`" {
		t.Fatalf("after the wait: %+v, %v", s, err)
	}
	if _, err := st.MutateTx("s1", func(tx *Tx) error {
		return tx.AppendTurn(TurnRecord{T: RecTurnEnd, Turn: 1, At: t0.Add(time.Minute)})
	}); err != nil {
		t.Fatal(err)
	}
	s, err := st.Load("s1")
	if err != nil || s.Phase != PhaseIdle || s.Waiting != nil {
		t.Fatalf("after the turn's end: %+v, %v", s, err)
	}
}

// TestWaitFile: a wait is written beside the state, never into it, and
// read back by every reader; it applies only to its turn and phase; one
// that does not read, or no longer applies, is ignored and goes at the
// next write; the turn's end and the session's end take it away.
func TestWaitFile(t *testing.T) {
	st, dir := newStore(t, Options{})
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	statePath := filepath.Join(dir, "sessions", "w1.json")
	waitFile := filepath.Join(dir, "sessions", "w1.wait")
	mustMutate(t, st, "w1", func(tx *Tx) error {
		tx.Session.Phase = PhaseIdle
		return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 1, At: t0})
	})
	before, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	wait := Wait{Since: t0.Add(time.Second), Kind: WaitPermission, Detail: "Bash `ls`", Key: "Bash"}
	got := mustMutate(t, st, "w1", func(tx *Tx) error {
		tx.Session.SetPhase(PhaseWaiting)
		tx.Session.BeginWait(wait)
		return nil
	})
	if got.Phase != PhaseWaiting || got.Waiting == nil || *got.Waiting != wait {
		t.Fatalf("MutateTx returned %+v", got)
	}
	if after, _ := os.ReadFile(statePath); string(after) != string(before) {
		t.Errorf("the wait rewrote the state file:\n%s\n%s", before, after)
	}
	check := func(what string, phase Phase, want *Wait) {
		t.Helper()
		s, err := st.Load("w1")
		if err != nil || s.Phase != phase || (s.Waiting == nil) != (want == nil) || want != nil && *s.Waiting != *want {
			t.Fatalf("%s: Load = %+v, %v; want %s, %+v", what, s, err, phase, want)
		}
		live, _, err := st.List()
		if err != nil || len(live) != 1 || live[0].Phase != phase {
			t.Fatalf("%s: List = %+v, %v", what, live, err)
		}
	}
	check("waiting", PhaseWaiting, &wait)

	// An unreadable wait file (a crash before its data reached the disk)
	// reads as no wait; the next write empties it.
	if err := os.WriteFile(waitFile, []byte{0, 0, 0}, 0o600); err != nil {
		t.Fatal(err)
	}
	check("a torn wait file", PhaseActive, nil)
	mustMutate(t, st, "w1", func(tx *Tx) error { tx.Session.LastPrompt = "p"; return nil })
	if data, err := os.ReadFile(waitFile); err != nil || len(data) != 0 {
		t.Errorf("the torn wait file holds %q (%v), want it emptied", data, err)
	}

	// A wait of another turn does not apply.
	mustMutate(t, st, "w1", func(tx *Tx) error {
		tx.Session.SetPhase(PhaseWaiting)
		tx.Session.BeginWait(wait)
		return nil
	})
	mustMutate(t, st, "w1", func(tx *Tx) error {
		return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 2, At: t0.Add(time.Minute)})
	})
	check("the next turn", PhaseActive, nil)

	// The turn's end ends a wait; so does the session's end.
	mustMutate(t, st, "w1", func(tx *Tx) error {
		tx.Session.SetPhase(PhaseWaiting)
		tx.Session.BeginWait(Wait{Since: t0.Add(2 * time.Minute), Kind: WaitQuestion})
		return nil
	})
	mustMutate(t, st, "w1", func(tx *Tx) error {
		return tx.AppendTurn(TurnRecord{T: RecTurnEnd, Turn: 2, At: t0.Add(3 * time.Minute)})
	})
	check("the turn's end", PhaseIdle, nil)
	input := Wait{Since: t0.Add(4 * time.Minute), Kind: WaitInput}
	mustMutate(t, st, "w1", func(tx *Tx) error {
		tx.Session.SetPhase(PhaseWaiting)
		tx.Session.BeginWait(input)
		return nil
	})
	check("at the prompt", PhaseWaiting, &input)
	mustMutate(t, st, "w1", func(tx *Tx) error { tx.Session.SetPhase(PhaseEnded); return nil })
	if s, err := st.Load("w1"); err != nil || s.Phase != PhaseEnded || s.Waiting != nil {
		t.Fatalf("ended: %+v, %v", s, err)
	}
	if _, err := os.Stat(waitFile); !os.IsNotExist(err) {
		t.Errorf("the ended session's wait file is still there (%v)", err)
	}
}

// TestWaitInStateFile: a state file with its wait in it (as this build's
// first version wrote it) reads as waiting; its next write moves the wait
// out.
func TestWaitInStateFile(t *testing.T) {
	st, dir := newStore(t, Options{})
	at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC).Format(time.RFC3339Nano)
	old := `{"version":1,"id":"w2","agent":"claude-code","phase":"waiting","waiting":{"since":"` + at + `","kind":"permission","detail":"Bash ` + "`ls`" + `"},` +
		`"started_at":"` + at + `","updated_at":"` + at + `","turns":1,"resumable":false,"turn_log_size":0,"condensed":0,"condensed_turns":0}`
	if err := os.MkdirAll(filepath.Join(dir, "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sessions", "w2.json"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := st.Load("w2"); err != nil || s.Phase != PhaseWaiting || s.Waiting == nil || s.Waiting.Detail != "Bash `ls`" {
		t.Fatalf("Load = %+v, %v", s, err)
	}
	mustMutate(t, st, "w2", func(tx *Tx) error { tx.Session.LastPrompt = "p"; return nil })
	data, err := os.ReadFile(filepath.Join(dir, "sessions", "w2.json"))
	if err != nil || strings.Contains(string(data), "waiting") {
		t.Fatalf("the state file still holds the wait: %s (%v)", data, err)
	}
	if s, err := st.Load("w2"); err != nil || s.Phase != PhaseWaiting || s.Waiting == nil {
		t.Fatalf("after the write, Load = %+v, %v", s, err)
	}
}

// FuzzWaitRecord: a wait file's reader never panics on any bytes, and
// what it reads writes back as it reads.
func FuzzWaitRecord(f *testing.F) {
	at := time.Date(2026, 11, 1, 10, 0, 0, 5, time.UTC)
	good, err := encodeWaitRecord(waitRecord{Turn: 3, Phase: PhaseActive, Wait: Wait{Since: at, Kind: WaitPermission, Detail: "Bash `a\"b`", Key: "Bash"}})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][]byte{good, []byte(`{}`), []byte(`{"kind":"input","turn":-1}`), []byte("\x00\x00"), []byte(`{"since":1}`), []byte(`[]`)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeWaitRecord(data)
		if err != nil {
			return
		}
		out, err := encodeWaitRecord(r)
		if err != nil {
			return // a time outside RFC 3339's years
		}
		again, err := decodeWaitRecord(out)
		if err != nil || again != r {
			t.Fatalf("%q read as %+v, written %q, read back %+v, %v", data, r, out, again, err)
		}
	})
}
