package install

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Install runs git itself: it is not on a hot path, and git is the
// authority on where it looks for hooks (core.hooksPath, absolute or
// relative, linked worktrees) and on how its config files are edited.

// rewriteRef is the notes ref git must carry across amend and rebase.
const rewriteRef = "refs/notes/tether"

// repo is where install works: the worktree, the common dir shared by all
// worktrees, and the directory git runs hooks from.
type repo struct {
	top, common, hooks string
}

func findRepo(dir string) (repo, error) {
	if dir == "" {
		return repo{}, errors.New("no directory given")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return repo{}, fmt.Errorf("find repository: %w", err)
	}
	out, err := git(dir, "rev-parse", "--show-toplevel", "--git-common-dir", "--git-path", "hooks")
	if err != nil {
		return repo{}, fmt.Errorf("find repository (install needs a git working tree): %w", err)
	}
	lines := strings.Split(strings.TrimRight(out, "\r\n"), "\n")
	if len(lines) != 3 {
		return repo{}, fmt.Errorf("find repository: unexpected output from git rev-parse: %q", out)
	}
	abs := func(p string) string {
		p = strings.TrimRight(p, "\r")
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return filepath.Clean(p)
	}
	return repo{top: abs(lines[0]), common: abs(lines[1]), hooks: abs(lines[2])}, nil
}

// git runs git in dir and returns its stdout.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			return stdout.String(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, msg)
		}
		return stdout.String(), fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return stdout.String(), nil
}

// exitCode is git's exit status, or -1 when git did not run to completion.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// configValues lists a multi-valued key; none is not an error.
func (r repo) configValues(key string, scope ...string) ([]string, error) {
	out, err := git(r.top, append(append([]string{"config"}, scope...), "--get-all", key)...)
	if exitCode(err) == 1 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// hasRewriteRef tells whether git will carry tether's notes across amend
// and rebase, from whichever config file says so.
func (r repo) hasRewriteRef() (bool, error) {
	vals, err := r.configValues("notes.rewriteRef")
	return slices.Contains(vals, rewriteRef), err
}

// addRewriteRef adds our value to notes.rewriteRef, which is multi-valued:
// the user's own values stay. It reports whether it changed anything.
func (r repo) addRewriteRef() (bool, error) {
	ok, err := r.hasRewriteRef()
	if err != nil || ok {
		return false, err
	}
	if _, err := git(r.top, "config", "--local", "--add", "notes.rewriteRef", rewriteRef); err != nil {
		return false, err
	}
	return true, nil
}

// removeRewriteRef removes exactly our value from the repository's config,
// and the [notes] section if that leaves it empty, so the file reads as it
// did before install.
func (r repo) removeRewriteRef() (bool, error) {
	vals, err := r.configValues("notes.rewriteRef", "--local")
	if err != nil || !slices.Contains(vals, rewriteRef) {
		return false, err
	}
	pattern := "^" + strings.ReplaceAll(rewriteRef, "/", `\/`) + "$"
	if _, err := git(r.top, "config", "--local", "--unset-all", "notes.rewriteRef", pattern); err != nil {
		return false, err
	}
	// Older gits leave an empty [notes] header behind, newer ones do not;
	// either way an empty section can go, and "no such section" is fine.
	if _, err := git(r.top, "config", "--local", "--get-regexp", `^notes\.`); exitCode(err) == 1 {
		git(r.top, "config", "--local", "--remove-section", "notes")
	}
	return true, nil
}
