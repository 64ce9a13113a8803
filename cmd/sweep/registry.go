package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/state"
)

// registry is the directory of the user's registry of stores, or "" when
// there is no place for it (no HOME).
func (a *app) registry() string {
	dir, err := state.RegistryDir(a.getenv)
	if err != nil {
		return ""
	}
	return dir
}

// register adds w's store to the registry once it holds anything (install
// and a session's start register it too; a store from before the registry
// comes in at its first status): a stat when it is there.
func (a *app) register(w *workspace) {
	if _, err := os.Stat(w.store.Dir()); err != nil {
		return
	}
	if reg := a.registry(); reg != "" {
		_ = state.Register(reg, w.repo.CommonDir) // a registry that cannot be written hides nothing of this store
	}
}

// registerRepo adds the working directory's repository to the registry,
// as install sets tether up there.
func (a *app) registerRepo() {
	w, err := a.open()
	if err != nil {
		return
	}
	if reg := a.registry(); reg != "" {
		if err := state.Register(reg, w.repo.CommonDir); err != nil {
			fmt.Fprintf(a.stderr, "note: status --all-repos will not list this repository until its first session: %v\n", err)
		}
	}
}

// registered opens the store of every repository in the registry but
// skip's (nil: none). A store whose repository is no longer there is
// taken out of the registry; dropped says which, one line each.
func (a *app) registered(skip *workspace) []*workspace {
	ws, _ := a.registeredStores(skip)
	return ws
}

// registeredStores is registered, with the notes on the stores dropped.
func (a *app) registeredStores(skip *workspace) (ws []*workspace, dropped []string) {
	reg := a.registry()
	if reg == "" {
		return nil, nil
	}
	dirs, err := state.Registered(reg)
	if err != nil {
		return nil, []string{err.Error()}
	}
	for _, dir := range dirs {
		if skip != nil && sameDir(dir, skip.repo.CommonDir) {
			continue
		}
		w, err := workspaceAt(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				_ = state.Unregister(reg, dir)
				dropped = append(dropped, fmt.Sprintf("dropped %s from the repositories tether knows: it is no longer there", a.repoName(dir)))
				continue
			}
			dropped = append(dropped, fmt.Sprintf("%s: %v", a.repoName(dir), err))
			continue
		}
		ws = append(ws, w)
	}
	return ws, dropped
}

// workspaceAt opens the store of the repository whose git common dir is
// dir: through its main work tree when it has one, else (a bare
// repository with linked work trees) the common dir alone. An error
// wrapping fs.ErrNotExist: the repository is gone.
func workspaceAt(dir string) (*workspace, error) {
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		return nil, err
	}
	repo := gitdir.Repo{GitDir: dir, CommonDir: dir}
	if filepath.Base(dir) == ".git" {
		if r, err := gitdir.Find(filepath.Dir(dir)); err == nil && sameDir(r.CommonDir, dir) {
			repo = r
		}
	}
	st, err := state.Open(repo.CommonDir, state.Options{})
	if err != nil {
		return nil, err
	}
	return &workspace{repo: repo, store: st}, nil
}

// repoPath is the repository of a git common dir: its main work tree, or
// the common dir itself (bare).
func repoPath(commonDir string) string {
	if filepath.Base(commonDir) == ".git" {
		return filepath.Dir(commonDir)
	}
	return commonDir
}

// repoName is how status names the repository of a git common dir: its
// repoPath, with the home directory as ~.
func (a *app) repoName(commonDir string) string { return a.tilde(repoPath(commonDir)) }

// tilde writes a path under the home directory with ~.
func (a *app) tilde(p string) string {
	if home := a.getenv("HOME"); filepath.IsAbs(home) {
		if rel, err := filepath.Rel(home, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.Join("~", rel)
		}
	}
	return p
}

// sameDir tells whether two paths name the same directory.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
