package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// postCommit is `tether-hook git post-commit`, the gate of git's
// post-commit hook. tether-sweep carries go-git and takes milliseconds just
// to start, so the gate runs it only when the sweep has work: a session to
// finalize, turns of this worktree to condense, or checkpoints to link.
// Otherwise a commit costs git one small process. The gate decides with
// the sweep's own rules (state.Decide) and, when in doubt, runs the sweep.
func postCommit(getenv func(string) string, stderr io.Writer) {
	cwd, err := os.Getwd()
	if err != nil {
		return
	}
	repo, st, err := openStore(cwd, getenv)
	if errors.Is(err, gitdir.ErrNotRepo) || errors.Is(err, gitdir.ErrBare) {
		return // not a repository of ours: nothing to do
	}
	if err != nil {
		fmt.Fprintf(stderr, "tether-hook: post-commit: %v\n", err)
		return
	}
	defer st.Close()
	if !sweepNeeded(st, repo, getenv, time.Now()) {
		return
	}
	bin := sweepBinary()
	if bin == "" {
		fmt.Fprintln(stderr, "tether-hook: post-commit: tether-sweep not found next to tether-hook or on PATH")
		return
	}
	if err := execSweep(bin, []string{"run", "--hook", "post-commit", "--quiet"}); err != nil {
		fmt.Fprintf(stderr, "tether-hook: post-commit: %v\n", err)
	}
}

// sweepNeeded says whether a post-commit sweep would do anything: finalize
// a session, condense the turns of an ended one or of this worktree, or
// link checkpoints to this commit.
func sweepNeeded(st *state.Store, repo gitdir.Repo, getenv func(string) string, now time.Time) bool {
	live, warnings, err := st.List()
	if err != nil || len(warnings) > 0 {
		return true // let the sweep say what is wrong
	}
	staleAfter := time.Duration(-1) // read from git config only when needed
	for _, s := range live {
		if s.Worktree == repo.WorkTree && s.HasPending() {
			return true
		}
		v := state.OwnerVerdict(s)
		if v.Liveness == proclive.Unknown && staleAfter < 0 {
			staleAfter = 0
			if c, ok := gitdir.ConfigValue(repo, getenv, "tether", "staleAfter"); ok {
				if staleAfter, err = state.ParseAge(c); err != nil {
					return true
				}
			}
		}
		if _, end := state.Decide(s, v, now, max(staleAfter, 0)); end {
			return true
		}
	}
	if ended, err := st.Marked(state.MarkCondense); err != nil || len(ended) > 0 {
		return true
	}
	unlinked, err := st.Marked(state.MarkUnlinked)
	if err != nil {
		return true
	}
	for _, id := range unlinked {
		s, err := st.Load(id)
		if err != nil || s.Worktree == repo.WorkTree {
			return true
		}
	}
	return false
}
