package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/state"
)

// sessionFacts is one session as the store left it after the last sweep.
type sessionFacts struct {
	id             string
	phase          state.Phase
	endReason      string
	condensed      int64 // state: turn-log offset condensed
	turnLogSize    int64 // state: log size after the hook's last append
	turns          int
	condensedTurns int
	checkpoints    []string           // state: checkpoint IDs
	records        []state.TurnRecord // the whole turn log
	complete       int64              // end of the log's last complete line
	fileSize       int64              // size of the turn-log file (0: none)
	// waiting: live with no owner ever captured (unknown liveness), left
	// to stale-after: its turns past the condensed ones wait for a commit
	// in its worktree or its end, as a live session's do.
	waiting bool
}

// shelved is a checkpoint found on the checkpoints ref, at dir "xx/yyyy...".
type shelved struct {
	dir string
	cp  checkpoint.Checkpoint
}

// turnKey names one turn-start record: a killed hook can leave a record
// the state never counted, so the next start reuses its number, but never
// its time.
func turnKey(turn int, at time.Time) string {
	return fmt.Sprintf("turn %d started %s", turn, at.UTC().Format(time.RFC3339Nano))
}

// checkCondensing checks the checkpoints against the turn logs: each turn-start
// is on exactly one checkpoint (counting a turn condensed while running
// where it started, not where it continued), no checkpoint holds a turn the
// log lacks, IDs are unique and match their paths, each session's
// checkpoints tile its log from 0 to the condensed offset, and that offset
// is the end of the log.
func checkCondensing(r *report, sessions map[string]*sessionFacts, cps []shelved) {
	once, ids, offsets, ranges, refs := r.inv(invCondensedOnce), r.inv(invCheckpointIDs), r.inv(invOffsets), r.inv(invRanges), r.inv(invRefs)

	where := map[string]string{}                    // checkpoint ID -> dir
	holders := map[string]map[string][]string{}     // session -> turn key -> checkpoint IDs
	continued := map[string]map[int][]string{}      // session -> turn number -> checkpoint IDs
	logRanges := map[string][]checkpoint.LogRange{} // session -> ranges
	rangeOwner := map[string]map[checkpoint.LogRange]string{}
	for _, c := range cps {
		ids.checked++
		id := c.cp.ID
		if want := strings.ReplaceAll(c.dir, "/", ""); id != want {
			ids.failf("checkpoint at %s/ says its id is %q", c.dir, id)
		}
		if prev, dup := where[id]; dup {
			ids.failf("checkpoint ID %s appears twice: %s/ and %s/", id, prev, c.dir)
			continue
		}
		where[id] = c.dir
		sid := c.cp.Session
		if sessions[sid] == nil {
			once.failf("checkpoint %s belongs to session %q, which the store does not know", id, sid)
			continue
		}
		if holders[sid] == nil {
			holders[sid], continued[sid], rangeOwner[sid] = map[string][]string{}, map[int][]string{}, map[checkpoint.LogRange]string{}
		}
		for _, t := range c.cp.Turns {
			if t.Continued {
				continued[sid][t.Turn] = append(continued[sid][t.Turn], id)
				continue
			}
			k := turnKey(t.Turn, t.StartedAt)
			holders[sid][k] = append(holders[sid][k], id)
		}
		logRanges[sid] = append(logRanges[sid], c.cp.TurnLog)
		rangeOwner[sid][c.cp.TurnLog] = id
	}

	for _, sid := range slices.Sorted(maps.Keys(sessions)) {
		s := sessions[sid]
		started := map[int]bool{}
		seen := map[string]bool{}
		for _, rec := range s.records {
			if rec.T != state.RecTurnStart {
				continue
			}
			once.checked++
			started[rec.Turn] = true
			k := turnKey(rec.Turn, rec.At)
			if seen[k] {
				once.failf("session %s: its turn log holds %s twice", sid, k)
				continue
			}
			seen[k] = true
			switch on := holders[sid][k]; {
			case len(on) == 1:
			case len(on) == 0 && s.waiting && rec.Turn > s.condensedTurns:
			case len(on) == 0:
				once.failf("session %s (%s %s): %s (prompt %q) is on no checkpoint; condensed %d of %d log bytes, checkpoints in state %v",
					sid, s.phase, s.endReason, k, rec.Prompt, s.condensed, s.complete, s.checkpoints)
			default:
				once.failf("session %s: %s is on %d checkpoints: %s", sid, k, len(on), strings.Join(on, ", "))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(holders[sid])) {
			if !seen[k] {
				once.failf("session %s: checkpoint %s holds %s, which its turn log does not", sid, strings.Join(holders[sid][k], ", "), k)
			}
		}
		for _, n := range slices.Sorted(maps.Keys(continued[sid])) {
			if !started[n] {
				once.failf("session %s: checkpoint %s continues turn %d, which never started in its log", sid, strings.Join(continued[sid][n], ", "), n)
			}
		}

		offsets.checked++
		if s.condensed != s.complete && !(s.waiting && s.condensed < s.complete) {
			offsets.failf("session %s (%s %s): condensed offset %d, but its turn log ends at %d (file %d bytes, state turn_log_size %d)",
				sid, s.phase, s.endReason, s.condensed, s.complete, s.fileSize, s.turnLogSize)
		}
		ranges.checked++
		if msg := tiling(logRanges[sid], s.condensed); msg != "" {
			var desc []string
			rs := logRanges[sid]
			slices.SortFunc(rs, func(a, b checkpoint.LogRange) int { return cmp.Compare(a.From, b.From) })
			for _, lr := range rs {
				desc = append(desc, fmt.Sprintf("%s [%d,%d)", rangeOwner[sid][lr], lr.From, lr.To))
			}
			ranges.failf("session %s: %s; checkpoints: %s", sid, msg, strings.Join(desc, ", "))
		}
		for _, id := range s.checkpoints {
			refs.checked++
			if _, ok := where[id]; !ok {
				refs.failf("session %s lists checkpoint %s, which is not on the checkpoints ref", sid, id)
			}
		}
	}
}

// tiling says what is wrong with a session's checkpoint ranges, or "":
// sorted, they must run from 0 to end without gap or overlap.
func tiling(rs []checkpoint.LogRange, end int64) string {
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, func(a, b checkpoint.LogRange) int { return cmp.Compare(a.From, b.From) })
	at := int64(0)
	for _, lr := range sorted {
		switch {
		case lr.To <= lr.From:
			return fmt.Sprintf("empty or reversed range [%d,%d)", lr.From, lr.To)
		case lr.From > at:
			return fmt.Sprintf("log bytes [%d,%d) are on no checkpoint", at, lr.From)
		case lr.From < at:
			return fmt.Sprintf("log bytes [%d,%d) are on two checkpoints", lr.From, min(at, lr.To))
		}
		at = lr.To
	}
	if at != end {
		return fmt.Sprintf("checkpoints cover the log up to %d, the condensed offset is %d", at, end)
	}
	return ""
}

