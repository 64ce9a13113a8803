package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/internal/table"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
	"github.com/tetherdev/tether/sweep"
)

// sessionJSON is `status SESSION --json`: the session as `status --json`
// lists it, with its turns, its checkpoints' links and the problems logged
// about it that still stand.
type sessionJSON struct {
	Session     sweep.Row        `json:"session"`
	Turns       []turnJSON       `json:"turns"`
	TurnsError  string           `json:"turns_error,omitempty"` // the turn log could not be read
	Checkpoints []checkpointJSON `json:"checkpoints"`
	Warnings    []string         `json:"warnings"`
}

type turnJSON struct {
	Turn      int       `json:"turn"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	Prompt    string    `json:"prompt"`
	State     string    `json:"state"` // done, running, interrupted, or no-end (no end recorded)
}

type checkpointJSON struct {
	ID     string   `json:"id"`
	Linked []string `json:"linked"` // commits
	// ChangedNothing: its turns are over and changed no file, so no commit
	// will be linked to it.
	ChangedNothing bool `json:"changed_nothing,omitempty"`
}

// statusOf shows one session in full.
func (a *app) statusOf(arg string, sf sweepFlags, noSweep, asJSON bool) error {
	w, id, err := a.openSession(arg, true)
	if err != nil {
		return err
	}
	var list statusJSON
	if _, err := a.check(w, sf, noSweep, &list); err != nil {
		return err
	}
	s, err := w.store.Load(id) // after the sweep: it may have ended it
	if err != nil {
		return err
	}
	v := state.OwnerVerdict(s)
	out := sessionJSON{Session: sweep.MakeRow(s, v), Turns: []turnJSON{}, Checkpoints: []checkpointJSON{}, Warnings: []string{}}
	// A turn log that cannot be read hides the turns, not the session.
	if recs, _, err := w.store.ReadTurns(id, 0); err != nil {
		out.TurnsError = err.Error()
	} else {
		out.Turns = turnsOf(recs, s, v.Liveness)
	}
	var cp *checkpoint.Repo // read only for the checkpoints no commit took
	for _, c := range s.Checkpoints {
		j := checkpointJSON{ID: c.ID, Linked: nonNil(c.Linked)}
		if len(c.Linked) == 0 && cp == nil {
			cp, _ = checkpoint.Open(w.repo.CommonDir)
		}
		if len(c.Linked) == 0 && cp != nil {
			if read, err := cp.Read(c.ID); err == nil && read.ChangedNothing() {
				j.ChangedNothing = true
			}
		}
		out.Checkpoints = append(out.Checkpoints, j)
	}
	if problems, err := loggedProblems(w.store, time.Now()); err == nil {
		for _, p := range problems {
			if p.Session == id {
				out.Warnings = append(out.Warnings, p.String())
			}
		}
	}
	if asJSON {
		return writeJSON(a.stdout, out)
	}
	printSession(a.stdout, out, w.abbrev(id), time.Now())
	return nil
}

// turnsOf pairs a turn log's starts and ends. A turn without an end was
// interrupted when another turn followed it or its session ended
// interrupted, and is running while its agent is alive.
func turnsOf(recs []state.TurnRecord, s *state.Session, l proclive.Liveness) []turnJSON {
	var turns []turnJSON
	for _, r := range recs {
		switch r.T {
		case state.RecTurnStart:
			turns = append(turns, turnJSON{Turn: r.Turn, StartedAt: r.At, Prompt: r.Prompt})
		case state.RecTurnEnd:
			if n := len(turns); n > 0 && turns[n-1].Turn == r.Turn && turns[n-1].EndedAt.IsZero() {
				turns[n-1].EndedAt = r.At
			}
		}
	}
	for i := range turns {
		t := &turns[i]
		last := i == len(turns)-1
		switch {
		case !t.EndedAt.IsZero():
			t.State = "done"
		case !last || s.Phase == state.PhaseEnded && s.Interrupted:
			t.State = "interrupted"
		case s.TurnRunning() && l != proclive.Dead:
			t.State = "running"
		default:
			t.State = "no-end"
		}
	}
	return turns
}

// printSession prints a session; short is its ID as the commands it
// suggests name it.
func printSession(w io.Writer, out sessionJSON, short string, now time.Time) {
	r := out.Session
	when := func(t time.Time) string {
		return t.Local().Format("2006-01-02 15:04:05") + " (" + ago(now.Sub(t)) + ")"
	}
	field := func(name, value string) {
		if value != "" {
			fmt.Fprintf(w, "  %-12s %s\n", name+":", value)
		}
	}
	fmt.Fprintf(w, "session %s (%s)\n", r.ID, r.Agent)
	phase := r.Phase
	if r.Interrupted {
		phase += ", interrupted"
	}
	field("phase", phase)
	if wt := r.Waiting; wt != nil {
		field("waits for", waitsFor(wt)+", since "+when(wt.Since))
	}
	field("liveness", livenessWord(r)+": "+table.Clean(r.LivenessReason))
	if o := r.Owner; o != nil {
		owner := fmt.Sprintf("pid %d", o.PID)
		if o.Name != "" {
			owner += " (" + table.Clean(o.Name) + ")"
		}
		if o.Host != "" {
			owner += " on " + table.Clean(o.Host)
		}
		field("owner", owner)
	} else {
		field("owner", "none recorded")
	}
	field("worktree", table.Clean(r.Worktree))
	field("branch", table.Clean(r.Branch))
	field("started", when(r.StartedAt))
	field("last active", when(r.LastActivityAt))
	if !r.EndedAt.IsZero() {
		field("ended", when(r.EndedAt)+": "+table.Clean(rowEnding(r).words()))
	}
	if l := r.Link; l != nil {
		field("linked to", describeLink(state.GitHubLink{Repo: l.Repo, Issue: l.Issue, PR: l.PR}))
	}
	if r.Phase == string(state.PhaseEnded) {
		if r.Resumable {
			field("resume", "tether-sweep resume "+short)
		} else {
			field("resume", "not resumable; tether-sweep resume --fresh "+short+" starts afresh")
		}
	}
	field("last error", table.Clean(r.LastError))
	if r.PendingTurns > 0 {
		field("pending", count(r.PendingTurns, "turn", "turns")+" not yet saved to a checkpoint")
	}

	if out.TurnsError != "" {
		fmt.Fprintf(w, "\nturns: cannot read them: %s\n", table.Clean(out.TurnsError))
	} else {
		fmt.Fprintf(w, "\n%s\n", count(len(out.Turns), "turn:", "turns:"))
	}
	for _, t := range out.Turns {
		span := t.StartedAt.Local().Format("2006-01-02 15:04:05")
		if !t.EndedAt.IsZero() {
			span += " – " + t.EndedAt.Local().Format("15:04:05")
		}
		mark := ""
		if t.State != "done" {
			mark = "  [" + strings.ReplaceAll(t.State, "-", " ") + "]"
		}
		fmt.Fprintf(w, "  %d  %s%s\n", t.Turn, span, mark)
		if t.Prompt != "" {
			fmt.Fprintf(w, "%s\n", indented(t.Prompt, "     ", 5))
		}
	}
	fmt.Fprintf(w, "\n%s\n", count(len(out.Checkpoints), "checkpoint:", "checkpoints:"))
	for _, c := range out.Checkpoints {
		linked := "not linked to a commit yet"
		if c.ChangedNothing {
			linked = "changed no files: no commit to link"
		}
		if len(c.Linked) > 0 {
			short := make([]string, len(c.Linked))
			for i, l := range c.Linked {
				short[i] = shortID(l)
			}
			linked = "linked to " + strings.Join(short, ", ")
		}
		fmt.Fprintf(w, "  %s  %s\n", c.ID, linked)
	}
	for _, warn := range out.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

// indented shows a prompt's first lines (at most max), each made safe for
// a terminal and indented.
func indented(text, indent string, max int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	more := len(lines) - max
	if more > 0 {
		lines = lines[:max]
	}
	for i, l := range lines {
		lines[i] = indent + table.Clean(l)
	}
	if more > 0 {
		lines = append(lines, indent+"… "+count(more, "more line", "more lines"))
	}
	return strings.Join(lines, "\n")
}
