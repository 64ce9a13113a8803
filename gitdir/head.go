package gitdir

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrReftable: the repository keeps its refs in the reftable format, which
// Head does not read (the caller can fall back to running git).
var ErrReftable = errors.New("reftable ref storage is not supported")

// maxSymrefDepth bounds symbolic-ref chains (git allows 5).
const maxSymrefDepth = 5

// Head reads HEAD of the work tree whose git dir is gitDir. On a branch it
// returns the commit and the branch name ("main" for refs/heads/main, the
// full name for a ref outside refs/heads; through a chain of symbolic refs,
// the last one, as `git symbolic-ref` does); detached, the commit and "";
// on an unborn branch, "" and the branch name.
func Head(gitDir, commonDir string) (commit, branch string, err error) {
	path := filepath.Join(gitDir, "HEAD")
	data, err := readSmall(path, maxSmallFile)
	if err != nil {
		return "", "", fmt.Errorf("read HEAD: %w", err)
	}
	// A reftable repository keeps this placeholder in HEAD for old gits.
	if string(bytes.TrimSpace(data)) == "ref: refs/heads/.invalid" {
		return "", "", fmt.Errorf("read HEAD in %s: %w", gitDir, ErrReftable)
	}
	target, hash, err := parseRefFile(data)
	if err != nil {
		return "", "", fmt.Errorf("read HEAD: %s: %w", path, err)
	}
	if target == "" {
		return hash, "", nil
	}
	name, commit, err := resolveRef(gitDir, commonDir, target)
	if err != nil {
		return "", "", fmt.Errorf("read HEAD: %w", err)
	}
	return commit, strings.TrimPrefix(name, "refs/heads/"), nil
}

// Ref reads the object ID ref name (a full name, refs/...) points to in
// r, through symbolic refs, as git would: the loose file first, then
// packed-refs; "" when it exists nowhere. A repository that keeps its refs
// in the reftable format gives ErrReftable (the caller can run git).
func Ref(r Repo, name string) (string, error) {
	if err := checkRefName(name); err != nil {
		return "", err
	}
	if fi, err := os.Stat(filepath.Join(r.CommonDir, "reftable")); err == nil && fi.IsDir() {
		return "", fmt.Errorf("read %s in %s: %w", name, r.CommonDir, ErrReftable)
	}
	_, hash, err := resolveRef(r.GitDir, r.CommonDir, name)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	return hash, nil
}

// resolveRef follows a ref (and symbolic refs it points to) to an object
// ID: the loose file first, then packed-refs. It returns the last ref of
// the chain and its object ID, "" if the ref exists nowhere (an unborn
// branch).
func resolveRef(gitDir, commonDir, name string) (last, hash string, err error) {
	for range maxSymrefDepth {
		dir := commonDir
		if perWorktree(name) {
			dir = gitDir
		}
		target, hash, err := readRef(filepath.Join(dir, filepath.FromSlash(name)))
		switch {
		case err == nil && target == "":
			return name, hash, nil
		case err == nil:
			name = target
			continue
		case !looseAbsent(err, filepath.Join(dir, filepath.FromSlash(name))):
			return "", "", err
		}
		f, err := openRegular(filepath.Join(commonDir, "packed-refs"))
		if err != nil {
			if missing(err) {
				return name, "", nil
			}
			return "", "", err
		}
		hash, _, err = lookupPackedRef(f, name)
		f.Close()
		if err != nil {
			return "", "", fmt.Errorf("%s: %w", f.Name(), err)
		}
		return name, hash, nil
	}
	return "", "", fmt.Errorf("ref %s: symbolic refs nested deeper than %d", name, maxSymrefDepth)
}

// perWorktree names the refs each worktree keeps in its own git dir.
func perWorktree(name string) bool {
	for _, p := range []string{"refs/bisect/", "refs/worktree/", "refs/rewritten/"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func readRef(path string) (target, hash string, err error) {
	data, err := readSmall(path, maxSmallFile)
	if err != nil {
		return "", "", err
	}
	target, hash, err = parseRefFile(data)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", path, err)
	}
	return target, hash, nil
}

// looseAbsent reports whether a loose ref read failed because there is no
// loose ref: no file, or a directory in its place (refs/heads/a when
// refs/heads/a/b exists and a is packed).
func looseAbsent(err error, path string) bool {
	if missing(err) {
		return true
	}
	fi, serr := os.Stat(path)
	return serr == nil && fi.IsDir()
}
