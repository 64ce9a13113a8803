package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetherdev/tether/install"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

const (
	// leftoverAge is how old a temp or lock file must be before doctor calls
	// it a leftover: every writer is done within seconds.
	leftoverAge = 10 * time.Minute
	// unknownAfter is how long a session of unknown liveness may stay quiet
	// before doctor mentions it, unless tether.staleAfter says otherwise.
	unknownAfter = 24 * time.Hour
	// listMax bounds the files listed under one problem.
	listMax = 10
)

// problem is one thing doctor found wrong.
type problem struct {
	What    string `json:"what"`
	Detail  string `json:"detail"`
	Fixable bool   `json:"fixable"`
	Hint    string `json:"hint,omitempty"` // what a person can do; for fixable ones, besides --fix
	fix     func() error
}

// doctorJSON is the contract of `doctor --json`.
type doctorJSON struct {
	Problems []problem   `json:"problems"`
	Fixed    []string    `json:"fixed,omitempty"`
	NotFixed []fixFailed `json:"not_fixed,omitempty"`
	Sessions verdicts    `json:"sessions"` // live sessions by their owner's verdict
	OK       bool        `json:"ok"`
}

// verdicts counts sessions that have not ended by their owner's liveness.
type verdicts struct {
	Alive   int `json:"alive"`
	Dead    int `json:"dead"`
	Unknown int `json:"unknown"`
}

func (v *verdicts) add(l proclive.Liveness) {
	switch l {
	case proclive.Alive:
		v.Alive++
	case proclive.Dead:
		v.Dead++
	default:
		v.Unknown++
	}
}

func (v verdicts) String() string {
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{v.Alive, "alive"}, {v.Dead, "dead"}, {v.Unknown, "of unknown liveness"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if len(parts) == 0 {
		return "no live sessions"
	}
	return "live sessions: " + strings.Join(parts, ", ")
}

type fixFailed struct {
	What  string `json:"what"`
	Error string `json:"error"`
}

func (a *app) doctorCommand() *cobra.Command {
	var (
		fix, asJSON bool
		inst        installFlags
	)
	c := &cobra.Command{
		Use:   "doctor",
		Short: "check the installation and the store; --fix repairs what it safely can",
		Long: `Check that what install recorded is still in place (git hooks, agent configs,
both binaries) — or, given --agent, --user, --push or --no-git-hooks, what an
install with those flags would set up — and that the store is healthy: file
modes, quarantined and leftover files, sessions nothing will end. Exit status 1
when there is a problem; --fix repairs what it safely can, then checks again.`,
		Example: `  tether-sweep doctor
  tether-sweep doctor --fix
  tether-sweep doctor --agent codex --user --json`,
		GroupID: "setup",
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			opts, err := a.options(c.Flags(), inst)
			if err != nil {
				return err
			}
			// Flags that pick what to install check what an install
			// with them would set up, not what install recorded.
			picked := slices.ContainsFunc([]string{"agent", "user", "push", "no-git-hooks"}, c.Flags().Changed)
			return a.doctor(opts, picked, fix, asJSON)
		},
	}
	c.Flags().BoolVar(&fix, "fix", false, "repair what can be repaired safely (hooks, agent configs, modes, leftover files), then check again")
	c.Flags().BoolVar(&asJSON, "json", false, "print the problems as JSON")
	inst.define(c.Flags(), "doctor")
	return c
}

