package state

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// ActiveFlag names the file, in the store's directory, that exists while
// the store may hold work for a sweep: a live session, or a to-do mark.
// The post-commit hook script tests for it before it starts any process,
// so a commit with nothing to do costs one stat however long the store's
// history.
//
// Every write that puts a session in sessions/ or sets a mark creates the
// flag after its own write; SettleActive removes it first and looks for
// work after. Whatever the interleaving, once both are done a store with
// a live session or a mark has the flag.
const ActiveFlag = "active"

// ensureActive creates the flag if it is missing, durably.
func (s *Store) ensureActive(root *tree) error {
	if _, err := root.Lstat(ActiveFlag); err == nil {
		return nil
	}
	f, err := root.OpenFile(ActiveFlag, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("flag the store active: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("flag the store active: %w", err)
	}
	if err := syncDir(root, "."); err != nil {
		return fmt.Errorf("flag the store active: %w", err)
	}
	return nil
}

// MarkActive flags the store active whatever it holds, for a caller that
// cannot tell (an upgrade from a tether that kept no flag); the next sweep
// settles it. A store that does not exist yet holds nothing: it stays so.
func (s *Store) MarkActive() error {
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("flag the store active: %w", err)
	}
	return s.ensureActive(root)
}

// SettleActive removes the store's active flag unless the store holds a
// live session, a to-do mark or a spooled event, and reports whether the
// flag stays. The
// sweep calls it when it has left nothing live. The flag goes first and
// the directories are read after, sessions/ before the marks (a session
// that ends is marked before it leaves sessions/, unless the write that
// ends it condenses it and leaves nothing to do, and a mark is set before
// the one it replaces is cleared), so a session or mark written meanwhile
// is either seen here or flags the store again itself.
func (s *Store) SettleActive() (bool, error) {
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("settle the active flag: %w", err)
	}
	if err := root.Remove(ActiveFlag); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return true, fmt.Errorf("settle the active flag: %w", err)
	}
	s.callPause("settle:removed")
	for _, dir := range []string{locLive.dir(), string(MarkCondense), string(MarkUnlinked), spoolDir} {
		busy, err := holdsWork(root, dir)
		s.callPause("settle:read " + dir)
		if err == nil && !busy {
			continue
		}
		if ferr := s.ensureActive(root); ferr != nil {
			return true, errors.Join(err, ferr)
		}
		return true, err
	}
	return false, nil
}

// holdsWork reports whether dir holds a session's state file or a mark.
// Leftovers that are neither (a temporary file, a stray name) do not keep
// the store active: nothing of them is work for a sweep.
func holdsWork(root *tree, dir string) (bool, error) {
	d, err := root.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("list %s: %w", dir, err)
	}
	defer d.Close()
	for {
		names, err := d.Readdirnames(256)
		for _, name := range names {
			id := name
			if dir == locLive.dir() {
				var ok bool
				if id, ok = strings.CutSuffix(name, ".json"); !ok {
					continue
				}
			}
			if ValidateID(id) == nil {
				return true, nil
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return false, nil
			}
			return false, fmt.Errorf("list %s: %w", dir, err)
		}
	}
}
