package main

import (
	"fmt"
	"io"
	"os"
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

// statusOpts are status's flags.
type statusOpts struct {
	sf                                    sweepFlags
	noSweep, all, asJSON, allRepos, watch bool
}

func (a *app) statusCommand() *cobra.Command {
	var o statusOpts
	c := &cobra.Command{
		Use:   "status [SESSION]",
		Short: "sweep, then list sessions, or show one in full",
		Long: `Sweep first (finalizing sessions whose agent is gone), then list the sessions
that have not ended, those that wait for you first: whether their agent's
process is alive, their turns, when they were last active and what they were
last asked. Problems the hook logged follow the table, once each, until they
are resolved (or dismissed with tether-sweep doctor --fix).

With --all-repos (-A), the sessions of every repository on this machine where
tether recorded one, from any directory, with a REPO column; a repository that
was moved or deleted is dropped, with a note. With --watch, the table (or, with
--json, one JSON object per change) follows what happens until q or Ctrl-C.

With a SESSION (its ID or a unique prefix, from any repository), show that
session in full: its owner process, liveness and why, its turns with their
prompts, checkpoints, linked issue and pull request, and how it ended.

Columns (on a narrow terminal the least useful go first):

    REPO         the session's repository (--all-repos)
    SESSION      the session's ID, cut as short as still names it among all
                 the sessions tether keeps (of every repository with -A)
    AGENT        the coding agent running the session
    PHASE        active (a turn is running), waiting and for how long (the agent
                 said it waits for you), idle (between turns) or ended
    LIVENESS     the agent's process: alive; exited (gone between turns or as
                 the session ended); died (gone with a turn cut short); unknown
                 (on another host or in another PID namespace: never taken for
                 dead)
    WAITS FOR    what a waiting agent asked: a permission (the tool and what it
                 would do), an answer to its question, or a prompt
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
  tether-sweep status -A
  tether-sweep status --watch
  tether-sweep status -A --watch --json
  tether-sweep status 3f2a9c1e
  tether-sweep status --json`,
		GroupID:           "sessions",
		Args:              maxArgs(1, "status takes at most one SESSION"),
		ValidArgsFunction: a.completeSessions(true),
		RunE: func(c *cobra.Command, args []string) error {
			o.sf.githubSet = c.Flags().Changed("github")
			if o.noSweep && o.sf.github {
				return usagef("--github reconciles during the sweep: it cannot go with --no-sweep")
			}
			if len(args) == 1 {
				switch {
				case o.all:
					return usagef("--all lists sessions: it cannot go with a SESSION")
				case o.allRepos:
					return usagef("--all-repos lists sessions: it cannot go with a SESSION")
				case o.watch:
					return usagef("--watch follows the list of sessions: it cannot go with a SESSION")
				}
				return a.statusOf(args[0], o.sf, o.noSweep, o.asJSON)
			}
			if o.watch {
				return a.watchStatus(o)
			}
			return a.status(o)
		},
	}
	fs := c.Flags()
	fs.BoolVar(&o.noSweep, "no-sweep", false, "list without sweeping first")
	fs.BoolVar(&o.all, "all", false, "include ended sessions")
	fs.BoolVarP(&o.allRepos, "all-repos", "A", false, "the sessions of every repository where tether recorded one")
	fs.BoolVar(&o.watch, "watch", false, "follow the sessions as they change, until q or Ctrl-C")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON (with --watch: one object per change and line)")
	o.sf.define(fs)
	return c
}

func (a *app) status(o statusOpts) error {
	ws, notes, err := a.statusWorkspaces(o.allRepos)
	if err != nil {
		return err
	}
	l, err := a.gather(ws, o)
	if err != nil {
		return err
	}
	if len(notes) > 0 { // else warnings stay the empty list, never null
		l.Warnings = append(notes, l.Warnings...)
	}
	if o.asJSON {
		return writeJSON(a.stdout, l.statusJSON)
	}
	return a.printListing(a.stdout, ws, l, o, time.Now())
}

// statusWorkspaces are the stores status lists: the working directory's,
// or with allRepos every one of the registry (the working directory's
// first, registered now if it was not), with a note for each dropped.
func (a *app) statusWorkspaces(allRepos bool) ([]*workspace, []string, error) {
	w, err := a.open()
	if !allRepos {
		if err != nil {
			return nil, nil, err
		}
		a.register(w)
		return []*workspace{w}, nil, nil
	}
	var ws []*workspace
	if err == nil {
		a.register(w)
		if _, serr := os.Stat(w.store.Dir()); serr == nil {
			ws = append(ws, w)
		} else {
			w = nil
		}
	} else {
		w = nil
	}
	others, dropped := a.registeredStores(w)
	return append(ws, others...), dropped, nil
}

// listing is what status shows: the sessions of the stores looked at,
// sorted, and their IDs as the table abbreviates them; live holds the
// live sessions as stored, and of the store each belongs to.
type listing struct {
	statusJSON
	short map[string]string
	live  map[string]liveSession
}

type liveSession struct {
	*state.Session
	w *workspace
}

// gather sweeps each store (unless --no-sweep) and lists its sessions. A
// store that fails is a warning when there are several; alone, its error.
func (a *app) gather(ws []*workspace, o statusOpts) (listing, error) {
	l := listing{statusJSON: statusJSON{Sessions: []sweep.Row{}, Finalized: []string{}, Warnings: []string{}}, live: map[string]liveSession{}}
	var ids []string
	for _, w := range ws {
		rows, err := a.storeRows(w, o, &l)
		if err != nil {
			if len(ws) == 1 {
				return l, err
			}
			l.Warnings = append(l.Warnings, fmt.Sprintf("%s: %v", a.repoName(w.repo.CommonDir), err))
			continue
		}
		all, err := w.store.IDs()
		if err != nil {
			l.Warnings = append(l.Warnings, err.Error())
		}
		ids = append(ids, all...)
		for i := range rows {
			ids = append(ids, rows[i].ID)
			if o.allRepos {
				rows[i].Repo = repoPath(w.repo.CommonDir)
			}
		}
		l.Sessions = append(l.Sessions, rows...)
	}
	sortRows(l.Sessions)
	l.short = shortIDs(ids)
	return l, nil
}

// storeRows sweeps one store (unless --no-sweep) and returns the rows of
// its sessions: those that have not ended, those this sweep ended, and
// with --all every ended one.
func (a *app) storeRows(w *workspace, o statusOpts, out *listing) ([]sweep.Row, error) {
	var mine statusJSON
	checked, err := a.check(w, o.sf, o.noSweep, &mine)
	if err != nil {
		return nil, err
	}
	out.Finalized = append(out.Finalized, mine.Finalized...)
	out.Warnings = append(out.Warnings, mine.Warnings...)
	rows := make([]sweep.Row, 0, len(checked))
	for _, c := range checked {
		rows = append(rows, sweep.MakeRow(c.Session, c.Verdict))
		out.live[c.Session.ID] = liveSession{c.Session, w}
	}
	if !o.all && len(mine.Finalized) == 0 {
		return rows, nil
	}
	es, warns, err := w.store.ListEnded()
	if err != nil {
		return nil, fmt.Errorf("list ended sessions: %w", err)
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
		if o.all || slices.Contains(mine.Finalized, s.ID) || listed[s.ID] {
			rows = append(rows, sweep.MakeRow(s, state.OwnerVerdict(s)))
		}
	}
	return rows, nil
}

// printListing prints the table of a listing, what the sweep finalized
// before it and the warnings after it.
func (a *app) printListing(out io.Writer, ws []*workspace, l listing, o statusOpts, now time.Time) error {
	term := a.terminal()
	printFinalized(out, l.statusJSON, l.short)
	if len(l.Sessions) == 0 {
		if o.allRepos || len(ws) != 1 {
			fmt.Fprintln(out, "no sessions in any repository tether knows: they appear here once an agent whose hooks tether installed starts work")
		} else {
			fmt.Fprintln(out, a.noSessions(ws[0].store, o.all))
		}
	} else {
		if err := statusTable(l.Sessions, l.short, now, o.allRepos, a.tilde).Render(out, term.width, term.color); err != nil {
			return err
		}
		for _, r := range l.Sessions {
			if r.Liveness == "unknown" && r.Phase != string(state.PhaseEnded) {
				fmt.Fprintf(out, "  %s: liveness unknown: %s\n", l.short[r.ID], r.LivenessReason)
			}
		}
	}
	for _, warn := range l.Warnings {
		fmt.Fprintf(out, "warning: %s\n", warn)
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
// abbreviates it; withRepo, each with its repository, as name gives it.
func statusTable(rows []sweep.Row, short map[string]string, now time.Time, withRepo bool, name func(string) string) table.Table {
	t := table.Table{Columns: statusColumns}
	if withRepo {
		t.Columns = append([]table.Column{{Header: "REPO", Min: 12}}, t.Columns...)
	}
	for _, r := range rows {
		var row []table.Cell
		if withRepo {
			row = append(row, table.Cell{Text: table.Clean(name(r.Repo))})
		}
		t.Rows = append(t.Rows, append(row, []table.Cell{
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
		}...))
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
