package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetherdev/tether/install"
	"github.com/tetherdev/tether/internal/table"
	"github.com/tetherdev/tether/state"
	"github.com/tetherdev/tether/sweep"
)

// statusJSON is the contract of `status --json` (DESIGN.md).
type statusJSON struct {
	Sessions  []sweep.Row `json:"sessions"`
	Finalized []string    `json:"finalized"`
	Warnings  []string    `json:"warnings"`
}

func (a *app) statusCommand() *cobra.Command {
	var (
		sf                   sweepFlags
		noSweep, all, asJSON bool
	)
	c := &cobra.Command{
		Use:   "status [SESSION]",
		Short: "sweep, then list sessions, or show one in full",
		Long: `Sweep first (finalizing sessions whose agent is gone), then list the sessions
that have not ended, those that wait for you first: whether their agent's
process is alive, their turns, when they were last active and what they were
last asked. Problems the hook logged
follow the table, once each, until they are resolved (or dismissed with
tether-sweep doctor --fix).

With a SESSION (its ID or a unique prefix), show that session in full: its
owner process, liveness and why, its turns with their prompts, checkpoints,
linked issue and pull request, and how it ended.

Columns (on a narrow terminal the least useful go first):

    SESSION      the session's ID, cut as short as still names it
    AGENT        the coding agent running the session
    PHASE        active (a turn is running), waiting and for how long (the agent
                 said it waits for you), idle (between turns) or ended
    WAITS FOR    what a waiting agent asked: a permission (the tool and what it
                 would do), an answer to its question, or a prompt
    LIVENESS     the agent's process: alive; exited (gone between turns or as
                 the session ended); died (gone with a turn cut short); unknown
                 (on another host or in another PID namespace: never taken for
                 dead)
    TURNS        how many prompts the session was given
    LAST ACTIVE  when the agent last did something
    BRANCH       the branch checked out in the session's worktree
    PENDING      turns not saved in a checkpoint yet: saved at the next commit
                 in the session's worktree, or when the session ends
    END          how it ended: ended by the agent, exited, killed mid-turn
                 (its process went away during a turn), stopped mid-turn (the
                 agent ended it during a turn: Ctrl-C), given up (no sign of
                 life for --stale-after), ended on GitHub, ended by hand
    LINK         the GitHub issue and pull request it is linked to
    LAST PROMPT  what it was asked last`,
		Example: `  tether-sweep status
  tether-sweep status --all
  tether-sweep status 3f2a9c1e
  tether-sweep status --json`,
		GroupID:           "sessions",
		Args:              maxArgs(1, "status takes at most one SESSION"),
		ValidArgsFunction: a.completeSessions(true),
		RunE: func(c *cobra.Command, args []string) error {
			sf.githubSet = c.Flags().Changed("github")
			if noSweep && sf.github {
				return usagef("--github reconciles during the sweep: it cannot go with --no-sweep")
			}
			if len(args) == 1 {
				if all {
					return usagef("--all lists sessions: it cannot go with a SESSION")
				}
				return a.statusOf(args[0], sf, noSweep, asJSON)
			}
			return a.status(sf, noSweep, all, asJSON)
		},
	}
	fs := c.Flags()
	fs.BoolVar(&noSweep, "no-sweep", false, "list without sweeping first")
	fs.BoolVar(&all, "all", false, "include ended sessions")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	sf.define(fs)
	return c
}

