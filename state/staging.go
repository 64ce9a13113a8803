package state

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// The staging directory, tmp/ (stagingDir), is where writers outside this
// package stage files they need only while they run: checkpoint's redacted
// transcript slices. Like every path of the store it is reached through
// os.Root, so a symlink planted at tmp/ leads nowhere outside the store.

// staleStaging is the age past which a staging file is a crash leftover:
// no writer holds one for that long.
const staleStaging = 24 * time.Hour

// StagingFile creates a new file in the store's staging directory, named
// prefix and a random suffix, open for reading and writing. It is unlinked
// at once where the OS allows removing an open file (not Windows), so a
// crash leaves nothing behind; RemoveStaleStaging clears what it leaves
// elsewhere. The caller closes it.
func (s *Store) StagingFile(prefix string) (*os.File, error) {
	root, err := s.openRoot(true)
	if err != nil {
		return nil, fmt.Errorf("staging file: %w", err)
	}
	if err := ensureDirOnce(root, stagingDir); err != nil {
		return nil, fmt.Errorf("staging file: %w", err)
	}
	for range 100 {
		name := path.Join(stagingDir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("staging file: %w", err)
		}
		_ = root.Remove(name)
		return f, nil
	}
	return nil, fmt.Errorf("staging file: no free name in %s", stagingDir)
}

// RemoveStaleStaging deletes the staging files named prefix... that a
// crash left, those older than a day at now. Best effort: what it cannot
// list or remove stays for the next call, or for doctor. A staging
// directory that is not a directory of its own (a symlink, even to
// elsewhere in the store) is not cleared.
func (s *Store) RemoveStaleStaging(prefix string, now time.Time) {
	root, err := s.openRoot(false)
	if err != nil {
		return
	}
	if fi, err := root.Lstat(stagingDir); err != nil || !fi.IsDir() {
		return
	}
	names, err := readDirNames(root, stagingDir)
	if err != nil {
		return
	}
	for _, name := range names {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		rel := path.Join(stagingDir, name)
		if fi, err := root.Lstat(rel); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) > staleStaging {
			_ = root.Remove(rel)
		}
	}
}
