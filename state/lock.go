package state

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// namedLocks is the directory of the locks taken by name (Lock): the
// store's own, guarding what no single session owns. A session's lock is
// locks/<id>.lock, a file, so no session ID can name one of these, whatever
// the agent calls its session ("checkpoints" included).
var namedLocks = filepath.Join("locks", "store")

// Lock takes the named lock locks/store/<name>.lock (e.g. "checkpoints"),
// with the same bounded wait as session locks. Names follow ValidateID.
func (s *Store) Lock(name string) (unlock func() error, err error) {
	if err := ValidateID(name); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	root, err := s.openRoot(true)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	lk, err := s.acquire(root, namedLockPath(name), name)
	if err != nil {
		return nil, err
	}
	return lk.release, nil
}

// LockFile is the file of the named lock Lock takes (for tools that watch
// who holds it).
func (s *Store) LockFile(name string) string { return filepath.Join(s.dir, namedLockPath(name)) }

func namedLockPath(name string) string { return filepath.Join(namedLocks, name+".lock") }

func sessionLockPath(id string) string { return filepath.Join("locks", id+".lock") }

// heldLock is an acquired lock file.
type heldLock struct {
	root *tree
	rel  string
	f    *os.File
}

// release unlocks by closing the file (the OS drops the lock with it).
func (l *heldLock) release() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("release %s: %w", l.rel, err)
	}
	return nil
}

// remove deletes the lock file while it is held: processes waiting on the
// old file notice it is gone when they get it, and start over on a new one.
// On Windows an open file cannot be deleted; the file then simply stays.
func (l *heldLock) remove() {
	_ = l.root.Remove(l.rel)
}

// acquire takes the lock file rel (named name in errors), waiting at most
// Options.LockWait. The file is never renamed, so the lock is stable; but
// Remove may unlink it, which is why the winner checks that the file it
// locked is still the one at the path, and starts over if not.
func (s *Store) acquire(root *tree, rel, name string) (*heldLock, error) {
	deadline := time.Now().Add(s.opts.LockWait)
	for {
		f, err := s.openFile(root, rel, os.O_RDWR|os.O_CREATE)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		ok, err := waitLock(f, time.Until(deadline))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		if !ok {
			holder := readHolder(f)
			f.Close()
			return nil, fmt.Errorf("lock %s: %w after %v%s", name, ErrLockTimeout, s.opts.LockWait, holder)
		}
		if same, err := stillAt(root, rel, f); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", name, err)
		} else if same {
			writeHolder(f)
			return &heldLock{root: root, rel: rel, f: f}, nil
		}
		f.Close()
	}
}

// waitLock polls tryLock with growing, jittered naps (so waiters do not
// wake in step) until it succeeds or wait runs out. One try is always made.
func waitLock(f *os.File, wait time.Duration) (bool, error) {
	deadline := time.Now().Add(wait)
	nap := 100 * time.Microsecond
	for {
		ok, err := tryLock(f)
		if err != nil || ok {
			return ok, err
		}
		if !time.Now().Before(deadline) {
			return false, nil
		}
		time.Sleep(nap/2 + rand.N(nap))
		nap = min(nap*2, 2*time.Millisecond)
	}
}

// stillAt reports whether f is the file currently at rel.
func stillAt(root *tree, rel string, f *os.File) (bool, error) {
	a, err := f.Stat()
	if err != nil {
		return false, err
	}
	b, err := root.Stat(rel)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	return os.SameFile(a, b), nil
}

// holderWidth is the fixed size of the holder line. Rewriting the same
// bytes in place keeps a lock free of metadata changes: truncating first
// made every lock cost a journal update and, on ext4, a forced flush of the
// lock file when it was closed.
const holderWidth = 96

// writeHolder records who holds the lock, for the timeout message of the
// next process that waits. Best effort: the lock works without it.
func writeHolder(f *os.File) {
	cmd := strings.ReplaceAll(filepath.Base(os.Args[0]), "\n", " ")
	line := strconv.Itoa(os.Getpid()) + " " + time.Now().UTC().Format(time.RFC3339) + " " + cmd
	if len(line) > holderWidth-1 {
		line = line[:holderWidth-1]
	}
	b := make([]byte, holderWidth)
	copy(b, line)
	for i := len(line); i < holderWidth-1; i++ {
		b[i] = ' '
	}
	b[holderWidth-1] = '\n'
	_, _ = f.WriteAt(b, 0)
}

// readHolder describes the holder recorded in a lock file, or "".
func readHolder(f *os.File) string {
	b := make([]byte, 512)
	n, err := f.ReadAt(b, 0)
	if err != nil && err != io.EOF {
		return ""
	}
	line, _, _ := strings.Cut(string(b[:n]), "\n")
	pid, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	since, cmd, _ := strings.Cut(rest, " ")
	cmd = strings.TrimSpace(cmd)
	if _, err := strconv.Atoi(pid); err != nil {
		return ""
	}
	return fmt.Sprintf(" (held by pid %s %s since %s)", pid, cmd, since)
}
