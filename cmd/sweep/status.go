package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetherdev/tether/state"
	"github.com/tetherdev/tether/sweep"
)

// statusJSON is the contract of `status --json` (DESIGN.md).
type statusJSON struct {
	Sessions  []sweep.Row `json:"sessions"`
	Finalized []string    `json:"finalized"`
	Warnings  []string    `json:"warnings"`
}

// warningWindow is how far back status looks for hook failures in the log.
const warningWindow = 24 * time.Hour

func (a *app) statusCommand() *cobra.Command {
	var (
		sf                   sweepFlags
		noSweep, all, asJSON bool
	)
	c := &cobra.Command{
		Use:   "status",
		Short: "sweep, then list sessions",
		Long: `Sweep first (finalizing sessions whose agent is gone), then list the sessions
that have not ended: who owns them, whether that process is alive, their turns
and what they were last asked. Warnings from the hook follow the table.`,
		Example: `  tether-sweep status
  tether-sweep status --all --json`,
		GroupID: "sessions",
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			sf.githubSet = c.Flags().Changed("github")
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
	if noSweep && sf.github {
		return usagef("--github reconciles during the sweep: it cannot go with --no-sweep")
	}
	w, err := a.open()
	if err != nil {
		return err
	}
	out := statusJSON{Sessions: []sweep.Row{}, Finalized: []string{}, Warnings: []string{}}

	var checked []sweep.Checked
	if noSweep {
		live, warns, err := w.store.List()
		if err != nil {
			return fmt.Errorf("list sessions: %w", err)
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
			return err
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
	rows := make([]sweep.Row, 0, len(checked))
	for _, c := range checked {
		rows = append(rows, sweep.MakeRow(c.Session, c.Verdict))
	}
	if all || len(out.Finalized) > 0 {
		ended, warns, err := w.store.ListEnded()
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
		for _, s := range ended {
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
	slices.SortStableFunc(rows, func(x, y sweep.Row) int { return y.LastActivityAt.Compare(x.LastActivityAt) })
	out.Sessions = rows

	if logged, err := w.store.Warnings(time.Now().Add(-warningWindow)); err == nil {
		for _, wn := range logged {
			msg := wn.Msg
			if wn.Session != "" {
				msg = shortID(wn.Session) + ": " + msg
			}
			out.Warnings = append(out.Warnings, wn.Time.Local().Format("Jan 02 15:04")+" "+msg)
		}
	}

	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	color := isTerminal(a.stdout) && a.getenv("NO_COLOR") == ""
	printStatus(a.stdout, out, color, time.Now())
	return nil
}

func printStatus(w io.Writer, out statusJSON, color bool, now time.Time) {
	for _, id := range out.Finalized {
		for _, r := range out.Sessions {
			if r.ID == id {
				end := r.EndReason
				if r.GitHub != "" {
					end += " (" + r.GitHub + ")"
				}
				fmt.Fprintf(w, "finalized %s (%s): %s\n", shortID(id), r.Agent, end)
			}
		}
	}
	if len(out.Sessions) == 0 {
		fmt.Fprintln(w, "no sessions")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SESSION\tAGENT\tPHASE\tLIVENESS\tTURNS\tAGE\tBRANCH\tPENDING\tEND\tLAST PROMPT")
		for _, r := range out.Sessions {
			end := r.EndReason
			if r.GitHub != "" {
				end = strings.TrimSpace(end + " " + r.GitHub)
			}
			if end == "" {
				end = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%d\t%s\t%s\n",
				shortID(r.ID), r.Agent, paint(color, r.Phase), paint(color, r.Liveness), r.Turns,
				age(now.Sub(r.LastActivityAt)), dash(r.Branch), r.PendingTurns, end, trim(r.LastPrompt, 48))
		}
		tw.Flush()
		for _, r := range out.Sessions {
			if r.Liveness == "unknown" && r.Phase != string(state.PhaseEnded) {
				fmt.Fprintf(w, "  %s: liveness unknown: %s\n", shortID(r.ID), r.LivenessReason)
			}
		}
	}
	for _, warn := range out.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

// paint colours the words status cares about, on a terminal only.
func paint(color bool, s string) string {
	if !color {
		return s
	}
	code := map[string]string{"active": "32", "alive": "32", "idle": "33", "dead": "31", "ended": "90", "unknown": "35"}[s]
	if code == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func trim(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
