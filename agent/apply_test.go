package agent

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// TestSameTurn: a turn start whose key is the last turn's is that turn
// again while the session goes on, and evidence of life once it ended.
func TestSameTurn(t *testing.T) {
	for _, tc := range []struct {
		name         string
		from         state.Phase
		lastKey, key string
		want         bool
	}{
		{"delivered twice while running", state.PhaseActive, "t-1", "t-1", true},
		{"delivered twice, the turn ended", state.PhaseIdle, "t-1", "t-1", true},
		{"a new turn", state.PhaseActive, "t-1", "t-2", false},
		{"no key", state.PhaseActive, "", "", false},
		{"first turn", state.PhaseNone, "", "t-1", false},
		{"ended, the turn outlived its owner", state.PhaseEnded, "t-1", "t-1", false},
	} {
		if got := sameTurn(tc.from, tc.lastKey, tc.key); got != tc.want {
			t.Errorf("%s: sameTurn(%q, %q, %q) = %v, want %v", tc.name, tc.from, tc.lastKey, tc.key, got, tc.want)
		}
	}
}

// fixed answers Apply as a hook would, from set values.
type fixed struct {
	root, guess string
	size        int64
	owner       proclive.Identity
	ownerErr    error
}

func (f *fixed) TranscriptRoot(string) string        { return f.root }
func (f *fixed) GuessTranscript() (string, string)   { return f.guess, f.root }
func (f *fixed) TranscriptSize(string, string) int64 { return f.size }
func (f *fixed) OwnerPID() int                       { return 42 }
func (f *fixed) Owner() (proclive.Identity, error)   { return f.owner, f.ownerErr }

// A call spooled and applied later changes the session exactly as it
// would have, applied when its hook ran: Spool asks the hook's
// surroundings everything applying it may ask.
func TestSpooledAppliesAsLive(t *testing.T) {
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	owner := proclive.Identity{OS: "linux", PID: 42, Start: 7, Host: "h", Name: "claude"}
	calls := []Call{
		{Event: Event{Kind: state.EventSessionStart, Agent: "claude-code", SessionID: "s", TranscriptPath: "/t/s.jsonl", Source: "startup"}, At: at, Head: "h1", Branch: "main", Worktree: "/w"},
		{Event: Event{Kind: state.EventTurnStart, Agent: "claude-code", SessionID: "s", TranscriptPath: "/t/s.jsonl", Prompt: "one", Key: "k1"}, At: at.Add(time.Second), Head: "h1", Worktree: "/w"},
		{Event: Event{Kind: state.EventTurnStart, Agent: "claude-code", SessionID: "s", TranscriptPath: "/t/s.jsonl", Prompt: "one", Key: "k1"}, At: at.Add(2 * time.Second), Head: "h1", Worktree: "/w"},
		{Event: Event{Kind: state.EventError, Agent: "claude-code", SessionID: "s", Reason: "API Error: 500"}, At: at.Add(3 * time.Second), Head: "h2", Worktree: "/w"},
		{Event: Event{Kind: state.EventTurnStart, Agent: "copilot", SessionID: "s", Prompt: "two"}, At: at.Add(4 * time.Second), Head: "h2", Worktree: "/w"},
		{Event: Event{Kind: state.EventSessionEnd, Agent: "claude-code", SessionID: "s", Reason: "other"}, At: at.Add(5 * time.Second), Head: "h2", Worktree: "/w"},
		{Event: Event{Kind: state.EventTurnStart, Agent: "claude-code", SessionID: "s", TranscriptPath: "/t/s.jsonl", Prompt: "again"}, At: at.Add(6 * time.Second), Head: "h3", Worktree: "/w"},
	}
	for _, ownerErr := range []error{nil, errors.New("no owner process")} {
		live, spool := openStore(t), openStore(t)
		for i, c := range calls {
			env := &fixed{root: "/t", guess: "/t/guess.jsonl", size: int64(100 * i), owner: owner, ownerErr: ownerErr}
			if _, err := live.MutateTx("s", func(tx *state.Tx) error {
				_, err := Apply(tx, c, env)
				return err
			}); err != nil {
				t.Fatalf("call %d: Apply: %v", i, err)
			}
			cur, err := spool.Load("s")
			if err != nil && !errors.Is(err, state.ErrNotFound) {
				t.Fatal(err)
			}
			data, err := json.Marshal(Spool(c, env, cur))
			if err != nil {
				t.Fatal(err)
			}
			if err := spool.Spool("s", data); err != nil {
				t.Fatal(err)
			}
			// Every few calls a writer applies what waits; a reader sees it.
			if i%3 == 2 {
				if _, err := spool.MutateTx("s", func(*state.Tx) error { return state.ErrNoChange }); err != nil {
					t.Fatal(err)
				}
			}
			a, b := sessionOf(t, live), sessionOf(t, spool)
			if a != b {
				t.Fatalf("call %d (%s, owner error %v): applied live\n%s\nspooled\n%s", i, c.Event.Kind, ownerErr, a, b)
			}
		}
		if _, err := spool.MutateTx("s", func(*state.Tx) error { return state.ErrNoChange }); err != nil {
			t.Fatal(err)
		}
		if a, b := recordsOf(t, live), recordsOf(t, spool); a != b {
			t.Fatalf("turn log applied live\n%s\nspooled\n%s", a, b)
		}
	}
}

func openStore(t *testing.T) *state.Store {
	t.Helper()
	st, err := state.Open(t.TempDir(), state.Options{Apply: ApplySpooled})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// sessionOf is the session as a reader sees it, without what differs
// between two stores by design (its random incarnation, the times of the
// writes, which spooled events were applied).
func sessionOf(t *testing.T, st *state.Store) string {
	t.Helper()
	s, err := st.Load("s")
	if err != nil {
		t.Fatal(err)
	}
	s.Incarnation, s.UpdatedAt, s.SpoolApplied, s.TurnLogSize = "", time.Time{}, nil, 0
	b, _ := json.Marshal(s)
	return string(b)
}

func recordsOf(t *testing.T, st *state.Store) string {
	t.Helper()
	recs, _, err := st.ReadTurns("s", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		recs[i].Spool = ""
	}
	b, _ := json.Marshal(recs)
	return string(b)
}
