package state

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// tree is the store's directory as an os.Root whose subdirectories
// (sessions/, ended/, locks/, the marks...) are held open once used. An
// os.Root resolves a path one component at a time, so every file reached
// through "sessions/<id>.json" cost an open and a close of sessions/ as
// well: two of every three opens of a sweep that finalizes and condenses
// 30 sessions. The store never removes its subdirectories, so a held one
// stays the one at its name; one not there yet is opened when it first is.
//
// Paths keep the form they always had (relative to the store, with the
// OS separator); what is not in a subdirectory goes to the root itself.
// Every open adds noPoll.
type tree struct {
	*os.Root

	mu   sync.Mutex
	subs map[string]*os.Root
}

func newTree(r *os.Root) *tree { return &tree{Root: r, subs: map[string]*os.Root{}} }

// at splits name into the root it is opened from and its path there.
func (t *tree) at(name string) (*os.Root, string) {
	dir, rest, ok := strings.Cut(name, string(filepath.Separator))
	if !ok || dir == "" || dir == "." || dir == ".." || rest == "" {
		return t.Root, name
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	sub := t.subs[dir]
	if sub == nil {
		var err error
		if sub, err = t.Root.OpenRoot(dir); err != nil {
			return t.Root, name // absent, or not a directory: the root says so
		}
		t.subs[dir] = sub
	}
	return sub, rest
}

// Files and directories open with noPoll (see open_unix.go).

func (t *tree) Open(name string) (*os.File, error) {
	return t.OpenFile(name, os.O_RDONLY, 0)
}

func (t *tree) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	r, rel := t.at(name)
	return r.OpenFile(rel, flag|noPoll, perm)
}

func (t *tree) ReadFile(name string) ([]byte, error) {
	f, err := t.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+1)) // +1: EOF is seen without growing
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (t *tree) WriteFile(name string, data []byte, perm fs.FileMode) error {
	r, rel := t.at(name)
	return r.WriteFile(rel, data, perm)
}

func (t *tree) Stat(name string) (fs.FileInfo, error) {
	r, rel := t.at(name)
	return r.Stat(rel)
}

func (t *tree) Lstat(name string) (fs.FileInfo, error) {
	r, rel := t.at(name)
	return r.Lstat(rel)
}

func (t *tree) Remove(name string) error {
	r, rel := t.at(name)
	return r.Remove(rel)
}

func (t *tree) Mkdir(name string, perm fs.FileMode) error {
	r, rel := t.at(name)
	return r.Mkdir(rel, perm)
}

func (t *tree) Chmod(name string, mode fs.FileMode) error {
	r, rel := t.at(name)
	return r.Chmod(rel, mode)
}

// Rename renames within one subdirectory from there, and across
// directories from the root.
func (t *tree) Rename(oldname, newname string) error {
	r, o, n := t.pair(oldname, newname)
	return r.Rename(o, n)
}

// Link links within one subdirectory from there, and across directories
// from the root.
func (t *tree) Link(oldname, newname string) error {
	r, o, n := t.pair(oldname, newname)
	return r.Link(o, n)
}

// pair is where to rename or link oldname to newname from: their
// subdirectory when they share one, else the root.
func (t *tree) pair(oldname, newname string) (r *os.Root, oldrel, newrel string) {
	if filepath.Dir(oldname) == filepath.Dir(newname) {
		if r, oldrel := t.at(oldname); r != t.Root {
			return r, oldrel, filepath.Join(filepath.Dir(oldrel), filepath.Base(newname))
		}
	}
	return t.Root, oldname, newname
}

// Close closes the subdirectories held and the root.
func (t *tree) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	for _, sub := range t.subs {
		errs = append(errs, sub.Close())
	}
	t.subs = nil
	return errors.Join(append(errs, t.Root.Close())...)
}
