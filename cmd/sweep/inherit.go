package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/state"
	"github.com/tetherdev/tether/sweep"
)

// zeroCommit is git's name for no commit (post-checkout's previous HEAD
// in a fresh clone).
const zeroCommit = "0000000000000000000000000000000000000000"

// inheritHook is `tether-sweep run --hook post-merge|post-rewrite|
// post-checkout`, run by the git hooks tether installs: the commits that
// arrived (a pull, a rebase, a checkout) inherit the links of linked
// commits whose change they carry. A merge --squash only leaves word for
// the commit to come (state.SquashPending). Problems are said on stderr;
// the git command is never failed.
func (a *app) inheritHook(hook string, args []string, quiet bool) error {
	w, err := a.open()
	if err != nil {
		return err
	}
	opts := sweep.InheritOptions{Replay: "rebase"}
	switch hook {
	case "post-merge":
		if len(args) > 0 && args[0] == "1" {
			return touch(filepath.Join(w.store.Dir(), filepath.FromSlash(state.SquashPending)))
		}
		opts.Revs = []string{"HEAD", "^ORIG_HEAD"}
		if _, ok := a.revParse("ORIG_HEAD"); !ok {
			opts.Revs = []string{"HEAD^!"}
		}
	case "post-checkout":
		if len(args) != 3 || args[2] != "1" || args[0] == args[1] {
			return nil // a file checkout, or nothing moved
		}
		opts.Revs = []string{args[1]}
		if args[0] != zeroCommit {
			opts.Revs = append(opts.Revs, "^"+args[0])
		}
	case "post-rewrite":
		if len(args) == 0 || args[0] != "amend" && args[0] != "rebase" {
			return usagef("--hook post-rewrite: want amend or rebase, as git passes")
		}
		opts.Rewritten, opts.Rewrite = a.stdin, args[0]
	default:
		return usagef("--hook: unknown hook %q (want post-commit, post-merge, post-rewrite or post-checkout)", hook)
	}
	return a.inherit(w, opts, quiet)
}

// inheritCommit is the post-commit hook's part: a commit made by git
// cherry-pick (gitdir.CherryPicking) or after a merge --squash (state.SquashPending) inherits the links of the commits
// whose change it carries.
func (a *app) inheritCommit(w *workspace, quiet bool) {
	pending := filepath.Join(w.store.Dir(), filepath.FromSlash(state.SquashPending))
	if _, err := os.Stat(pending); err != nil && !gitdir.CherryPicking(w.repo) {
		return
	}
	if err := a.inherit(w, sweep.InheritOptions{Revs: []string{"HEAD^!"}, Replay: "cherry-pick"}, quiet); err != nil {
		fmt.Fprintf(a.stderr, "tether-sweep: %v\n", err)
		return
	}
	if err := os.Remove(pending); err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(a.stderr, "tether-sweep: %v\n", err)
	}
}

// inherit runs sweep.Inherit and says what it did, unless quiet.
func (a *app) inherit(w *workspace, opts sweep.InheritOptions, quiet bool) error {
	found, warnings, err := sweep.Inherit(w.repo, w.store, opts)
	if !quiet {
		for _, f := range found {
			fmt.Fprintf(a.stdout, "%s inherits %s (%s)\n", shortID(f.Commit), count(len(f.IDs), "checkpoint", "checkpoints"), f.Via)
		}
	}
	for _, warn := range warnings {
		fmt.Fprintf(a.stderr, "tether-sweep: warning: %s\n", warn)
	}
	if err != nil {
		return fmt.Errorf("links of the commits that arrived: %w", err)
	}
	return nil
}

// touch creates an empty file, and its directory, if missing.
func touch(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}
