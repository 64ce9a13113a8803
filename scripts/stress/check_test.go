package main

import (
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/state"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func start(n, sec int, prompt string) state.TurnRecord {
	return state.TurnRecord{T: state.RecTurnStart, Turn: n, At: at(sec), Prompt: prompt}
}

func end(n, sec int) state.TurnRecord {
	return state.TurnRecord{T: state.RecTurnEnd, Turn: n, At: at(sec)}
}

// facts is a session whose log is the given records, 100 bytes each.
func facts(id string, condensed int64, cps []string, recs ...state.TurnRecord) *sessionFacts {
	size := int64(100 * len(recs))
	return &sessionFacts{id: id, phase: state.PhaseEnded, condensed: condensed, turnLogSize: size,
		checkpoints: cps, records: recs, complete: size, fileSize: size}
}

func shelf(id, session string, from, to int64, turns ...checkpoint.Turn) shelved {
	return shelved{dir: id[:2] + "/" + id[2:], cp: checkpoint.Checkpoint{
		ID: id, Session: session, TurnLog: checkpoint.LogRange{From: from, To: to}, Turns: turns,
	}}
}

func turn(n, sec int) checkpoint.Turn { return checkpoint.Turn{Turn: n, StartedAt: at(sec)} }

// failures lists the failures of every invariant and notice, prefixed
// with the check's name, for matching.
func failures(r *report) []string {
	var out []string
	for _, name := range invariantOrder {
		for _, f := range r.inv(name).failures {
			out = append(out, name+": "+f)
		}
	}
	for _, c := range r.notices {
		for _, f := range c.failures {
			out = append(out, "note "+c.name+": "+f)
		}
	}
	return out
}

