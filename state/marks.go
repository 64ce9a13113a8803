package state

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
)

// Mark is a kind of durable to-do note about a session: an empty file
// named after the session in a directory of the store. The sweep reads
// these small directories instead of scanning ended sessions, so ended
// sessions stay off the hot paths, and a crash between deciding and doing
// never loses the to-do.
type Mark string

const (
	// MarkCondense: the session ended with turns, or a running turn, not
	// yet final in a checkpoint. The store sets it whenever a
	// session moves to ended/; the sweep clears it after condensing.
	MarkCondense Mark = "condense"
	// MarkUnlinked: the session has checkpoints waiting for a commit of
	// its worktree to link them to.
	MarkUnlinked Mark = "unlinked"
)

// SetMark records mark m for session id, durably.
func (s *Store) SetMark(m Mark, id string) error {
	return s.SetMarks(m, []string{id})
}

// createMark creates the mark's file; the caller fsyncs its directory.
func (s *Store) createMark(root *tree, m Mark, id string) error {
	f, err := s.openFile(root, path.Join(string(m), id), os.O_CREATE|os.O_WRONLY)
	if err != nil {
		return fmt.Errorf("mark %s %s: %w", id, m, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("mark %s %s: %w", id, m, err)
	}
	return nil
}

// SetMarks records mark m for each of the sessions ids, durably, with one
// directory fsync for them all.
func (s *Store) SetMarks(m Mark, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	root, err := s.openRoot(true)
	if err != nil {
		return fmt.Errorf("mark %s: %w", m, err)
	}
	for _, id := range ids {
		if err := ValidateID(id); err != nil {
			return err
		}
		if err := s.createMark(root, m, id); err != nil {
			return err
		}
	}
	if err := syncDir(root, string(m)); err != nil {
		return fmt.Errorf("mark %s: %w", m, err)
	}
	s.callPause("before-flag")
	return s.ensureActive(root)
}

// Marked lists the sessions carrying mark m.
func (s *Store) Marked(m Mark) ([]string, error) {
	names, err := s.markNames(m, -1)
	if err != nil {
		return nil, fmt.Errorf("list %s marks: %w", m, err)
	}
	ids := names[:0]
	for _, n := range names {
		if ValidateID(n) == nil {
			ids = append(ids, n)
		}
	}
	return ids, nil
}

// AnyMarked reports whether some session carries mark m, at the cost of
// one name read, however many do.
func (s *Store) AnyMarked(m Mark) (bool, error) {
	names, err := s.markNames(m, 1)
	if err != nil {
		return false, fmt.Errorf("look for %s marks: %w", m, err)
	}
	return len(names) > 0, nil
}

// markNames reads up to n names (all for n < 0) of mark m's directory;
// none when it does not exist.
func (s *Store) markNames(m Mark, n int) ([]string, error) {
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	dir, err := root.Open(string(m))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	names, err := dir.Readdirnames(n)
	if err != nil && !(n > 0 && errors.Is(err, io.EOF)) {
		return nil, err
	}
	return names, nil
}

// ClearMark removes mark m of session id; a missing mark is fine.
func (s *Store) ClearMark(m Mark, id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("clear %s mark of %s: %w", m, id, err)
	}
	if err := root.Remove(path.Join(string(m), id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clear %s mark of %s: %w", m, id, err)
	}
	return nil
}
