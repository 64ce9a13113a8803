package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tetherdev/tether/internal/durable"
)

// errRefChanged reports a lost compare-and-swap: the ref moved since it was
// read. Callers rebuild on the new tip and try again.
var errRefChanged = errors.New("reference changed concurrently")

// Waiting for another process's <ref>.lock: git holds one for
// milliseconds, and tether writes these refs only under checkpoints.lock,
// so a lock older than refLockStale is a crash leftover (a killed sweep).
// A long threshold would block every condense behind it meanwhile.
const (
	refLockWait  = 5 * time.Second
	refLockStale = 3 * time.Second
	casAttempts  = 8
)

// readRef returns the commit a ref points at, or the zero hash when the ref
// does not exist. Loose and packed refs are both read.
func (r *Repo) readRef(name plumbing.ReferenceName) (plumbing.Hash, error) {
	ref, err := r.st.Reference(name)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read %s: %w", name, err)
	}
	if ref.Type() != plumbing.HashReference {
		return plumbing.ZeroHash, fmt.Errorf("read %s: symbolic ref to %s", name, ref.Target())
	}
	return ref.Hash(), nil
}

// casRef moves a ref from old (zero: the ref must not exist) to new with
// git's own protocol: create <ref>.lock exclusively, check the current
// value, write and fsync the lock file, rename it over the ref. go-git's
// CheckAndSetReference rewrites the ref file in place under its own flock,
// which git does not honour and a crash can leave empty; this way a
// concurrent git command (git notes add, a rebase copying notes) either
// waits for us or makes us lose the race cleanly.
func (r *Repo) casRef(name plumbing.ReferenceName, new, old plumbing.Hash) error {
	path := filepath.Join(r.dir, filepath.FromSlash(name.String()))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("update %s: %w", name, err)
	}
	lock, err := acquireRefLock(path + ".lock")
	if err != nil {
		return fmt.Errorf("update %s: %w", name, err)
	}
	committed := false
	defer func() {
		if !committed {
			lock.Close()
			os.Remove(lock.Name())
		}
	}()
	cur, err := r.readRef(name)
	if err != nil {
		return fmt.Errorf("update %s: %w", name, err)
	}
	if cur != old {
		return fmt.Errorf("update %s: expected %s, found %s: %w", name, old, cur, errRefChanged)
	}
	if _, err := lock.WriteString(new.String() + "\n"); err != nil {
		return fmt.Errorf("update %s: %w", name, err)
	}
	if err := lock.Sync(); err != nil {
		return fmt.Errorf("update %s: %w", name, err)
	}
	if err := lock.Close(); err != nil {
		return fmt.Errorf("update %s: %w", name, err)
	}
	if err := os.Rename(lock.Name(), path); err != nil {
		return fmt.Errorf("update %s: %w", name, err)
	}
	committed = true
	if err := durable.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("update %s: sync: %w", name, err)
	}
	return nil
}

// acquireRefLock creates the lock file exclusively, waiting a bounded time
// for a git process holding it, and clears a lock left by a crash.
func acquireRefLock(path string) (*os.File, error) {
	deadline := time.Now().Add(refLockWait)
	delay := 2 * time.Millisecond
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if fi, serr := os.Stat(path); serr == nil && time.Since(fi.ModTime()) > refLockStale {
			os.Remove(path)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock %s: held by another process for over %s", path, refLockWait)
		}
		time.Sleep(delay)
		delay = min(delay*2, 100*time.Millisecond)
	}
}