func (a *app) doctor(opts install.Options, picked, fix, asJSON bool) error {
	w, err := a.open()
	if err != nil {
		return err
	}
	defer w.store.Close()
	// Check what install did, as recorded, unless flags picked a setup.
	checks := []install.Options{opts}
	setup, recorded, err := install.Recorded(a.dir)
	if err != nil {
		return err
	}
	if !picked {
		checks = nil
		if recorded {
			checks = setup.Options(opts)
		}
	}
	if opts.Trust {
		if err := trustNeedsCodex(checks); err != nil {
			return err
		}
	}
	diagnose := func() ([]problem, verdicts) {
		probs, sessions := a.diagnose(w, checks, time.Now())
		if checks != nil {
			for _, p := range install.CheckPresent(opts, setup) {
				probs = append(probs, problem{What: p.What, Detail: p.Detail, Fixable: p.Fix != nil, fix: p.Fix})
			}
		}
		return probs, sessions
	}

	probs, sessions := diagnose()
	var out doctorJSON
	if fix {
		for _, p := range probs {
			if p.fix == nil {
				continue
			}
			if err := p.fix(); err != nil {
				out.NotFixed = append(out.NotFixed, fixFailed{What: p.What, Error: err.Error()})
				continue
			}
			out.Fixed = append(out.Fixed, p.What)
		}
		probs, sessions = diagnose()
	}
	out.Problems, out.Sessions = probs, sessions
	if out.Problems == nil {
		out.Problems = []problem{}
	}
	out.OK = len(probs) == 0

	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		printDoctor(a.stdout, out, fix)
	}
	if !out.OK {
		return errSilent
	}
	return nil
}

// diagnose runs every check: the installation as each of checks would set
// it up (none: tether was never installed here, or by a tether too old to
// record what), and the store. It changes nothing, except that listing the
// sessions quarantines a corrupt one, as every listing does. It counts the
// live sessions by verdict, for the summary.
func (a *app) diagnose(w *workspace, checks []install.Options, now time.Time) (probs []problem, sessions verdicts) {
	if checks == nil {
		probs = append(probs, notInstalled(a.dir))
	}
	seen := map[string]bool{} // a missing binary is one problem, at any level
	for _, opts := range checks {
		for _, p := range install.Check(opts) {
			if !seen[p.What] {
				seen[p.What] = true
				probs = append(probs, problem{What: p.What, Detail: p.Detail, Fixable: p.Fix != nil, fix: p.Fix})
			}
		}
	}
	st := w.store
	sessions, sp := a.sessionProblems(w, now)
	probs = append(probs, sp...)
	probs = append(probs, modeProblems(st)...)
	probs = append(probs, quarantineProblems(st)...)
	probs = append(probs, leftoverProblems(st, now)...)
	probs = append(probs, warningProblems(st, now)...)
	return probs, sessions
}

// notInstalled is the problem of a repository without a record of what
// install set up: doctor checks what install did, never what it guesses.
func notInstalled(dir string) problem {
	if install.Traces(dir) {
		return problem{
			What:   "tether's install record is missing",
			Detail: "tether's hooks are here, but not the record of what install set up (an older tether installed them), so doctor cannot tell what to check.",
			Hint:   "tether-sweep install again, with the --agent you use: it keeps what is in place and records it",
		}
	}
	return problem{
		What: "tether is not installed in this repository",
		Hint: "tether-sweep install",
	}
}

