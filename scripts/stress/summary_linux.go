package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"syscall"
	"time"
)

// summary prints what happened, with counts, and adds the notices about
// the run itself (sweep errors, log warnings, odd agent exits).
func (d *driver) summary(r *report) {
	d.mu.Lock()
	runs := slices.Clone(d.runs)
	st := d.stats
	d.mu.Unlock()

	outcomes, hookEvents, killedAt := map[string]int{}, map[string]int{}, map[string]int{}
	sessions, resumed := map[string]bool{}, 0
	var submitted, hookOK, done int
	odd := r.notice("agents that failed for another reason")
	for _, run := range runs {
		<-run.done
		outcome, event := classifyExit(*run.exit)
		outcomes[outcome]++
		if event != "" {
			hookEvents[event]++
		}
		if outcome == outKilled {
			killedAt[run.killedAt]++
		}
		if outcome == outOther {
			odd.failf("agent %d (pid %d, session %s): signal %q, exit %d: %s", run.seq, run.proc.Pid, run.session,
				run.exit.signal, run.exit.code, strings.TrimSpace(run.exit.stderr))
		}
		if sessions[run.session] {
			resumed++
		}
		sessions[run.session] = true
		for _, f := range run.fates(run.entries()) {
			if f.submitted {
				submitted++
			}
			if f.hookOK {
				hookOK++
			}
			if f.done {
				done++
			}
		}
	}
	fmt.Printf("activity (%d live checks):\n", d.liveChecks)
	fmt.Printf("  agents: %d processes, %d sessions (%d resumed by a new process)\n", len(runs), len(sessions), resumed)
	fmt.Printf("    %s\n", counts(outcomes))
	fmt.Printf("    killed by the driver when: %s\n", counts(killedAt))
	fmt.Printf("    hooks killed under them, by event: %s\n", counts(hookEvents))
	fmt.Printf("  prompts: %d submitted, %d returned from their hook, %d finished\n", submitted, hookOK, done)
	fmt.Printf("  hooks: %d seen, %d killed; %d events spooled (the driver held a session's lock %d times)\n",
		st.hooksSeen, st.hooksKilled, d.log.spools(), st.lockHogs)
	fmt.Printf("  sweeps started by the driver: %d (%d ok, %d killed, %d failed)\n",
		st.sweeps, st.sweepsOK, st.sweepsKilled, st.sweeps-st.sweepsOK-st.sweepsKilled)
	fmt.Printf("  tether-sweep processes seen: %s\n", counts(st.sweepsSeen))
	fmt.Printf("    killed: %s; %d more killed holding the checkpoints lock\n", counts(st.sweepsKilledByKind), st.lockHolderKills)
	fmt.Printf("  status --json: %d (%d ok and checked, %d killed)\n", st.status, st.statusOK, st.statusKilled)
	failedCommits := 0
	for _, n := range st.commitsFailed {
		failedCommits += n
	}
	fmt.Printf("  person commits: %d (%d killed with their hook); %d refused by git; stale git locks removed: %d\n",
		st.commits, st.commitsKilled, failedCommits, st.staleGitLocks)

	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		fmt.Printf("  the driver itself used %v user, %v system CPU\n",
			time.Duration(ru.Utime.Nano()).Round(time.Millisecond), time.Duration(ru.Stime.Nano()).Round(time.Millisecond))
	}
	entries, lines := d.log.warnings()
	fmt.Printf("  tether.log: %d lines read, %d warnings and errors\n", lines, len(entries))

	shapes := map[string]int{}
	for _, e := range entries {
		shapes[shape(e.text())]++
	}
	noteCounts(r.notice("warnings and errors in tether.log (digits shown as #)"), shapes)
	noteCounts(r.notice("sweeps and status runs that failed (digits shown as #)"), st.sweepErrors)
	noteCounts(r.notice("warnings printed by sweeps (digits shown as #)"), st.sweepWarnings)
	noteCounts(r.notice("the person's commits that git refused (digits shown as #)"), st.commitsFailed)
	for _, e := range st.driverErrors {
		r.notice("the driver's own failures").failf("%s", e)
	}
}

// counts renders a histogram, largest first.
func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b))
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func noteCounts(c *check, m map[string]int) {
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b))
	})
	for _, k := range keys {
		c.failf("%d× %s", m[k], k)
	}
}
