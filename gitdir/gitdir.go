package gitdir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

var (
	// ErrNotRepo: no git repository contains the path.
	ErrNotRepo = errors.New("not a git repository")
	// ErrBare: the repository has no work tree here (a bare repository, or
	// the path is inside the git dir itself).
	ErrBare = errors.New("no work tree (bare repository, or inside the git dir)")
)

// Repo locates a repository as seen from a path inside one of its work
// trees. All three are absolute and cleaned.
type Repo struct {
	GitDir    string // per-worktree git dir (HEAD, index); .git/worktrees/<name> for a linked worktree
	CommonDir string // shared git dir (objects, refs, config); equals GitDir outside linked worktrees
	WorkTree  string // top level of the work tree
}

// Find locates the repository containing path, using the process
// environment (GIT_DIR and friends).
func Find(path string) (Repo, error) { return FindEnv(path, os.Getenv) }

// FindEnv is Find with the environment supplied by the caller; a nil getenv
// means an empty environment. Relative GIT_DIR, GIT_COMMON_DIR and
// GIT_WORK_TREE values are taken relative to path, which plays the role of
// git's current directory. On ErrBare the returned Repo has GitDir and
// CommonDir set.
func FindEnv(path string, getenv func(string) string) (Repo, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Repo{}, fmt.Errorf("find git dir from %s: %w", path, err)
	}
	// Walk the physical path, as git does from getcwd: a symlinked directory
	// belongs to the repository it points into, not to the link's parents.
	cwd, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return Repo{}, fmt.Errorf("find git dir from %s: %w", path, err)
	}
	f := finder{cwd: cwd, getenv: getenv}
	if gd := getenv("GIT_DIR"); gd != "" {
		return f.explicit(resolve(cwd, gd))
	}
	return f.discover()
}

// finder carries one lookup's current directory and environment.
type finder struct {
	cwd    string
	getenv func(string) string
}

// explicit handles GIT_DIR: the git dir is given (directly or through a
// .git file), and the work tree defaults to the current directory.
func (f finder) explicit(gitDir string) (Repo, error) {
	fi, err := os.Stat(gitDir)
	if err != nil {
		return Repo{}, fmt.Errorf("GIT_DIR %s: %w", gitDir, notRepoIfMissing(err))
	}
	if !fi.IsDir() {
		target, err := readGitFile(gitDir)
		if err != nil {
			return Repo{}, err
		}
		gitDir = target
	}
	r, ok, err := f.open(gitDir, f.cwd)
	if err != nil {
		return r, err
	}
	if !ok {
		return Repo{}, fmt.Errorf("GIT_DIR %s: %w", gitDir, ErrNotRepo)
	}
	return r, nil
}

// discover walks up from the current directory to the first .git (or to a
// directory that is itself a git dir, which has no work tree).
func (f finder) discover() (Repo, error) {
	limit := ceiling(f.cwd, f.getenv("GIT_CEILING_DIRECTORIES"))
	dir := f.cwd
	for {
		dotgit := filepath.Join(dir, ".git")
		fi, err := os.Stat(dotgit)
		switch {
		case err == nil && fi.IsDir():
			// A .git directory that is not a repository is skipped, as git does.
			r, ok, err := f.open(dotgit, dir)
			if err != nil || ok {
				return r, err
			}
		case err == nil && fi.Mode().IsRegular():
			target, err := readGitFile(dotgit)
			if err != nil {
				return Repo{}, err
			}
			r, ok, err := f.open(target, dir)
			if err != nil {
				return r, err
			}
			if !ok {
				return Repo{}, fmt.Errorf("%s points to %s: %w", dotgit, target, ErrNotRepo)
			}
			return r, nil
		case err != nil && !missing(err):
			return Repo{}, fmt.Errorf("find git dir: %w", err)
		}
		// Anything else named .git (a FIFO, a device) is not a repository.
		common, _, ok, err := f.inspect(dir)
		if err != nil {
			return Repo{}, err
		}
		if ok {
			return Repo{GitDir: dir, CommonDir: common}, fmt.Errorf("%s: %w", dir, ErrBare)
		}
		parent := filepath.Dir(dir)
		if parent == dir || len(parent) <= len(limit) {
			return Repo{}, fmt.Errorf("%s: %w", f.cwd, ErrNotRepo)
		}
		dir = parent
	}
}

