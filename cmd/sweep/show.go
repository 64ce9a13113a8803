package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/internal/table"
	"github.com/tetherdev/tether/snapshot"
)

func (a *app) showCommand() *cobra.Command {
	var asJSON, transcript bool
	var remote string
	c := &cobra.Command{
		Use:   "show <commit|checkpoint>",
		Short: "show the checkpoints of a commit, or one checkpoint",
		Long: `Show the checkpoints linked to a commit (any revision git understands), with
the first line of each prompt, or one checkpoint by its ID with its prompts in
full. --transcript prints their stored transcripts instead (JSON lines),
fetching from the remote the one this clone does not have.`,
		Example: `  tether-sweep show HEAD
  tether-sweep show 9c1e3f2a0b4d5e6f --json
  tether-sweep show HEAD --transcript`,
		GroupID: "checkpoints",
		Args:    exactArgs(1, "show takes one commit or checkpoint ID"),
		RunE: func(_ *cobra.Command, args []string) error {
			if asJSON && transcript {
				return usagef("--json and --transcript do not go together")
			}
			return a.show(args[0], asJSON, transcript, remote)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the checkpoints as JSON")
	c.Flags().BoolVar(&transcript, "transcript", false, "print the stored transcripts, fetching them if this clone lacks them")
	c.Flags().StringVar(&remote, "remote", "", "the remote to fetch transcripts from (default: git config tether.transcriptsRemote, else the upstream's, or origin)")
	return c
}

func (a *app) show(arg string, asJSON, transcript bool, remote string) error {
	w, err := a.open()
	if err != nil {
		return err
	}
	cp, err := checkpoint.Open(w.repo.CommonDir)
	if err != nil {
		return fmt.Errorf("open repository: %w", err)
	}

	var cps []*checkpoint.Checkpoint
	via := map[string]string{} // how an inherited checkpoint came to the commit
	commit, isCommit := a.revParse(arg)
	if isCommit {
		links, err := cp.NoteLinks(commit)
		if err != nil {
			return fmt.Errorf("notes of %s: %w", shortID(commit), err)
		}
		for _, l := range links {
			all, err := cp.ReadVariants(l.ID)
			if err != nil {
				return fmt.Errorf("checkpoint %s linked to %s: %w", l.ID, shortID(commit), err)
			}
			cps, via[l.ID] = append(cps, all...), l.Via
		}
	}
	if len(cps) == 0 {
		all, err := cp.ReadVariants(arg)
		switch {
		case err == nil:
			cps, isCommit = all, false
		case isCommit:
			fmt.Fprintf(a.stdout, "commit %s has no checkpoints\n", shortID(commit))
			return nil
		case errors.Is(err, checkpoint.ErrNotFound):
			if id, err := w.resolveSession(arg, true); err == nil {
				return fmt.Errorf("%q is a session, not a commit or a checkpoint: see tether-sweep status %s", arg, w.abbrev(id))
			}
			return fmt.Errorf("%q is neither a commit nor a checkpoint", arg)
		default:
			return err
		}
	}

	if transcript {
		return a.showTranscripts(w, cp, cps, remote)
	}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		// Each checkpoint as checkpoint.json has it, with how an inherited
		// one came to the commit.
		type shown struct {
			*checkpoint.Checkpoint
			Via string `json:"via,omitempty"`
		}
		out := make([]shown, len(cps))
		for i, c := range cps {
			out[i] = shown{c, via[c.ID]}
		}
		return enc.Encode(out)
	}
	if isCommit {
		ids := map[string]bool{}
		for _, c := range cps {
			ids[c.ID] = true
		}
		fmt.Fprintf(a.stdout, "commit %s: %s\n", shortID(commit), count(len(ids), "checkpoint", "checkpoints"))
	}
	for i, c := range cps {
		if i > 0 || isCommit {
			fmt.Fprintln(a.stdout) // a blank line under the commit's line and between checkpoints
		}
		if i > 0 && cps[i-1].ID == c.ID {
			// Two clones once wrote different content under this ID;
			// merging kept both (checkpoint.theirs-*.json).
			fmt.Fprintf(a.stdout, "another clone's version of checkpoint %s, kept beside it when they were merged:\n", c.ID)
		}
		if v := via[c.ID]; v != "" {
			fmt.Fprintf(a.stdout, "inherited (%s):\n", table.Clean(v))
		}
		printCheckpoint(a.stdout, c, !isCommit, commit)
	}
	return nil
}

// showTranscripts prints the stored transcript of each checkpoint, as
// stored. One this clone does not have is fetched from the remote first:
// only the ref that holds it.
func (a *app) showTranscripts(w *workspace, cp *checkpoint.Repo, cps []*checkpoint.Checkpoint, remote string) error {
	for _, c := range cps {
		if c.Transcript.Unavailable {
			fmt.Fprintf(a.stderr, "checkpoint %s: no transcript stored (%s)\n", c.ID, c.Transcript.Reason)
			continue
		}
		err := cp.WriteTranscript(a.stdout, c)
		if errors.Is(err, checkpoint.ErrTranscriptNotFetched) {
			if remote == "" {
				remote = a.transcriptRoute(w.repo).TranscriptsRemote
			}
			if remote == "" {
				remote = defaultRemote(w.repo)
			}
			ref := c.TranscriptRef()
			if _, ferr := cp.FetchTranscripts(w.store, remote, checkpoint.TheseTranscripts(ref)); ferr != nil {
				return fmt.Errorf("checkpoint %s: its transcript is on %s, which this clone has not fetched: %w", c.ID, ref, ferr)
			}
			err = cp.WriteTranscript(a.stdout, c)
		}
		if err != nil {
			return fmt.Errorf("checkpoint %s: %w", c.ID, err)
		}
	}
	return nil
}

// revParse resolves a revision with git itself, so every form git accepts
// (HEAD~2, tags, a linked worktree's HEAD) works.
func (a *app) revParse(rev string) (string, bool) {
	cmd := exec.Command("git", "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	cmd.Dir = a.dir
	out, err := cmd.Output()
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(out)), true
}

// shownPaths bounds the paths listed per turn when several checkpoints are
// shown; one checkpoint shows them all.
const shownPaths = 20

// printChanges lists the paths a turn changed, git-status style (A, M, D),
// or says it changed none, and marks ? the paths it may have changed that
// the worktree's captures caught only later (snapshot.Changes.Late).
// Unknown changes (no captures) print nothing.
func printChanges(w io.Writer, c *snapshot.Changes, full bool) {
	if c == nil {
		return
	}
	if c.Empty() && len(c.Late) == 0 {
		switch {
		case c.UpTo != "":
			fmt.Fprintf(w, "    wrote none of the files of commit %s, made while it ran\n", shortID(c.UpTo))
		case c.Since != "":
			fmt.Fprintf(w, "    changed no files after commit %s, which holds what it wrote\n", shortID(c.Since))
		default:
			fmt.Fprintln(w, "    changed no files")
		}
		return
	}
	var lines []string
	for _, group := range []struct {
		mark  string
		paths []string
	}{{"A", c.Added}, {"M", c.Modified}, {"D", c.Deleted}, {"?", c.Late}} {
		for _, p := range group.paths {
			line := group.mark + " " + table.Clean(p)
			if slices.Contains(c.Shared, p) {
				line += "  (shared)"
			}
			lines = append(lines, line)
		}
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[2:], b[2:]) })
	more := 0
	if !full && len(lines) > shownPaths {
		lines, more = lines[:shownPaths], len(lines)-shownPaths
	}
	for _, l := range lines {
		fmt.Fprintf(w, "    %s\n", l)
	}
	if more > 0 {
		fmt.Fprintf(w, "    … and %d more (tether-sweep show <checkpoint> lists them all)\n", more)
	}
	if len(c.Late) > 0 {
		fmt.Fprintln(w, "    (? written as the turn began or ended, before tether looked: not counted as the turn's)")
	}
	if len(c.Shared) > 0 {
		fmt.Fprintln(w, "    (shared: another session worked in this worktree meanwhile, and this turn's agent did not write it with its file tools; a shell command of its may have)")
	}
	switch {
	case c.UpTo != "":
		fmt.Fprintf(w, "    (what commit %s, made while the turn ran, took of it; the rest continues below or in a later checkpoint)\n", shortID(c.UpTo))
	case c.Since != "":
		fmt.Fprintf(w, "    (after commit %s, which holds what the turn wrote before it)\n", shortID(c.Since))
	}
}