// checkNotes checks that every checkpoint a note names is stored.
func checkNotes(r *report, notes map[string][]string, onBranch map[string]bool) {
	refs := r.inv(invRefs)
	for _, commit := range slices.Sorted(maps.Keys(notes)) {
		for _, id := range notes[commit] {
			refs.checked++
			if !onBranch[id] {
				refs.failf("the note on commit %s names checkpoint %s, which is not on the checkpoints ref", commit, id)
			}
		}
	}
}

// incarnation is one agent process of a session, as the ledger has it.
type incarnation struct {
	seq     int
	session string
	pid     int
	outcome string
	event   string // the hook event that failed, for outHookKilled/outHookFailed
	stderr  string
	fates   []promptFate
}

// checkLedger compares what the agents did with what the store recorded:
// each prompt whose hook returned 0 has a turn-start (unless the hook
// logged a failure of its own, which principle 4 allows and the notices
// show), each turn-start was submitted by some agent process of its
// session, and no hook exited non-zero without being killed.
func checkLedger(r *report, runs []incarnation, sessions map[string]*sessionFacts, hookFailures map[string][]string) {
	lost, phantom, exits := r.inv(invNoLostPrompts), r.inv(invNoPhantomTurns), r.inv(invHookExit)
	excused := r.notice("prompts missing from the log after a hook failure the hook itself reported")
	submitted := map[string]map[string]bool{} // session -> prompts submitted
	for _, run := range runs {
		exits.checked++
		if run.outcome == outHookFailed {
			exits.failf("agent %d (pid %d, session %s): its %s hook exited non-zero: %s", run.seq, run.pid, run.session, run.event, strings.TrimSpace(run.stderr))
		}
		if submitted[run.session] == nil {
			submitted[run.session] = map[string]bool{}
		}
		var recorded map[string]bool
		if s := sessions[run.session]; s != nil {
			recorded = map[string]bool{}
			for _, rec := range s.records {
				if rec.T == state.RecTurnStart {
					recorded[rec.Prompt] = true
				}
			}
		}
		for _, f := range run.fates {
			if f.submitted {
				submitted[run.session][f.prompt] = true
			}
			if !f.hookOK {
				continue
			}
			lost.checked++
			if recorded[f.prompt] {
				continue
			}
			msg := fmt.Sprintf("agent %d (pid %d, session %s): prompt %q returned from its hook but is not in the turn log", run.seq, run.pid, run.session, f.prompt)
			if fails := hookFailures[run.session]; len(fails) > 0 {
				excused.failf("%s; the hook logged: %s", msg, fails[len(fails)-1])
				continue
			}
			lost.failf("%s", msg)
		}
	}
	for _, sid := range slices.Sorted(maps.Keys(sessions)) {
		for _, rec := range sessions[sid].records {
			if rec.T != state.RecTurnStart {
				continue
			}
			phantom.checked++
			if !submitted[sid][rec.Prompt] {
				phantom.failf("session %s: turn %d (prompt %q) was never submitted by an agent process of the session", sid, rec.Turn, rec.Prompt)
			}
		}
	}
}