// expect checks that each wanted fragment is in some failure and that
// there are exactly as many failures as fragments.
func expect(t *testing.T, r *report, want ...string) {
	t.Helper()
	got := failures(r)
	for _, w := range want {
		found := false
		for _, g := range got {
			if strings.Contains(g, w) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no failure contains %q; got:\n%s", w, strings.Join(got, "\n"))
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d failures, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}

func TestCheckCondensing(t *testing.T) {
	running := turn(2, 20)
	running.Running = true
	cont := checkpoint.Turn{Turn: 2, Continued: true}
	tests := []struct {
		name     string
		sessions []*sessionFacts
		cps      []shelved
		want     []string
	}{{
		name: "each turn once; a running turn continued later",
		sessions: []*sessionFacts{facts("s1", 400, []string{"aa11", "bb22"},
			start(1, 10, "p1"), end(1, 11), start(2, 20, "p2"), end(2, 21))},
		cps: []shelved{
			shelf("aa11", "s1", 0, 300, turn(1, 10), running),
			shelf("bb22", "s1", 300, 400, cont),
		},
	}, {
		name:     "a turn on no checkpoint, offset behind the log",
		sessions: []*sessionFacts{facts("s1", 200, []string{"aa11"}, start(1, 10, "p1"), end(1, 11), start(2, 20, "p2"))},
		cps:      []shelved{shelf("aa11", "s1", 0, 200, turn(1, 10))},
		want: []string{
			invCondensedOnce + ": session s1 (ended ): turn 2 started",
			invOffsets + ": session s1 (ended ): condensed offset 200, but its turn log ends at 300",
		},
	}, {
		name:     "a turn on two checkpoints, which overlap",
		sessions: []*sessionFacts{facts("s1", 200, nil, start(1, 10, "p1"), end(1, 11))},
		cps: []shelved{
			shelf("aa11", "s1", 0, 200, turn(1, 10)),
			shelf("bb22", "s1", 0, 200, turn(1, 10)),
		},
		want: []string{
			invCondensedOnce + ": session s1: turn 1 started 2026-05-01T12:00:10Z is on 2 checkpoints: aa11, bb22",
			invRanges + ": session s1: log bytes [0,200) are on two checkpoints",
		},
	}, {
		name: "a reused turn number is a different turn",
		sessions: []*sessionFacts{facts("s1", 300, []string{"aa11"},
			start(1, 10, "lost"), start(1, 12, "p1"), end(1, 13))},
		cps: []shelved{shelf("aa11", "s1", 0, 300, turn(1, 10), turn(1, 12))},
	}, {
		name:     "a checkpoint turn the log lacks, a continuation of nothing",
		sessions: []*sessionFacts{facts("s1", 100, []string{"aa11"}, start(1, 10, "p1"))},
		cps:      []shelved{shelf("aa11", "s1", 0, 100, turn(1, 10), turn(3, 30), checkpoint.Turn{Turn: 4, Continued: true})},
		want: []string{
			"checkpoint aa11 holds turn 3 started 2026-05-01T12:00:30Z, which its turn log does not",
			"checkpoint aa11 continues turn 4, which never started in its log",
		},
	}, {
		name:     "ID against path, duplicate ID, unknown session, missing listed checkpoint",
		sessions: []*sessionFacts{facts("s1", 100, []string{"aa11", "cc33"}, start(1, 10, "p1"))},
		cps: []shelved{
			shelf("aa11", "s1", 0, 100, turn(1, 10)),
			{dir: "bb/22", cp: checkpoint.Checkpoint{ID: "aa11", Session: "s1"}},
			shelf("dd44", "nobody", 0, 100),
		},
		want: []string{
			invCheckpointIDs + `: checkpoint at bb/22/ says its id is "aa11"`,
			invCheckpointIDs + ": checkpoint ID aa11 appears twice: aa/11/ and bb/22/",
			invCondensedOnce + `: checkpoint dd44 belongs to session "nobody"`,
			invRefs + ": session s1 lists checkpoint cc33, which is not on the checkpoints ref",
		},
	}, {
		name:     "a gap between checkpoints",
		sessions: []*sessionFacts{facts("s1", 300, nil, start(1, 10, "p1"), end(1, 11), start(2, 20, "p2"))},
		cps: []shelved{
			shelf("aa11", "s1", 0, 100, turn(1, 10)),
			shelf("bb22", "s1", 200, 300, turn(2, 20)),
		},
		want: []string{invRanges + ": session s1: log bytes [100,200) are on no checkpoint; checkpoints: aa11 [0,100), bb22 [200,300)"},
	}, {
		name: "a live session of unknown liveness: its ended turn waits, an earlier one is on its checkpoint",
		sessions: []*sessionFacts{func() *sessionFacts {
			f := facts("s1", 200, []string{"aa11"}, start(1, 10, "p1"), end(1, 11), start(2, 20, "p2"), end(2, 21))
			f.phase, f.condensedTurns, f.waiting = state.PhaseIdle, 1, true
			return f
		}()},
		cps: []shelved{shelf("aa11", "s1", 0, 200, turn(1, 10))},
	}, {
		name: "the same session: a condensed turn on no checkpoint",
		sessions: []*sessionFacts{func() *sessionFacts {
			f := facts("s1", 200, nil, start(1, 10, "p1"), end(1, 11), start(2, 20, "p2"), end(2, 21))
			f.phase, f.condensedTurns, f.waiting = state.PhaseIdle, 1, true
			return f
		}()},
		want: []string{
			invCondensedOnce + ": session s1 (idle ): turn 1 started",
			invRanges + ": session s1: checkpoints cover the log up to 0, the condensed offset is 200",
		},
	}, {
		name:     "a checkpoint on the branch beyond the condensed offset",
		sessions: []*sessionFacts{facts("s1", 0, nil, start(1, 10, "p1"))},
		cps:      []shelved{shelf("aa11", "s1", 0, 100, turn(1, 10))},
		want: []string{
			invOffsets + ": session s1 (ended ): condensed offset 0, but its turn log ends at 100",
			invRanges + ": session s1: checkpoints cover the log up to 100, the condensed offset is 0",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReport()
			sessions := map[string]*sessionFacts{}
			for _, s := range tt.sessions {
				sessions[s.id] = s
			}
			checkCondensing(r, sessions, tt.cps)
			expect(t, r, tt.want...)
			if r.inv(invCondensedOnce).checked == 0 {
				t.Error("no turn was checked")
			}
		})
	}
}

func TestTiling(t *testing.T) {
	lr := func(from, to int64) checkpoint.LogRange { return checkpoint.LogRange{From: from, To: to} }
	tests := []struct {
		rs   []checkpoint.LogRange
		end  int64
		want string
	}{
		{nil, 0, ""},
		{[]checkpoint.LogRange{lr(100, 250), lr(0, 100)}, 250, ""},
		{nil, 10, "checkpoints cover the log up to 0, the condensed offset is 10"},
		{[]checkpoint.LogRange{lr(0, 100), lr(50, 150)}, 150, "log bytes [50,100) are on two checkpoints"},
		{[]checkpoint.LogRange{lr(10, 100)}, 100, "log bytes [0,10) are on no checkpoint"},
		{[]checkpoint.LogRange{lr(0, 0)}, 0, "empty or reversed range [0,0)"},
	}
	for _, tt := range tests {
		if got := tiling(tt.rs, tt.end); got != tt.want {
			t.Errorf("tiling(%v, %d) = %q, want %q", tt.rs, tt.end, got, tt.want)
		}
	}
}

func TestCheckNotes(t *testing.T) {
	r := newReport()
	checkNotes(r, map[string][]string{"c1": {"aa11", "bb22"}}, map[string]bool{"aa11": true})
	expect(t, r, "the note on commit c1 names checkpoint bb22, which is not on the checkpoints ref")
	if got := r.inv(invRefs).checked; got != 2 {
		t.Errorf("checked %d, want 2", got)
	}
}

func TestCheckLedger(t *testing.T) {
	sessions := map[string]*sessionFacts{
		"s1": facts("s1", 0, nil, start(1, 10, "p1"), start(2, 20, "ghost")),
		"s2": facts("s2", 0, nil),
	}
	runs := []incarnation{
		{seq: 1, session: "s1", pid: 11, outcome: outKilled, fates: []promptFate{
			{prompt: "p1", submitted: true, hookOK: true, done: true},
			{prompt: "p3", submitted: true, hookOK: true},
			{prompt: "p4", submitted: true}, // its hook was killed: may or may not be recorded
		}},
		{seq: 2, session: "s2", pid: 12, outcome: outHookFailed, event: "Stop", stderr: "standin: turn=x: hook Stop: exit status 2\n",
			fates: []promptFate{{prompt: "q1", submitted: true, hookOK: true}}},
	}
	r := newReport()
	checkLedger(r, runs, sessions, map[string][]string{"s2": {"record turn-start for session s2: lock timeout"}})
	expect(t, r,
		invNoLostPrompts+`: agent 1 (pid 11, session s1): prompt "p3" returned from its hook but is not in the turn log`,
		invNoPhantomTurns+`: session s1: turn 2 (prompt "ghost") was never submitted`,
		invHookExit+": agent 2 (pid 12, session s2): its Stop hook exited non-zero",
		`note prompts missing from the log after a hook failure the hook itself reported: agent 2 (pid 12, session s2): prompt "q1"`,
	)
	if got := r.inv(invNoLostPrompts).checked; got != 3 {
		t.Errorf("checked %d prompts, want 3", got)
	}
}

func TestCheckLive(t *testing.T) {
	agents := []liveAgent{
		{seq: 1, pid: 11, session: "ok", showedLife: true},
		{seq: 2, pid: 12, session: "finalized", showedLife: true},
		{seq: 3, pid: 13, session: "fresh"},
		{seq: 4, pid: 14, session: "ending", showedLife: true, ending: true},
		{seq: 5, pid: 15, session: "excused", showedLife: true},
		{seq: 6, pid: 16, session: "status failed", showedLife: true},
	}
	phases := map[string]string{"ok": "active", "finalized": "ended", "fresh": "ended", "ending": "ended", "excused": "ended", "status failed": "idle"}
	liveness := map[string]string{"ok": "alive", "finalized": "dead", "fresh": "dead", "ending": "dead", "excused": "alive"}
	r := newReport()
	checkLive(r, agents, []string{"finalized"}, phases, liveness, map[string][]string{"excused": {"lock timeout"}})
	expect(t, r,
		invLiveNotEnded+`: agent 2 (pid 12) is alive, but for session finalized the sweep finalized it, its phase is "ended", status says its owner is "dead"`,
		"note live agents left out of the live check (no hook returned yet, or ending): agent 3 (pid 13, session fresh): no hook had returned yet",
		"agent 4 (pid 14, session ending): it had finished its last turn before its session end",
		"note live sessions ended after a hook failure the hook itself reported: agent 5 (pid 15) is alive",
	)
	if got := r.inv(invLiveNotEnded).checked; got != 4 {
		t.Errorf("checked %d, want 4", got)
	}
}

func TestCheckLeftovers(t *testing.T) {
	orphaned := facts("s1", 300, nil, start(1, 10, "lost"), start(1, 12, "p1"), end(1, 13))
	orphaned.turnLogSize, orphaned.turns, orphaned.condensedTurns = 200, 1, 2
	running := turn(1, 10)
	running.Running = true
	settled := turn(2, 20)
	settledRunning := turn(2, 20)
	settledRunning.Running = true
	r := newReport()
	checkLeftovers(r, map[string]*sessionFacts{"s1": orphaned}, []shelved{
		shelf("aa11", "s1", 0, 100, running),
		shelf("bb22", "s1", 100, 200, settledRunning),
		shelf("cc33", "s1", 200, 300, settled),
	})
	expect(t, r,
		"session s1: turn log 300 bytes, state turn_log_size 200",
		"session s1: turn 1 started 2 times",
		"session s1 (): turns 1, condensed_turns 2",
		"session s1: turn 1 on checkpoint aa11",
	)
}

func TestReport(t *testing.T) {
	r := newReport()
	if r.failed() {
		t.Fatal("a new report has failed")
	}
	r.notice("odd").failf("just so")
	if r.failed() {
		t.Fatal("a notice failed the report")
	}
	for i := range maxShown + 2 {
		r.inv(invFsck).failf("line %d", i)
	}
	if !r.failed() {
		t.Fatal("a failed invariant did not fail the report")
	}
	var b strings.Builder
	r.print(&b)
	out := b.String()
	for _, want := range []string{
		"PASS  " + invStateLoads + " (0 checked, 0 failed)",
		"FAIL  " + invFsck + " (0 checked, 27 failed)",
		"... and 2 more",
		"NOTE  odd (1)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}
