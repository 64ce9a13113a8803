package state

import (
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
