package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/internal/detach"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// postCommit is `tether-hook git post-commit`, the gate of git's
// post-commit hook. tether-sweep carries go-git and takes milliseconds just
// to start, so the gate runs it only when the sweep has work: a session to
// finalize, turns of this worktree to condense, or checkpoints to link.
// Otherwise a commit costs git one small process. The gate decides with
// the sweep's own rules (state.Decide) and, when in doubt, runs the sweep.
// The hook script installed in front of it has already looked for the
// store's active flag (state.ActiveFlag), so a store with nothing live
// costs a commit no process at all.
//
// However much is pending, the commit waits at most tether.commitWait (git
// config; commitWait by default) for the gate and the sweep together: a
// sweep still running then goes on by itself, detached, and the commit
// returns.
func postCommit(getenv func(string) string, stderr io.Writer) {
	start := time.Now()
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
	wait := commitWait
	if v, ok := gitdir.ConfigValue(repo, getenv, "tether", "commitWait"); ok {
		if wait, err = time.ParseDuration(v); err != nil || wait < 0 {
			fmt.Fprintf(stderr, "tether-hook: post-commit: git config tether.commitWait: %q is not a duration like 1s; waiting %v\n", v, commitWait)
			wait = commitWait
		}
	}
	deadline := start.Add(wait)
	// The gate's own look grows with the live sessions: past the deadline,
	// in doubt, the sweep starts and the commit returns.
	needed := make(chan bool, 1)
	go func() { needed <- sweepNeeded(st, repo, getenv, start) }()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case n := <-needed:
		if !n {
			return
		}
	case <-timer.C:
	}
	bin := sweepBinary()
	if bin == "" {
		fmt.Fprintln(stderr, "tether-hook: post-commit: tether-sweep not found next to tether-hook or on PATH")
		return
	}
	cmd := exec.Command(bin, "run", "--hook", "post-commit", "--quiet")
	cmd.Dir = repo.WorkTree
	if err := runBounded(cmd, time.Until(deadline), stderr); errors.Is(err, errDetached) {
		st.Logger().Info(sweepDetachedMsg, "pid", cmd.Process.Pid, "waited", wait.String())
	} else if err != nil {
		fmt.Fprintf(stderr, "tether-hook: post-commit: %v\n", err)
	}
}

// commitWait bounds how long a commit waits for its post-commit sweep.
const commitWait = time.Second

// sweepDetachedMsg is the log line of a post-commit sweep that outlived the
// commit's wait (tests wait for such sweeps before cleaning up).
const sweepDetachedMsg = "post-commit: sweep goes on in the background"

// errDetached: the command outlived the wait and goes on by itself.
var errDetached = errors.New("still running")

// runBounded starts cmd detached (a session of its own, none of git's
// descriptors), its output going to an unlinked temporary file, and waits
// for it at most wait. Done in time, its output is copied to stderr, where
// git shows it. Still running, it is left to finish on its own (errDetached):
// what it writes later goes to the file it holds, which vanishes with it,
// and what matters of it is in tether's log anyway.
func runBounded(cmd *exec.Cmd, wait time.Duration, stderr io.Writer) error {
	out, err := os.CreateTemp("", "tether-post-commit-")
	if err != nil {
		return fmt.Errorf("run %s: %w", cmd.Path, err)
	}
	defer out.Close()
	os.Remove(out.Name()) // where the OS allows it while open: nothing left behind
	cmd.Stdout, cmd.Stderr = out, out
	if err := detach.Start(cmd); err != nil {
		os.Remove(out.Name())
		return fmt.Errorf("run %s: %w", cmd.Path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(max(wait, 0))
	defer timer.Stop()
	select {
	case err = <-done:
	case <-timer.C:
		return errDetached
	}
	os.Remove(out.Name())
	if _, serr := out.Seek(0, io.SeekStart); serr == nil {
		_, _ = io.Copy(stderr, out)
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", cmd.Path, err)
	}
	return nil
}

// sweepNeeded says whether a post-commit sweep would do anything: finalize
// a session, condense the turns of an ended one or of this worktree, or
// link checkpoints to this commit.
func sweepNeeded(st *state.Store, repo gitdir.Repo, getenv func(string) string, now time.Time) bool {
	if inheriting(st, repo) {
		return true
	}
	live, warnings, err := st.List()
	if err != nil || len(warnings) > 0 {
		return true // let the sweep say what is wrong
	}
	staleAfter := time.Duration(-1) // read from git config only when needed
	for _, s := range live {
		// A turn running here made the commit, or saw it made: the sweep
		// counts it up to the commit, condensed already or not.
		if s.Worktree == repo.WorkTree && (s.HasPending() || s.TurnRunning()) {
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
	if spooled, err := st.Spooled(); err != nil || len(spooled) > 0 {
		return true // events a hook spooled, for the sweep to apply
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

// inheriting says whether the commit may carry linked commits' change:
// git cherry-pick made it, or a merge --squash left word that its commit
// was to come.
func inheriting(st *state.Store, repo gitdir.Repo) bool {
	_, err := os.Stat(filepath.Join(st.Dir(), filepath.FromSlash(state.SquashPending)))
	return err == nil || gitdir.CherryPicking(repo)
}
