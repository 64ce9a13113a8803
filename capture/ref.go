package capture

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tetherdev/tether/gitdir"
)

// errMoved: a ref is no longer what its update expected, or another
// writer holds it.
var errMoved = errors.New("ref moved")

// tip is the commit ref names, "" when there is no such ref: read from
// git's ref files (loose, then packed-refs) without starting a process; by
// git where it keeps refs otherwise (reftable).
func (w *Worktree) tip(ref string) (string, error) {
	h, err := gitdir.Ref(w.repo, ref)
	if errors.Is(err, gitdir.ErrReftable) {
		// --verify --quiet fails only when there is no such ref.
		h, _ = w.git("", nil, "rev-parse", "--verify", "--quiet", ref)
		return h, nil
	}
	return h, err
}

// moveRef moves ref from old ("": absent) to new, or fails with errMoved.
// Where git keeps refs as files, it does what git update-ref does there:
// it creates <ref>.lock exclusively, as every git writer of the ref does
// (update-ref, pack-refs, gc), checks under it that the ref is still old,
// writes new into it and renames it over the ref. A ref packed by gc is
// then overridden by the loose file, as after git's own update. Elsewhere
// (reftable) git update-ref does it.
func (w *Worktree) moveRef(ref, old, new string) error {
	if _, err := gitdir.Ref(w.repo, ref); errors.Is(err, gitdir.ErrReftable) {
		if _, err := w.git("", nil, "update-ref", ref, new, old); err != nil {
			if cur, _ := w.tip(ref); cur != old {
				return errMoved
			}
			return err
		}
		return nil
	}
	path := filepath.Join(w.repo.CommonDir, filepath.FromSlash(ref))
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return fmt.Errorf("update %s: %w", ref, err)
	}
	lock := path + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return errMoved
	}
	if err != nil {
		return fmt.Errorf("update %s: %w", ref, err)
	}
	err = func() error {
		cur, err := gitdir.Ref(w.repo, ref)
		if err != nil {
			return err
		}
		if cur != old {
			return errMoved
		}
		_, err = f.WriteString(new + "\n")
		return err
	}()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(lock, path)
	}
	if err != nil {
		os.Remove(lock)
		if errors.Is(err, errMoved) {
			return err
		}
		return fmt.Errorf("update %s: %w", ref, err)
	}
	return nil
}
