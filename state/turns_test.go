package state

import (
	"bytes"
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

// A turn's state write skips the directory fsync, so a crash may lose its
// rename and bring back the previous state file. Its records are durable:
// the next transaction replays them, and the session reads as if the
// rename had been kept.
func TestLostRenameIsReplayed(t *testing.T) {
	st, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	turnStart := func(at time.Time, prompt string) {
		t.Helper()
		if _, err := st.MutateTx("r", func(tx *Tx) error {
			tx.Session.TranscriptPath = "/t.jsonl"
			return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: tx.Session.Turns + 1, At: at, Prompt: prompt})
		}); err != nil {
			t.Fatal(err)
		}
	}
	turnEnd := func(at time.Time) {
		t.Helper()
		if _, err := st.MutateTx("r", func(tx *Tx) error {
			return tx.AppendTurn(TurnRecord{T: RecTurnEnd, Turn: tx.Session.Turns, At: at})
		}); err != nil {
			t.Fatal(err)
		}
	}
	turnStart(t0, "one")
	turnEnd(t0.Add(time.Second))
	path := filepath.Join(st.Dir(), "sessions", "r.json")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	turnStart(t0.Add(2*time.Second), "two")
	want, err := st.Load("r")
	if err != nil {
		t.Fatal(err)
	}
	// The crash: the last rename never reached the disk.
	if err := os.WriteFile(path, before, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := st.Mutate("r", func(*Session) error { return ErrNoChange })
	if err != nil {
		t.Fatal(err)
	}
	if got.Phase != PhaseActive || got.Turns != 2 || got.LastPrompt != "two" ||
		!got.LastTurnStartedAt.Equal(want.LastTurnStartedAt) || got.TurnLogSize != want.TurnLogSize || !got.Resumable {
		t.Fatalf("after replay: %+v\nwant the state of the lost write: %+v", got, want)
	}
	// The next turn continues the numbering, and nothing is doubled.
	turnEnd(t0.Add(3 * time.Second))
	turnStart(t0.Add(4*time.Second), "three")
	recs, _, err := st.ReadTurns("r", 0)
	if err != nil || len(recs) != 5 {
		t.Fatalf("records %+v, %v", recs, err)
	}
	for i, want := range []int{1, 1, 2, 2, 3} {
		if recs[i].Turn != want {
			t.Fatalf("record %d is turn %d, want %d", i, recs[i].Turn, want)
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
