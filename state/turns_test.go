package state

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/proclive"
)

func TestApplyTurn(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	for _, tc := range []struct {
		name string
		in   Session
		rec  TurnRecord
		want Session
	}{
		{
			name: "turn start from idle",
			in:   Session{Phase: PhaseIdle, Turns: 2, TranscriptPath: "/t", Resumable: false, ResumableReason: "gone", LastHookAt: t0},
			rec:  TurnRecord{T: RecTurnStart, Turn: 3, At: t1, Prompt: "fix it\nplease"},
			want: Session{Phase: PhaseActive, Turns: 3, TranscriptPath: "/t", Resumable: true, LastTurnStartedAt: t1, LastPrompt: "fix it …", LastHookAt: t1},
		},
		{
			name: "turn start without a transcript is not resumable",
			in:   Session{Phase: PhaseIdle},
			rec:  TurnRecord{T: RecTurnStart, Turn: 1, At: t1},
			want: Session{Phase: PhaseActive, Turns: 1, LastTurnStartedAt: t1, LastHookAt: t1},
		},
		{
			name: "an older record never lowers the count",
			in:   Session{Phase: PhaseActive, Turns: 5},
			rec:  TurnRecord{T: RecTurnStart, Turn: 4, At: t1},
			want: Session{Phase: PhaseActive, Turns: 5, LastTurnStartedAt: t1, LastHookAt: t1},
		},
		{
			name: "turn start names its owner",
			in:   Session{Phase: PhaseIdle, Owner: &proclive.Identity{PID: 1}},
			rec:  TurnRecord{T: RecTurnStart, Turn: 1, At: t1, Owner: &proclive.Identity{PID: 2}},
			want: Session{Phase: PhaseActive, Turns: 1, LastTurnStartedAt: t1, LastHookAt: t1, Owner: &proclive.Identity{PID: 2}},
		},
		{
			name: "a record without an owner keeps the session's",
			in:   Session{Phase: PhaseIdle, Owner: &proclive.Identity{PID: 1}},
			rec:  TurnRecord{T: RecTurnStart, Turn: 1, At: t1},
			want: Session{Phase: PhaseActive, Turns: 1, LastTurnStartedAt: t1, LastHookAt: t1, Owner: &proclive.Identity{PID: 1}},
		},
		{
			name: "turn end",
			in:   Session{Phase: PhaseActive, Turns: 3, LastHookAt: t0},
			rec:  TurnRecord{T: RecTurnEnd, Turn: 3, At: t1},
			want: Session{Phase: PhaseIdle, Turns: 3, LastTurnEndedAt: t1, LastHookAt: t1},
		},
		{
			name: "ended keeps its phase",
			in:   Session{Phase: PhaseEnded, Turns: 3},
			rec:  TurnRecord{T: RecTurnStart, Turn: 4, At: t1},
			want: Session{Phase: PhaseEnded, Turns: 4, LastTurnStartedAt: t1, LastHookAt: t1},
		},
		{
			name: "a later hook time stays",
			in:   Session{Phase: PhaseActive, LastHookAt: t1},
			rec:  TurnRecord{T: RecTurnEnd, At: t0},
			want: Session{Phase: PhaseIdle, LastTurnEndedAt: t0, LastHookAt: t1},
		},
		{
			name: "unknown kinds change nothing",
			in:   Session{Phase: PhaseActive, Turns: 1},
			rec:  TurnRecord{T: "note", Turn: 9, At: t1},
			want: Session{Phase: PhaseActive, Turns: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in
			applyTurn(&got, tc.rec)
			if !sessionsEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func sessionsEqual(a, b Session) bool {
	ja, err1 := encodeSession(&a)
	jb, err2 := encodeSession(&b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

func TestTrimPrompt(t *testing.T) {
	long := strings.Repeat("a", maxPromptInState+50)
	// A multi-byte rune straddling the cut must not be split.
	straddle := strings.Repeat("a", maxPromptInState-1) + "é" + "tail"
	for _, tc := range []struct{ in, want string }{
		{"fix the bug", "fix the bug"},
		{"  padded \n", "padded"},
		{"first line\nsecond line", "first line …"},
		{long, long[:maxPromptInState] + "…"},
		{straddle, strings.Repeat("a", maxPromptInState-1) + "…"},
		{"", ""},
	} {
		if got := trimPrompt(tc.in); got != tc.want {
			t.Errorf("trimPrompt(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A turn event that changes nothing but its record is one append: the
// state file stays as it was, and Load, List and Mutate all replay the
// record. Anything else in the same transaction, or a log running
// maxTurnTail past the state file, rewrites the state.
func TestTurnEventIsOneAppend(t *testing.T) {
	st, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	statePath := filepath.Join(st.Dir(), "sessions", "r.json")
	logPath := filepath.Join(st.Dir(), "sessions", "r.turns.jsonl")
	onDisk := func() (raw []byte, sess Session) {
		t.Helper()
		raw, err := os.ReadFile(statePath)
		if err == nil {
			err = sess.UnmarshalJSON(raw)
		}
		if err != nil {
			t.Fatal(err)
		}
		return raw, sess
	}
	logSize := func() int64 {
		t.Helper()
		fi, err := os.Stat(logPath)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	turn := func(i int, also func(*Session)) {
		t.Helper()
		if _, err := st.MutateTx("r", func(tx *Tx) error {
			tx.Session.TranscriptPath = "/t.jsonl"
			if also != nil {
				also(tx.Session)
			}
			if tx.Session.Phase == PhaseActive {
				return tx.AppendTurn(TurnRecord{T: RecTurnEnd, Turn: tx.Session.Turns, At: t0.Add(time.Duration(i) * time.Second)})
			}
			return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: tx.Session.Turns + 1, At: t0.Add(time.Duration(i) * time.Second),
				Prompt: fmt.Sprintf("prompt %d", i), Owner: &proclive.Identity{PID: 1000 + i}})
		}); err != nil {
			t.Fatal(err)
		}
	}
	// Every reader sees the same session: the state file plus its log.
	agree := func(want func(Session) string) Session {
		t.Helper()
		loaded, err := st.Load("r")
		if err != nil {
			t.Fatal(err)
		}
		listed, _, err := st.List()
		if err != nil || len(listed) != 1 {
			t.Fatalf("List = %v, %v", listed, err)
		}
		mutated, err := st.Mutate("r", func(*Session) error { return ErrNoChange })
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []*Session{loaded, listed[0], mutated} {
			if !sessionsEqual(*s, *loaded) {
				t.Fatalf("readers disagree:\n%+v\n%+v", *s, *loaded)
			}
			if msg := want(*s); msg != "" {
				t.Fatal(msg)
			}
			if s.TurnLogSize != logSize() {
				t.Fatalf("turn_log_size %d, log %d bytes", s.TurnLogSize, logSize())
			}
		}
		return *loaded
	}

	turn(0, nil) // the first write of a session is the state file
	first, _ := onDisk()
	turn(1, nil)
	turn(2, nil)
	if raw, _ := onDisk(); !bytes.Equal(raw, first) {
		t.Fatalf("a turn rewrote the state file:\n%s\n%s", first, raw)
	}
	agree(func(s Session) string {
		if s.Phase != PhaseActive || s.Turns != 2 || s.LastPrompt != "prompt 2" || s.Owner == nil || s.Owner.PID != 1002 ||
			!s.LastTurnEndedAt.Equal(t0.Add(time.Second)) || !s.Resumable {
			return fmt.Sprintf("after two appends: %+v", s)
		}
		return ""
	})

	// A change beside the turn is written with it.
	turn(3, func(s *Session) { s.Branch = "feat" })
	if _, disk := onDisk(); disk.Branch != "feat" || disk.TurnLogSize != logSize() || disk.Phase != PhaseIdle {
		t.Fatalf("state file after a turn that also moved the branch: %+v", disk)
	}

	// The log never runs more than maxTurnTail past the state file, and
	// turn numbers run on without repeats.
	rewrites := 0
	for i := 4; i < 80; i++ {
		before, _ := onDisk()
		turn(i, nil)
		after, disk := onDisk()
		if !bytes.Equal(before, after) {
			rewrites++
		}
		if lag := logSize() - disk.TurnLogSize; lag > maxTurnTail {
			t.Fatalf("turn %d: the log runs %d bytes past the state file", i, lag)
		}
	}
	if rewrites == 0 || rewrites > 10 {
		t.Errorf("%d state rewrites over 76 turn events", rewrites)
	}
	agree(func(s Session) string {
		if s.Turns != 40 || s.Phase != PhaseIdle {
			return fmt.Sprintf("after 80 events: %+v", s)
		}
		return ""
	})
	recs, _, err := st.ReadTurns("r", 0)
	if err != nil || len(recs) != 80 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	for i, r := range recs {
		if r.Turn != i/2+1 {
			t.Fatalf("record %d is turn %d", i, r.Turn)
		}
	}
}

func TestHolderLine(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "x.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A longer line left by an older tether is overwritten in place.
	if _, err := f.WriteString("1 2026-01-01T00:00:00Z " + strings.Repeat("x", 200) + "\n"); err != nil {
		t.Fatal(err)
	}
	writeHolder(f)
	got := readHolder(f)
	want := " (held by pid " + strconv.Itoa(os.Getpid()) + " " + filepath.Base(os.Args[0]) + " since "
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "Z)") {
		t.Fatalf("readHolder = %q, want %q…", got, want)
	}
}
