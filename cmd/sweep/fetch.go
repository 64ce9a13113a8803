package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/sweep"
)

func (a *app) fetchCommand() *cobra.Command {
	var quiet, asJSON, verbose, withGitHub bool
	var transcripts string
	c := &cobra.Command{
		Use:   "fetch [REMOTE]",
		Short: "fetch a remote's checkpoints and notes and merge them",
		Long: `Fetch a remote's checkpoints and notes (the current branch's remote, else
origin) into tracking refs, and merge them into ours as a union. Transcripts
stay on the remote unless asked for: --transcripts fetches this month's and
last month's, --transcripts=all every month's (and those of the branch an
earlier tether kept), --transcripts=2026-05 one month's. show --transcript
fetches the one it shows. With git config tether.transcriptsRemote NAME,
transcripts are fetched from that remote.

Then the commits the remote's branches gained since the last look (a git
fetch, a pull) that carry the change of linked commits inherit their links:
a squash merge, a rebase merge. With --github (or git config tether.github),
GitHub is asked about those content did not match: a merged pull request's
commits give their links to its merge commit.`,
		Example: `  tether-sweep fetch
  tether-sweep fetch --transcripts
  tether-sweep fetch upstream --json`,
		GroupID: "checkpoints",
		Args:    maxArgs(1, "fetch takes at most one REMOTE"),
		RunE: func(c *cobra.Command, args []string) error {
			opts, err := transcriptsFlag(transcripts, time.Now())
			if err != nil {
				return err
			}
			var github *bool // unset: git config decides
			if c.Flags().Changed("github") {
				github = &withGitHub
			}
			return a.fetch(args, opts, quiet, asJSON, verbose, github)
		},
	}
	c.Flags().BoolVar(&withGitHub, "github", false, "ask GitHub which pull requests the fetched commits merged (git config tether.github)")
	c.Flags().BoolVar(&quiet, "quiet", false, "print nothing unless something went wrong")
	c.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	c.Flags().StringVar(&transcripts, "transcripts", "", "also fetch transcripts: recent (this month and the last), all, or a month (2026-05)")
	c.Flags().Lookup("transcripts").NoOptDefVal = "recent"
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "when git fails, print all it said")
	return c
}

// fetch brings a remote's checkpoints and notes, and the transcripts opts
// select, into their tracking refs and merges them into ours.
func (a *app) fetch(args []string, opts checkpoint.FetchOptions, quiet, asJSON, verbose bool, withGitHub *bool) error {
	w, cp, err := a.openCheckpoints()
	if err != nil {
		return err
	}
	remote := ""
	if len(args) > 0 {
		remote = args[0]
	}
	if remote == "" {
		remote = defaultRemote(w.repo)
	}
	opts.TranscriptsRemote = a.transcriptRoute(w.repo).TranscriptsRemote
	res, err := cp.Fetch(w.store, remote, opts)
	a.gitSaid(w.store, "fetch", remote, err, verbose)
	warnings := conflictWarnings(res.Conflicts)
	if asJSON {
		if jerr := writeJSON(a.stdout, struct {
			checkpoint.FetchResult
			TrackingCheckpoints string   `json:"tracking_checkpoints"`
			TrackingNotes       string   `json:"tracking_notes"`
			Warnings            []string `json:"warnings"`
		}{res, checkpoint.Tracking(remote, checkpoint.CheckpointsRef).String(), checkpoint.Tracking(remote, checkpoint.NotesRef).String(), nonNil(warnings)}); jerr != nil && err == nil {
			err = jerr
		}
	} else if !quiet && err == nil {
		if res.Empty {
			fmt.Fprintf(a.stdout, "nothing to fetch: %s has no checkpoints\n", remote)
		} else {
			fmt.Fprintf(a.stdout, "fetched checkpoints from %s: checkpoints %s, notes %s", remote, res.Checkpoints, res.Notes)
			if n := len(res.Transcripts); n > 0 {
				fmt.Fprintf(a.stdout, ", transcripts of %d ref(s)", n)
				if res.TranscriptsRemote != "" {
					fmt.Fprintf(a.stdout, " from %s", res.TranscriptsRemote)
				}
			}
			fmt.Fprintln(a.stdout)
		}
	}
	printWarnings(a, warnings, quiet)
	if err != nil {
		return err
	}
	inh := sweep.InheritOptions{Remote: remote, Replay: "rebase"}
	if withGitHub != nil && *withGitHub || withGitHub == nil && configBool(a.gitConfig(w.repo, "github")) {
		inh.GitHub = a.githubOptions()
	}
	return a.inherit(w, inh, quiet || asJSON)
}

// transcriptsFlag turns --transcripts into fetch options.
func transcriptsFlag(which string, now time.Time) (checkpoint.FetchOptions, error) {
	switch which {
	case "":
		return checkpoint.FetchOptions{}, nil
	case "recent":
		return checkpoint.FetchOptions{Transcripts: checkpoint.RecentTranscripts(now)}, nil
	case "all":
		return checkpoint.FetchOptions{Transcripts: checkpoint.AllTranscripts}, nil
	}
	month, err := checkpoint.Generation(which)
	if err != nil {
		return checkpoint.FetchOptions{}, usagef("--transcripts: want recent, all or a month like 2026-05, not %q", which)
	}
	return checkpoint.FetchOptions{Transcripts: month}, nil
}
