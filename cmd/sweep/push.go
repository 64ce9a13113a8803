package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/state"
)

func (a *app) pushCommand() *cobra.Command {
	var (
		hook                   string
		quiet, asJSON, verbose bool
	)
	c := &cobra.Command{
		Use:   "push [REMOTE]",
		Short: "share checkpoints and notes with a remote",
		Long: `Push the checkpoints, the notes that link them to commits and the transcripts
this clone wrote to a remote (the current branch's, else origin). When the
remote has moved, fetch and merge its checkpoints and notes first, as a union:
nobody's checkpoints are lost. A remote that still has the branch an earlier
tether kept gets it migrated, then deleted.

Transcripts go where git config says: tether.transcriptsRemote NAME sends
them to that remote instead (the other gets the checkpoints and notes only),
and tether.pushTranscripts false keeps them in this clone. The pre-push hook
follows the same settings.`,
		Example: `  tether-sweep push
  tether-sweep push upstream
  git config tether.transcriptsRemote private && tether-sweep push`,
		GroupID: "checkpoints",
		Args:    cobra.ArbitraryArgs, // checked below: the pre-push hook passes two
		RunE: func(_ *cobra.Command, args []string) error {
			return a.pushCmd(args, hook, quiet, asJSON, verbose)
		},
	}
	fs := c.Flags()
	fs.StringVar(&hook, "hook", "", "the git hook running this push (pre-push): warn instead of failing")
	fs.MarkHidden("hook") // for the git hook tether installs, not for people
	fs.BoolVar(&quiet, "quiet", false, "print nothing unless something went wrong (for git hooks)")
	fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
	fs.BoolVarP(&verbose, "verbose", "v", false, "when git fails, print all it said")
	return c
}

// pushCmd runs push. Run by the pre-push hook (--hook pre-push, git's
// arguments after the flags and the refs being pushed on stdin), it never
// fails the user's push: every failure of its own is a warning and exit
// status 0.
func (a *app) pushCmd(args []string, hook string, quiet, asJSON, verbose bool) error {
	maxArgs := 1
	switch hook {
	case "":
	case "pre-push":
		maxArgs = 2 // git passes the remote's name and its URL
		// Git writes the refs it is pushing on our stdin; they are not
		// ours to act on, but reading them lets git finish writing.
		if _, err := io.Copy(io.Discard, a.stdin); err != nil {
			fmt.Fprintf(a.stderr, "tether-sweep: warning: read pre-push input: %v\n", err)
		}
	default:
		return usagef("--hook: unknown hook %q (want pre-push)", hook)
	}
	if len(args) > maxArgs {
		return usagef("push takes at most one REMOTE")
	}
	remote := ""
	if len(args) > 0 {
		remote = args[0]
	}
	err := a.push(remote, quiet, asJSON, verbose)
	if err != nil && hook != "" {
		fmt.Fprintf(a.stderr, "tether-sweep: warning: checkpoints not pushed: %v\n", err)
		return nil
	}
	return err
}

func (a *app) push(remote string, quiet, asJSON, verbose bool) error {
	w, cp, err := a.openCheckpoints()
	if err != nil {
		return err
	}
	if remote == "" {
		remote = defaultRemote(w.repo)
	}
	res, err := cp.Push(w.store, remote, a.transcriptRoute(w.repo))
	a.gitSaid(w.store, "push", remote, err, verbose)
	var warnings []string
	if res.Merge != nil {
		warnings = conflictWarnings(res.Merge.Conflicts)
	}
	if asJSON {
		if jerr := writeJSON(a.stdout, struct {
			checkpoint.PushResult
			Warnings []string `json:"warnings"`
		}{res, nonNil(warnings)}); jerr != nil && err == nil {
			err = jerr
		}
	} else if !quiet {
		printPush(a, res)
	}
	printWarnings(a, warnings, quiet)
	return err
}

// gitSaid keeps all git said when it failed a push or fetch: in the
// store's log, and on stderr with --verbose. The error itself stays one
// line (checkpoint.GitError).
func (a *app) gitSaid(st *state.Store, op, remote string, err error, verbose bool) {
	var ge *checkpoint.GitError
	if !errors.As(err, &ge) || strings.TrimSpace(ge.Stderr) == "" {
		return
	}
	st.Logger().Warn(op+" failed", "remote", remote, state.LogKeyError, err.Error(), "git_stderr", ge.Stderr)
	if verbose {
		fmt.Fprintf(a.stderr, "git %s said:\n%s\n", ge.Command, indent(ge.Stderr))
	}
}

func printPush(a *app, res checkpoint.PushResult) {
	if res.Nothing {
		fmt.Fprintln(a.stdout, "nothing to push: no checkpoints yet")
		return
	}
	if res.Merge != nil {
		fmt.Fprintf(a.stdout, "%s had moved: fetched and merged it (checkpoints %s, notes %s)\n", res.Remote, res.Merge.Checkpoints, res.Merge.Notes)
	}
	for _, s := range res.Refs {
		fmt.Fprintf(a.stdout, "%s -> %s: %s\n", strings.TrimPrefix(s.To, "refs/"), res.Remote, strings.Trim(s.Summary, "[]"))
	}
	for _, s := range res.TranscriptRefs {
		fmt.Fprintf(a.stdout, "%s -> %s: %s\n", strings.TrimPrefix(s.To, "refs/"), res.TranscriptsRemote, strings.Trim(s.Summary, "[]"))
	}
	if res.TranscriptsKept {
		fmt.Fprintln(a.stdout, "transcripts kept in this clone (git config tether.pushTranscripts false)")
	}
}

// openCheckpoints opens the workspace and its checkpoints repository.
func (a *app) openCheckpoints() (*workspace, *checkpoint.Repo, error) {
	w, err := a.open()
	if err != nil {
		return nil, nil, err
	}
	cp, err := checkpoint.Open(w.repo.CommonDir)
	if err != nil {
		return nil, nil, err
	}
	return w, cp, nil
}

// defaultRemote is the remote of the current branch's upstream, else
// "origin", as git push and git fetch choose without arguments.
func defaultRemote(repo gitdir.Repo) string {
	_, branch, err := gitdir.Head(repo.GitDir, repo.CommonDir)
	if err != nil || branch == "" || strings.HasPrefix(branch, "refs/") {
		return "origin"
	}
	out, err := exec.Command("git", "--git-dir="+repo.CommonDir, "config", "--get", "branch."+branch+".remote").Output()
	if remote := strings.TrimSpace(string(out)); err == nil && remote != "" && remote != "." {
		return remote
	}
	return "origin"
}

// conflictWarnings turns merge conflicts into warnings.
func conflictWarnings(conflicts []checkpoint.Conflict) []string {
	var warnings []string
	for _, c := range conflicts {
		warnings = append(warnings, c.String())
	}
	return warnings
}

// printWarnings writes warnings to stderr, naming the tool when quiet
// (inside a git hook's output).
func printWarnings(a *app, warnings []string, quiet bool) {
	prefix := "warning: "
	if quiet {
		prefix = "tether-sweep: warning: "
	}
	for _, w := range warnings {
		fmt.Fprintf(a.stderr, "%s%s\n", prefix, w)
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// nonNil makes an empty list print as [] in JSON.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
