package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	alive := proclive.Verdict{Liveness: proclive.Alive}
	dead := proclive.Verdict{Liveness: proclive.Dead}
	unknown := proclive.Verdict{Liveness: proclive.Unknown}
	for _, tc := range []struct {
		name      string
		phase     state.Phase
		v         proclive.Verdict
		cancelled bool
		stale     time.Duration
		want      decision
	}{
		{"running turn, owner alive", state.PhaseActive, alive, false, 0, decision{from: state.PhaseActive, ev: ""}},
		{"cancelled turn, owner alive: idle, not ended", state.PhaseActive, alive, true, 0,
			decision{endTurn: true, from: state.PhaseIdle}},
		{"cancelled turn, owner gone: ended from idle", state.PhaseActive, dead, true, 0,
			decision{endTurn: true, end: true, ev: state.EventOwnerExited, from: state.PhaseIdle}},
		{"running turn, owner gone: ended mid-turn", state.PhaseActive, dead, false, 0,
			decision{end: true, ev: state.EventOwnerExited, from: state.PhaseActive}},
		{"cancelled turn, owner unknown: idle, not ended", state.PhaseActive, unknown, true, 0,
			decision{endTurn: true, from: state.PhaseIdle}},
		{"cancelled turn, owner unknown past stale-after", state.PhaseActive, unknown, true, time.Hour,
			decision{endTurn: true, end: true, ev: state.EventStale, from: state.PhaseIdle}},
		{"idle, owner gone", state.PhaseIdle, dead, false, 0,
			decision{end: true, ev: state.EventOwnerExited, from: state.PhaseIdle}},
		{"a cancel is only a running turn's", state.PhaseIdle, alive, true, 0, decision{from: state.PhaseIdle}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &state.Session{Phase: tc.phase, LastHookAt: now.Add(-2 * time.Hour)}
			if got := decide(s, tc.v, tc.cancelled, now, tc.stale); got != tc.want {
				t.Errorf("decide = %+v, want %+v", got, tc.want)
			}
			if s.Phase != tc.phase {
				t.Errorf("decide changed the session's phase to %s", s.Phase)
			}
			if tc.want.end {
				if _, act := state.Transition(tc.want.from, tc.want.ev); act.Interrupted != (tc.want.from == state.PhaseActive) {
					t.Errorf("ending from %s by %s: interrupted %v", tc.want.from, tc.want.ev, act.Interrupted)
				}
			}
		})
	}
}

// recordedCancel is a Claude Code 2.1.328 transcript recorded from its
// TUI (see ../agent/testdata/recorded/README.md): a prompt, the start of
// a reply, the entry Claude Code writes when Esc cancels the turn (no hook
// fires then), and what it wrote until /exit. It returns the transcript,
// the offset where the cancel entry starts and the one where it ends.
func recordedCancel(t *testing.T) (data string, cancelAt, afterCancel int64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "agent", "testdata", "recorded", "claude-code", "transcript_tui_esc_cancel_then_exit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	data = string(b)
	at := strings.Index(data, `"text":"[Request interrupted by user]"`)
	if at < 0 {
		t.Fatal("the recording has no cancel entry")
	}
	start := strings.LastIndexByte(data[:at], '\n') + 1
	end := at + strings.IndexByte(data[at:], '\n') + 1
	return data, int64(start), int64(end)
}