// sessionProblems counts the live sessions by verdict, and reports those
// whose agent is gone but that no sweep has finalized yet (--fix runs the
// sweep), and those whose liveness has been unknown for long: nothing will
// end them but a person or the stale-after policy.
func (a *app) sessionProblems(w *workspace, now time.Time) (verdicts, []problem) {
	var probs []problem
	threshold, configured := unknownAfter, false
	if v := a.gitConfig(w.repo, "staleAfter"); v != "" {
		d, err := state.ParseAge(v)
		switch {
		case err != nil:
			probs = append(probs, problem{
				What:   "git config tether.staleAfter is not a duration",
				Detail: err.Error() + "; until it is fixed, sessions of unknown liveness are not ended by age, status warns and run fails.",
				Hint:   "git config tether.staleAfter 7d (or git config --unset tether.staleAfter)",
			})
		case d > 0:
			threshold, configured = d, true
		}
	}
	var count verdicts
	sessions, _, err := w.store.List()
	if err != nil {
		return count, append(probs, problem{What: "cannot list sessions", Detail: err.Error()})
	}
	var dead []string
	for _, s := range sessions {
		v := state.OwnerVerdict(s)
		count.add(v.Liveness)
		if v.Liveness == proclive.Dead {
			dead = append(dead, fmt.Sprintf("%s (%s, %s): %s", shortID(s.ID), s.Agent, s.Phase, v.Reason))
			continue
		}
		quiet := now.Sub(s.LastActivity())
		if v.Liveness != proclive.Unknown || quiet <= threshold {
			continue
		}
		p := problem{
			What: fmt.Sprintf("session %s (%s) has been of unknown liveness and quiet for %s", shortID(s.ID), s.Agent, age(quiet)),
			Detail: fmt.Sprintf("%s; last activity %s in %s. Nothing ends it until a person does or the stale-after policy applies.",
				v.Reason, s.LastActivity().Local().Format(time.RFC3339), dash(s.Worktree)),
			Hint: fmt.Sprintf("if it is over: tether-sweep end %s; to end such sessions automatically: git config tether.staleAfter 7d (or tether-sweep run --stale-after 7d)", s.ID),
		}
		if configured {
			p.Detail = fmt.Sprintf("%s; last activity %s in %s. tether.staleAfter is %s, so the next sweep ends it.",
				v.Reason, s.LastActivity().Local().Format(time.RFC3339), dash(s.Worktree), age(threshold))
			p.Hint = "tether-sweep run (or tether-sweep end " + s.ID + ")"
		}
		probs = append(probs, p)
	}
	if len(dead) > 0 {
		what := fmt.Sprintf("%d sessions whose agent is gone are not finalized yet", len(dead))
		if len(dead) == 1 {
			what = "1 session whose agent is gone is not finalized yet"
		}
		probs = append(probs, problem{
			What:    what,
			Detail:  "the next sweep (a commit, status, run) finalizes them and condenses their turns:\n" + listed(dead),
			Fixable: true,
			Hint:    "tether-sweep run",
			fix: func() error {
				_, err := a.sweep(w, sweepFlags{}, false)
				return err
			},
		})
	}
	return count, probs
}

func modeProblems(st *state.Store) []problem {
	loose, err := st.LooseModes()
	if err != nil {
		return []problem{{What: "cannot check the store's modes", Detail: err.Error()}}
	}
	if len(loose) == 0 {
		return nil
	}
	lines := make([]string, 0, len(loose))
	for _, m := range loose {
		kind := "file"
		if m.Dir {
			kind = "dir "
		}
		lines = append(lines, fmt.Sprintf("%s %04o %s (want %04o)", kind, m.Mode, m.Path, m.Want))
	}
	return []problem{{
		What:    fmt.Sprintf("%s is open to other users (%s)", st.Dir(), count(len(loose), "loose mode", "loose modes")),
		Detail:  "sessions hold prompts and transcripts' paths; the store keeps them 0700/0600:\n" + listed(lines),
		Fixable: true,
		Hint:    "chmod -R go-rwx " + st.Dir(),
		fix: func() error {
			for _, m := range loose {
				if err := st.FixMode(m); err != nil {
					return err
				}
			}
			return nil
		},
	}}
}

func quarantineProblems(st *state.Store) []problem {
	qs, err := st.Quarantined()
	if err != nil {
		return []problem{{What: "cannot list quarantined files", Detail: err.Error()}}
	}
	if len(qs) == 0 {
		return nil
	}
	lines := make([]string, 0, len(qs))
	for _, q := range qs {
		line := q.Name
		if q.File != "" {
			line += " (was " + q.File + ")"
		}
		reason := q.Reason
		if reason == "" {
			reason = "no reason recorded"
		}
		lines = append(lines, line+": "+strings.ReplaceAll(reason, "\n", " "))
	}
	return []problem{{
		What:   fmt.Sprintf("%s in %s", count(len(qs), "quarantined file", "quarantined files"), st.QuarantineDir()),
		Detail: "tether moved these aside as unreadable or corrupt, and never deletes them:\n" + listed(lines),
		Hint:   "look at them (each has a .reason file beside it), then delete them by hand: rm -r " + st.QuarantineDir(),
	}}
}