// open completes a Repo from a candidate git dir. defaultWorkTree is the
// work tree when nothing overrides it: the directory holding .git, or the
// current directory under GIT_DIR. ok is false when gitDir is not a git dir.
func (f finder) open(gitDir, defaultWorkTree string) (Repo, bool, error) {
	common, hasCommon, ok, err := f.inspect(gitDir)
	if err != nil || !ok {
		return Repo{}, ok, err
	}
	r := Repo{GitDir: gitDir, CommonDir: common}
	// A configured work tree is resolved like git does (it chdirs there),
	// so it compares equal to one found by walking the physical path.
	if wt := f.getenv("GIT_WORK_TREE"); wt != "" {
		r.WorkTree, err = filepath.EvalSymlinks(resolve(f.cwd, wt))
		if err != nil {
			return Repo{}, false, fmt.Errorf("GIT_WORK_TREE: %w", err)
		}
		return r, true, nil
	}
	// Like git, core.bare and core.worktree count only in a repository's
	// own config, never in the shared config seen from a linked worktree.
	if !hasCommon {
		cfg, err := readCoreConfig(filepath.Join(gitDir, "config"))
		if err != nil {
			return Repo{}, false, err
		}
		if cfg.bare {
			return r, true, fmt.Errorf("%s: %w", gitDir, ErrBare)
		}
		if cfg.worktree != "" {
			r.WorkTree, err = filepath.EvalSymlinks(resolve(gitDir, cfg.worktree))
			if err != nil {
				return Repo{}, false, fmt.Errorf("core.worktree in %s: %w", gitDir, err)
			}
			return r, true, nil
		}
	}
	r.WorkTree = defaultWorkTree
	return r, true, nil
}

// inspect reports whether dir is a git dir (a HEAD file, and a refs
// directory in its common dir) and where its common dir is. hasCommon is
// true when the common dir came from GIT_COMMON_DIR or a commondir file.
func (f finder) inspect(dir string) (common string, hasCommon, ok bool, err error) {
	fi, err := os.Stat(filepath.Join(dir, "HEAD"))
	if err != nil {
		if missing(err) {
			return "", false, false, nil
		}
		return "", false, false, fmt.Errorf("inspect %s: %w", dir, err)
	}
	if fi.IsDir() {
		return "", false, false, nil
	}
	common = dir
	if env := f.getenv("GIT_COMMON_DIR"); env != "" {
		common, hasCommon = resolve(f.cwd, env), true
	} else {
		data, err := readSmall(filepath.Join(dir, "commondir"), maxSmallFile)
		switch {
		case err == nil:
			p, err := parseCommonDir(data)
			if err != nil {
				return "", false, false, fmt.Errorf("%s: %w", filepath.Join(dir, "commondir"), err)
			}
			common, hasCommon = resolve(dir, p), true
		case !missing(err):
			return "", false, false, err
		}
	}
	fi, err = os.Stat(filepath.Join(common, "refs"))
	if err != nil {
		if missing(err) {
			return "", false, false, nil
		}
		return "", false, false, fmt.Errorf("inspect %s: %w", common, err)
	}
	return common, hasCommon, fi.IsDir(), nil
}

// readGitFile reads a .git file and returns the git dir it names, resolved
// against the file's directory.
func readGitFile(path string) (string, error) {
	data, err := readSmall(path, maxSmallFile)
	if err != nil {
		return "", err
	}
	p, err := parseGitFile(data)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return resolve(filepath.Dir(path), p), nil
}

func readCoreConfig(path string) (coreConfig, error) {
	data, err := readSmall(path, maxConfigFile)
	if err != nil {
		if missing(err) {
			return coreConfig{}, nil
		}
		return coreConfig{}, err
	}
	cfg, err := parseCoreConfig(data)
	if err != nil {
		return coreConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ceiling returns the longest GIT_CEILING_DIRECTORIES entry that is a proper
// ancestor of cwd ("" if none): the walk never looks at it or above it.
func ceiling(cwd, list string) string {
	best := ""
	for _, c := range filepath.SplitList(list) {
		if c == "" || !filepath.IsAbs(c) {
			continue
		}
		c = filepath.Clean(c)
		if r, err := filepath.EvalSymlinks(c); err == nil {
			c = r
		}
		if len(c) > len(best) && isProperAncestor(c, cwd) {
			best = c
		}
	}
	return best
}

func isProperAncestor(dir, path string) bool {
	if len(path) <= len(dir) || !strings.HasPrefix(path, dir) {
		return false
	}
	return strings.HasSuffix(dir, string(filepath.Separator)) || path[len(dir)] == filepath.Separator
}

// resolve makes p absolute against base (git resolves gitdir: and
// commondir against the directory holding them).
func resolve(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

const (
	maxSmallFile  = 64 << 10 // .git files, commondir, HEAD, loose refs
	maxConfigFile = 4 << 20
)

// readSmall reads a file expected to be small, refusing oversized ones so a
// stray huge file cannot stall the hook.
func readSmall(path string, max int64) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("read %s: larger than %d bytes", path, max)
	}
	return data, nil
}

// openRegular opens a file for reading, refusing anything but a regular
// file (see readFlags).
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, readFlags, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("open %s: not a regular file", path)
		}
		return nil, err
	}
	return f, nil
}

// missing reports an error meaning "no such file here", including a path
// component that is a file (ENOTDIR).
func missing(err error) bool {
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	return errors.Is(err, syscall.ENOTDIR)
}

func notRepoIfMissing(err error) error {
	if missing(err) {
		return fmt.Errorf("%w: %w", ErrNotRepo, err)
	}
	return err
}