func (a *app) status(sf sweepFlags, noSweep, all, asJSON bool) error {
	w, err := a.open()
	if err != nil {
		return err
	}
	out := statusJSON{Sessions: []sweep.Row{}, Finalized: []string{}, Warnings: []string{}}

	checked, err := a.check(w, sf, noSweep, &out)
	if err != nil {
		return err
	}
	rows := make([]sweep.Row, 0, len(checked))
	for _, c := range checked {
		rows = append(rows, sweep.MakeRow(c.Session, c.Verdict))
	}
	if all || len(out.Finalized) > 0 {
		es, warns, err := w.store.ListEnded()
		if err != nil {
			return fmt.Errorf("list ended sessions: %w", err)
		}
		for _, wn := range warns {
			out.Warnings = append(out.Warnings, wn.Msg)
		}
		listed := map[string]bool{}
		for _, r := range rows {
			listed[r.ID] = true
		}
		for _, s := range es {
			// Without --all, show only what this very sweep finalized; a
			// session another process finalized since the scan is listed
			// once, as it is now.
			if listed[s.ID] {
				rows = slices.DeleteFunc(rows, func(r sweep.Row) bool { return r.ID == s.ID })
			}
			if all || slices.Contains(out.Finalized, s.ID) || listed[s.ID] {
				rows = append(rows, sweep.MakeRow(s, state.OwnerVerdict(s)))
			}
		}
	}
	sortRows(rows)
	out.Sessions = rows

	if asJSON {
		return writeJSON(a.stdout, out)
	}
	term := a.terminal()
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	short := shortIDs(ids) // as the table shows them
	printFinalized(a.stdout, out, short)
	if len(rows) == 0 {
		fmt.Fprintln(a.stdout, a.noSessions(w.store, all))
	} else {
		if err := statusTable(rows, short, time.Now()).Render(a.stdout, term.width, term.color); err != nil {
			return err
		}
		for _, r := range rows {
			if r.Liveness == "unknown" && r.Phase != string(state.PhaseEnded) {
				fmt.Fprintf(a.stdout, "  %s: liveness unknown: %s\n", short[r.ID], r.LivenessReason)
			}
		}
	}
	for _, warn := range out.Warnings {
		fmt.Fprintf(a.stdout, "warning: %s\n", warn)
	}
	return nil
}

// check sweeps, or with noSweep only lists, and returns the sessions that
// have not ended with their owners' verdicts. The warnings that still
// stand go into out, with the sessions the sweep finalized.
func (a *app) check(w *workspace, sf sweepFlags, noSweep bool, out *statusJSON) ([]sweep.Checked, error) {
	var checked []sweep.Checked
	if noSweep {
		live, warns, err := w.store.List()
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		for _, wn := range warns {
			out.Warnings = append(out.Warnings, wn.Msg)
		}
		for _, s := range live {
			checked = append(checked, sweep.Checked{Session: s, Verdict: state.OwnerVerdict(s)})
		}
	} else {
		rep, err := a.sweep(w, sf, false)
		if err != nil {
			return nil, err
		}
		checked = rep.Sessions
		out.Warnings = append(out.Warnings, rep.Warnings...)
		if rep.ConfigErr != nil {
			out.Warnings = append(out.Warnings, rep.ConfigErr.Error())
		}
		for _, t := range rep.Finalized {
			out.Finalized = append(out.Finalized, t.ID)
		}
	}
	out.Warnings = append(out.Warnings, standingWarnings(w.store, time.Now())...)
	return checked, nil
}

// noSessions says why the table is empty, and what to do about it.
func (a *app) noSessions(st *state.Store, all bool) string {
	if ended, err := st.AnyEnded(); !all && err == nil && ended {
		return "no live sessions; the ended ones are listed by: tether-sweep status --all"
	}
	if _, ok, _ := install.Recorded(a.dir); !ok && !install.Traces(a.dir) {
		return "no sessions: tether is not installed in this repository (set it up with: tether-sweep install)"
	}
	return "no sessions: they appear here when an agent whose hooks tether installed starts work in this repository"
}

func printFinalized(w io.Writer, out statusJSON, short map[string]string) {
	for _, id := range out.Finalized {
		for _, r := range out.Sessions {
			if r.ID == id {
				fmt.Fprintf(w, "finalized %s (%s): %s\n", short[id], r.Agent, rowEnding(r).words())
			}
		}
	}
}

// sortRows puts the sessions that wait first, the longest wait first, then
// the others, the last active first.
func sortRows(rows []sweep.Row) {
	slices.SortStableFunc(rows, func(x, y sweep.Row) int {
		switch {
		case x.Waiting != nil && y.Waiting != nil:
			return x.Waiting.Since.Compare(y.Waiting.Since)
		case x.Waiting != nil:
			return -1
		case y.Waiting != nil:
			return 1
		}
		return y.LastActivityAt.Compare(x.LastActivityAt)
	})
}

