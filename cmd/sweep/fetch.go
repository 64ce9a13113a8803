package main

import (
	"fmt"

	"github.com/tetherdev/tether/checkpoint"
)

// cmdFetch brings a remote's checkpoints branch and notes into their
// tracking refs and merges them into ours.
func cmdFetch(a *app, args []string) error {
	fs := a.newFlags("fetch")
	quiet := fs.Bool("quiet", false, "print nothing unless something went wrong")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("fetch takes at most one REMOTE")
	}
	w, cp, err := a.openCheckpoints()
	if err != nil {
		return err
	}
	remote := fs.Arg(0)
	if remote == "" {
		remote = defaultRemote(w.repo)
	}
	res, err := cp.Fetch(w.store, remote)
	warnings := conflictWarnings(res.Conflicts)
	if *asJSON {
		branch, notes := checkpoint.TrackingRefs(remote)
		if jerr := writeJSON(a.stdout, struct {
			checkpoint.FetchResult
			TrackingBranch string   `json:"tracking_branch"`
			TrackingNotes  string   `json:"tracking_notes"`
			Warnings       []string `json:"warnings"`
		}{res, branch.String(), notes.String(), nonNil(warnings)}); jerr != nil && err == nil {
			err = jerr
		}
	} else if !*quiet && err == nil {
		if res.Empty {
			fmt.Fprintf(a.stdout, "nothing to fetch: %s has no checkpoints\n", remote)
		} else {
			fmt.Fprintf(a.stdout, "fetched checkpoints from %s: branch %s, notes %s\n", remote, res.Branch, res.Notes)
		}
	}
	printWarnings(a, warnings, *quiet)
	return err
}