// printCheckpoint shows a checkpoint's turns; full prompts only when asked
// for one checkpoint, the first line of each otherwise. Shown for a commit,
// a turn that ran through several commits shows what it had made of that
// one.
func printCheckpoint(w io.Writer, c *checkpoint.Checkpoint, full bool, commit string) {
	fmt.Fprintf(w, "checkpoint %s  session %s (%s)", c.ID, shortID(c.Session), c.Agent)
	if c.Branch != "" {
		fmt.Fprintf(w, "  on %s", c.Branch)
	}
	fmt.Fprintln(w)
	if c.EndReason != "" {
		fmt.Fprintf(w, "  session ended: %s\n", c.EndReason)
	}
	for _, t := range c.Turns {
		var marks []string
		for mark, on := range map[string]bool{"interrupted": t.Interrupted, "running": t.Running, "continued": t.Continued} {
			if on {
				marks = append(marks, mark)
			}
		}
		slices.Sort(marks)
		state := ""
		if len(marks) > 0 {
			state = " [" + strings.Join(marks, ", ") + "]"
		}
		prompt := t.Prompt
		if !full {
			prompt, _, _ = strings.Cut(prompt, "\n")
			prompt = table.Cut(table.Clean(prompt), 72)
		}
		fmt.Fprintf(w, "  turn %d  %s%s\n", t.Turn, t.StartedAt.Local().Format("2006-01-02 15:04:05"), state)
		if prompt != "" {
			fmt.Fprintf(w, "    %s\n", strings.ReplaceAll(prompt, "\n", "\n    "))
		}
		changes := t.Changes
		for _, at := range t.Commits {
			if at != nil && at.UpTo == commit && commit != "" {
				changes = at
			}
		}
		printChanges(w, changes, full)
	}
	tr := c.Transcript
	switch {
	case tr.Unavailable:
		fmt.Fprintf(w, "  transcript: unavailable (%s)\n", tr.Reason)
	default:
		fmt.Fprintf(w, "  transcript: %d bytes in %s\n", tr.Bytes, strings.Join(tr.Files, ", "))
	}
	if len(c.Redactions) > 0 {
		var parts []string
		for _, rule := range slices.Sorted(maps.Keys(c.Redactions)) {
			parts = append(parts, fmt.Sprintf("%s ×%d", rule, c.Redactions[rule]))
		}
		fmt.Fprintf(w, "  redacted: %s\n", strings.Join(parts, ", "))
	}
}