// liveAgent is an agent process alive (frozen) at the live check.
type liveAgent struct {
	seq     int
	pid     int
	session string
	// showedLife: its transcript grew since it started, so its session
	// start hook returned 0 (the stand-in writes nothing before that).
	showedLife bool
	// ending: it had finished its last turn before a SessionEnd, so its
	// session may rightly have ended already.
	ending bool
}

// checkLive checks that the sweep run while the survivors were frozen
// finalized none of their sessions, that each is still live in the store,
// and that status saw its owner alive (liveness lacks the sessions status
// could not be asked about).
func checkLive(r *report, agents []liveAgent, finalized []string, phases, liveness map[string]string, hookFailures map[string][]string) {
	live := r.inv(invLiveNotEnded)
	skipped := r.notice("live agents left out of the live check (no hook returned yet, or ending)")
	excused := r.notice("live sessions ended after a hook failure the hook itself reported")
	for _, a := range agents {
		if !a.showedLife || a.ending {
			why := "no hook had returned yet"
			if a.ending {
				why = "it had finished its last turn before its session end"
			}
			skipped.failf("agent %d (pid %d, session %s): %s", a.seq, a.pid, a.session, why)
			continue
		}
		live.checked++
		var problems []string
		if slices.Contains(finalized, a.session) {
			problems = append(problems, "the sweep finalized it")
		}
		if p := phases[a.session]; p != string(state.PhaseIdle) && p != string(state.PhaseActive) {
			problems = append(problems, fmt.Sprintf("its phase is %q", p))
		}
		if l, ok := liveness[a.session]; ok && l != "alive" {
			problems = append(problems, fmt.Sprintf("status says its owner is %q", l))
		}
		if len(problems) == 0 {
			continue
		}
		msg := fmt.Sprintf("agent %d (pid %d) is alive, but for session %s %s", a.seq, a.pid, a.session, strings.Join(problems, ", "))
		if fails := hookFailures[a.session]; len(fails) > 0 {
			excused.failf("%s; the hook logged: %s", msg, fails[len(fails)-1])
			continue
		}
		live.failf("%s", msg)
	}
}

// checkLeftovers notes what is odd without breaking an invariant.
func checkLeftovers(r *report, sessions map[string]*sessionFacts, cps []shelved) {
	orphan := r.notice("turn records the state never counted (a hook killed between its append and its state write)")
	reused := r.notice("turn numbers started twice in one turn log (the start after such a record reuses its number)")
	pending := r.notice("ended sessions whose turns and condensed_turns disagree (status shows pending_turns != 0)")
	running := r.notice("turns left marked running: no checkpoint says how they ended")
	settled := map[string]map[int]bool{} // session -> turn numbers some checkpoint shows not running
	for _, c := range cps {
		for _, t := range c.cp.Turns {
			if !t.Running {
				if settled[c.cp.Session] == nil {
					settled[c.cp.Session] = map[int]bool{}
				}
				settled[c.cp.Session][t.Turn] = true
			}
		}
	}
	for _, c := range cps {
		for _, t := range c.cp.Turns {
			if t.Running && !settled[c.cp.Session][t.Turn] {
				running.failf("session %s: turn %d on checkpoint %s", c.cp.Session, t.Turn, c.cp.ID)
			}
		}
	}
	for _, sid := range slices.Sorted(maps.Keys(sessions)) {
		s := sessions[sid]
		if s.complete > s.turnLogSize {
			orphan.failf("session %s: turn log %d bytes, state turn_log_size %d", sid, s.complete, s.turnLogSize)
		}
		starts := map[int]int{}
		for _, rec := range s.records {
			if rec.T == state.RecTurnStart {
				starts[rec.Turn]++
			}
		}
		for _, n := range slices.Sorted(maps.Keys(starts)) {
			if starts[n] > 1 {
				reused.failf("session %s: turn %d started %d times", sid, n, starts[n])
			}
		}
		if s.phase == state.PhaseEnded && s.turns != s.condensedTurns {
			pending.failf("session %s (%s): turns %d, condensed_turns %d", sid, s.endReason, s.turns, s.condensedTurns)
		}
	}
}