// phaseOf is a session's phase, and for how long it has waited.
func phaseOf(r sweep.Row, now time.Time) string {
	if r.Waiting != nil {
		return r.Phase + " " + age(now.Sub(r.Waiting.Since))
	}
	return r.Phase
}

// waitsFor says what a waiting session waits for: "permission to run Bash
// `npm test`", "an answer: Which file?", "a prompt".
func waitsFor(w *sweep.RowWaiting) string {
	if w == nil {
		return ""
	}
	detail := table.Clean(w.Detail)
	switch w.Kind {
	case state.WaitPermission:
		switch {
		case detail == "":
			return "permission"
		case strings.Contains(detail, "`"):
			return "permission to run " + detail
		}
		return "permission: " + detail
	case state.WaitQuestion:
		if detail == "" {
			return "an answer"
		}
		return "an answer: " + detail
	case state.WaitInput:
		return "a prompt"
	}
	return strings.TrimSpace(table.Clean(w.Kind) + " " + detail)
}

// linkOf is the issue and pull request a session is linked to, briefly.
func linkOf(r sweep.Row) string {
	if r.Link == nil {
		return ""
	}
	var parts []string
	if r.Link.Issue > 0 {
		parts = append(parts, fmt.Sprintf("#%d", r.Link.Issue))
	}
	if r.Link.PR > 0 {
		parts = append(parts, fmt.Sprintf("PR #%d", r.Link.PR))
	}
	return strings.Join(parts, ", ")
}

// The status table's columns. The ones worth least on a narrow terminal go
// first: the link, pending turns, turn counts, the agent, the branch, how
// it ended, the phase. The ID, liveness, what a session waits for, last
// activity and prompt always stay. WAITS FOR, END and LINK show only when a
// listed session has one.
var statusColumns = []table.Column{
	{Header: "SESSION"},
	{Header: "AGENT", Drop: 4},
	{Header: "PHASE", Drop: 7},
	{Header: "LIVENESS"},
	{Header: "WAITS FOR", Min: 16},
	{Header: "TURNS", Right: true, Drop: 3},
	{Header: "LAST ACTIVE"},
	{Header: "BRANCH", Min: 12, Drop: 5},
	{Header: "PENDING", Right: true, Drop: 2},
	{Header: "END", Min: 12, Drop: 6},
	{Header: "LINK", Drop: 1},
	{Header: "LAST PROMPT", Min: 24},
}

// statusTable lays the rows out as status prints them, each ID as short
// abbreviates it.
func statusTable(rows []sweep.Row, short map[string]string, now time.Time) table.Table {
	t := table.Table{Columns: statusColumns}
	for _, r := range rows {
		t.Rows = append(t.Rows, []table.Cell{
			{Text: short[r.ID]},
			{Text: r.Agent},
			{Text: phaseOf(r, now), Color: colors[r.Phase]},
			{Text: livenessWord(r), Color: colors[livenessWord(r)]},
			{Text: dash(waitsFor(r.Waiting))},
			{Text: strconv.Itoa(r.Turns)},
			{Text: ago(now.Sub(r.LastActivityAt))},
			{Text: dash(r.Branch)},
			{Text: strconv.Itoa(r.PendingTurns)},
			{Text: dash(rowEnding(r).words())},
			{Text: dash(linkOf(r))},
			{Text: dash(r.LastPrompt)},
		})
	}
	for i := len(t.Columns) - 1; i >= 0; i-- {
		if h := t.Columns[i].Header; h != "END" && h != "LINK" && h != "WAITS FOR" {
			continue
		}
		if slices.ContainsFunc(t.Rows, func(row []table.Cell) bool { return row[i].Text != "-" }) {
			continue
		}
		t.Columns = slices.Delete(slices.Clone(t.Columns), i, i+1)
		for j, row := range t.Rows {
			t.Rows[j] = slices.Delete(row, i, i+1)
		}
	}
	return t
}

// colors are the SGR colours of the words status cares about.
var colors = map[string]string{"active": "32", "waiting": "1;33", "alive": "32", "idle": "33", "died": "31", "exited": "90", "ended": "90", "unknown": "35"}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
