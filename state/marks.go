package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
)

// unlinkedDir holds one empty marker per session whose checkpoints are not
// yet linked to a commit. The post-commit sweep reads this small directory
// instead of scanning ended sessions, so ended sessions stay off the hot
// path.
const unlinkedDir = "unlinked"

// MarkUnlinked records that session id has checkpoints waiting for a
// commit to link them to.
func (s *Store) MarkUnlinked(id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	root, err := s.openRoot(true)
	if err != nil {
		return fmt.Errorf("mark %s unlinked: %w", id, err)
	}
	f, err := s.openFile(root, path.Join(unlinkedDir, id), os.O_CREATE|os.O_WRONLY)
	if err != nil {
		return fmt.Errorf("mark %s unlinked: %w", id, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("mark %s unlinked: %w", id, err)
	}
	return syncDir(root, unlinkedDir)
}

// Unlinked lists the sessions marked by MarkUnlinked.
func (s *Store) Unlinked() ([]string, error) {
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list unlinked checkpoints: %w", err)
	}
	dir, err := root.Open(unlinkedDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list unlinked checkpoints: %w", err)
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("list unlinked checkpoints: %w", err)
	}
	ids := names[:0]
	for _, n := range names {
		if ValidateID(n) == nil {
			ids = append(ids, n)
		}
	}
	return ids, nil
}

// ClearUnlinked removes the mark of session id; a missing mark is fine.
func (s *Store) ClearUnlinked(id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("clear unlinked mark of %s: %w", id, err)
	}
	if err := root.Remove(path.Join(unlinkedDir, id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clear unlinked mark of %s: %w", id, err)
	}
	return nil
}