// transcriptTurn records a Claude Code session whose transcript is data
// and whose running turn started at byte from of it, as the hook does.
func transcriptTurn(t *testing.T, st *state.Store, repo gitdir.Repo, id string, owner *proclive.Identity, data string, from int64) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "projects")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, id+".jsonl")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := st.MutateTx(id, func(tx *state.Tx) error {
		s := tx.Session
		now := time.Now().UTC()
		s.StartedAt, s.LastHookAt = now, now
		s.Agent, s.Worktree, s.Owner = "claude-code", repo.WorkTree, owner
		s.TranscriptRoot, s.TranscriptPath = root, path
		to, _ := state.Transition(s.Phase, state.EventTurnStart)
		s.Phase = to
		return tx.AppendTurn(state.TurnRecord{T: state.RecTurnStart, Turn: 1, At: now, Prompt: "think hard",
			TranscriptSize: from, Owner: owner})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A turn the user cancelled in Claude Code's TUI fires no hook: the sweep
// learns it from the transcript. With its agent alive the session is idle;
// with its agent gone it ended after its turn, not in the middle of one.
func TestSweepEndsTurnsCancelledInTheTranscript(t *testing.T) {
	repo, st := newRepo(t)
	data, cancelAt, afterCancel := recordedCancel(t)
	running := data[:cancelAt] // the same turn before Esc
	transcriptTurn(t, st, repo, "cancelled-alive", aliveOwner(t), data, 0)
	transcriptTurn(t, st, repo, "cancelled-dead", deadOwner(t), data, 0)
	transcriptTurn(t, st, repo, "running-alive", aliveOwner(t), running, 0)
	transcriptTurn(t, st, repo, "running-dead", deadOwner(t), running, 0)
	// A cancel of an earlier turn, before this one started, is not this
	// turn's.
	transcriptTurn(t, st, repo, "old-cancel", aliveOwner(t), data, afterCancel)

	rep, err := Run(repo, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id          string
		phase       state.Phase
		reason      string
		interrupted bool
	}{
		{"cancelled-alive", state.PhaseIdle, "", false},
		{"cancelled-dead", state.PhaseEnded, state.EndOwnerExited, false},
		{"running-alive", state.PhaseActive, "", false},
		{"running-dead", state.PhaseEnded, state.EndInterrupted, true},
		{"old-cancel", state.PhaseActive, "", false},
	} {
		s, err := st.Load(tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if s.Phase != tc.phase || s.EndReason != tc.reason || s.Interrupted != tc.interrupted {
			t.Errorf("%s: phase %s, end reason %q, interrupted %v; want %s, %q, %v",
				tc.id, s.Phase, s.EndReason, s.Interrupted, tc.phase, tc.reason, tc.interrupted)
		}
		if tc.id == "cancelled-alive" {
			recs, _, err := st.ReadTurns(tc.id, 0)
			if err != nil {
				t.Fatal(err)
			}
			last := recs[len(recs)-1]
			if len(recs) != 2 || last.T != state.RecTurnEnd || last.Turn != 1 || last.TranscriptSize != int64(len(data)) || last.Head == "" {
				t.Errorf("turn log %+v, want the turn's end at transcript size %d with HEAD", recs, len(data))
			}
		}
	}
	shown := map[string]state.Phase{}
	for _, c := range rep.Sessions {
		shown[c.Session.ID] = c.Session.Phase
	}
	if shown["cancelled-alive"] != state.PhaseIdle || len(shown) != 3 {
		t.Errorf("the report shows %v, want cancelled-alive idle among 3 live sessions", shown)
	}

	// A second sweep has nothing left to do.
	rep, err = Run(repo, st, Options{})
	if err != nil || len(rep.Finalized) != 0 {
		t.Fatalf("second sweep: %+v, %v", rep, err)
	}
	if recs, _, _ := st.ReadTurns("cancelled-alive", 0); len(recs) != 2 {
		t.Errorf("a second sweep appended again: %+v", recs)
	}
}

// A dry run says the session would end after its cancelled turn, and
// writes nothing.
func TestDryRunSeesCancelledTurn(t *testing.T) {
	repo, st := newRepo(t)
	data, _, _ := recordedCancel(t)
	transcriptTurn(t, st, repo, "cancelled-dead", deadOwner(t), data, 0)
	rep, err := Run(repo, st, Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Finalized) != 1 || rep.Finalized[0].From != state.PhaseIdle || rep.Finalized[0].Reason != state.EndOwnerExited {
		t.Errorf("dry run finalized %+v, want cancelled-dead from idle, owner-exited", rep.Finalized)
	}
	if s, _ := st.Load("cancelled-dead"); s.Phase != state.PhaseActive {
		t.Errorf("dry run changed the phase to %s", s.Phase)
	}
}

// A session its agent ended mid-turn waits, unsettled and not condensed,
// while its agent may still write how the turn ended: alive, and ended
// moments ago.
func TestAgentWriting(t *testing.T) {
	for _, tc := range []struct {
		v        proclive.Liveness
		sinceEnd time.Duration
		want     bool
	}{
		{proclive.Alive, 0, true},
		{proclive.Alive, settleGrace - time.Millisecond, true},
		{proclive.Alive, settleGrace, false}, // a TUI lives on: it wrote long ago
		{proclive.Dead, 0, false},            // gone: what it wrote is all it will
		{proclive.Unknown, 0, false},
	} {
		if got := agentWriting(tc.v, tc.sinceEnd); got != tc.want {
			t.Errorf("agentWriting(%v, %v) = %v, want %v", tc.v, tc.sinceEnd, got, tc.want)
		}
	}
}