func leftoverProblems(st *state.Store, now time.Time) []problem {
	ls, err := st.Leftovers(now, leftoverAge)
	if err != nil {
		return []problem{{What: "cannot look for leftover files", Detail: err.Error()}}
	}
	var probs []problem
	for _, kind := range []state.LeftoverKind{state.LeftoverTemp, state.LeftoverLock} {
		var these []state.Leftover
		var lines []string
		for _, l := range ls {
			if l.Kind == kind {
				these = append(these, l)
				lines = append(lines, fmt.Sprintf("%s: %s, %s old", l.Path, l.Why, age(now.Sub(l.ModTime))))
			}
		}
		if len(these) == 0 {
			continue
		}
		what := fmt.Sprintf("%s in %s", count(len(these), "stale temp file", "stale temp files"), st.Dir())
		detail := "left by writers that crashed; no one will finish them:\n"
		if kind == state.LeftoverLock {
			what = fmt.Sprintf("%s in %s", count(len(these), "stale lock file", "stale lock files"), st.Dir())
			detail = "no one holds them and they belong to no session:\n"
		}
		probs = append(probs, problem{
			What:    what,
			Detail:  detail + listed(lines),
			Fixable: true,
			fix: func() error {
				for _, l := range these {
					if err := st.RemoveLeftover(l, time.Now(), leftoverAge); err != nil {
						return err
					}
				}
				return nil
			},
		})
	}
	return probs
}

// listed renders lines for a detail, at most listMax of them.
func listed(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		if i == listMax {
			fmt.Fprintf(&b, "… and %d more\n", len(lines)-listMax)
			break
		}
		b.WriteString(l + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func printDoctor(w io.Writer, out doctorJSON, fixing bool) {
	for _, f := range out.Fixed {
		fmt.Fprintf(w, "fixed: %s\n", f)
	}
	for _, f := range out.NotFixed {
		fmt.Fprintf(w, "not fixed: %s: %s\n", f.What, f.Error)
	}
	if out.OK {
		fmt.Fprintf(w, "ok: tether is installed and its store is healthy (%s)\n", out.Sessions)
		return
	}
	fixable := 0
	for _, p := range out.Problems {
		fmt.Fprintf(w, "problem: %s\n", p.What)
		if p.Detail != "" {
			fmt.Fprintf(w, "%s\n", indent(p.Detail))
		}
		switch {
		case p.Fixable && p.Hint != "":
			fmt.Fprintf(w, "    fix: tether-sweep doctor --fix (or %s)\n", p.Hint)
		case p.Fixable:
			fmt.Fprintf(w, "    fix: tether-sweep doctor --fix\n")
		case p.Hint != "":
			fmt.Fprintf(w, "    fix: %s\n", p.Hint)
		}
		if p.Fixable {
			fixable++
		}
	}
	fmt.Fprintln(w, out.Sessions)
	switch {
	case fixing:
		fmt.Fprintf(w, "%s left\n", count(len(out.Problems), "problem", "problems"))
	case fixable > 0:
		fmt.Fprintf(w, "%s; %d can be repaired with: tether-sweep doctor --fix\n", count(len(out.Problems), "problem", "problems"), fixable)
	default:
		fmt.Fprintf(w, "%s\n", count(len(out.Problems), "problem", "problems"))
	}
}

// trustNeedsCodex refuses --trust when none of the setups doctor checks
// has Codex: it would trust nothing, silently.
func trustNeedsCodex(checks []install.Options) error {
	for _, o := range checks {
		if names, err := install.Agents(o); err == nil && slices.Contains(names, "codex") {
			return nil
		}
	}
	return usagef("--trust is for Codex's hooks, and Codex is not set up here; set it up with: tether-sweep install --agent codex --trust")
}
