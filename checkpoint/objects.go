package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tetherdev/tether/internal/durable"
	"github.com/tetherdev/tether/state"
)

// batch writes the loose objects of one update. Objects go to temporary
// files first; flush fsyncs them all at once (in parallel, so the file
// system can commit them in one journal transaction), renames them into
// place and fsyncs their directories. A ref written after flush never
// points at an object a crash or power loss could take away. Objects of a
// batch are not readable before flush; nothing reads them back earlier.
type batch struct {
	r       *Repo
	pending map[plumbing.Hash]string // temporary files, by object hash
	written int                      // loose objects created (the sparse-update tests count them)
	// st stages redacted transcript slices (see writeTranscript); only
	// batches that write checkpoints set it.
	st *state.Store
}

func (r *Repo) newBatch() *batch {
	return &batch{r: r, pending: map[plumbing.Hash]string{}}
}

// has reports whether the object is stored, loose or packed, or pending.
func (b *batch) has(h plumbing.Hash) bool {
	return b.pending[h] != "" || b.r.st.HasEncodedObject(h) == nil
}

func (b *batch) objectPath(h plumbing.Hash) string {
	hex := h.String()
	return filepath.Join(b.r.dir, "objects", hex[:2], hex[2:])
}

// writeStream stores an object of a known size read from src, streaming it
// through zlib into a temporary file, so large blobs never sit in memory.
func (b *batch) writeStream(typ plumbing.ObjectType, size int64, src io.Reader) (h plumbing.Hash, err error) {
	tmp, err := os.CreateTemp(filepath.Join(b.r.dir, "objects"), "tmp_obj_")
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write %s object: %w", typ, err)
	}
	keep := false
	defer func() {
		tmp.Close()
		if !keep {
			os.Remove(tmp.Name())
		}
	}()
	w := objfile.NewWriter(tmp)
	if err := w.WriteHeader(typ, size); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write %s object header: %w", typ, err)
	}
	if _, err := io.CopyN(w, src, size); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write %s object of %d bytes: %w", typ, size, err)
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write %s object: %w", typ, err)
	}
	h = w.Hash()
	if b.pending[h] != "" {
		return h, nil
	}
	if _, err := os.Lstat(b.objectPath(h)); err == nil {
		return h, nil // content-addressed: the existing file holds these bytes
	}
	b.pending[h], keep = tmp.Name(), true
	return h, nil
}

// flush makes the pending objects durable and visible.
func (b *batch) flush() error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for h, tmp := range b.pending {
		wg.Go(func() {
			if err := syncFile(tmp); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("sync object %s: %w", h, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.discard()
		return err
	}
	dirs := map[string]bool{}
	for h, tmp := range b.pending {
		final := b.objectPath(h)
		dir := filepath.Dir(final)
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				b.discard()
				return fmt.Errorf("create object dir %s: %w", dir, err)
			}
			dirs[filepath.Dir(dir)] = true
		}
		if err := os.Chmod(tmp, 0o444); err != nil {
			b.discard()
			return fmt.Errorf("chmod object %s: %w", h, err)
		}
		if err := os.Rename(tmp, final); err != nil {
			if _, serr := os.Lstat(final); serr != nil {
				b.discard()
				return fmt.Errorf("store object %s: %w", h, err)
			}
			// Another process stored the same object first (Windows
			// refuses to rename over it); its bytes are ours.
			os.Remove(tmp)
		} else {
			b.written++
		}
		delete(b.pending, h)
		dirs[dir] = true
	}
	for dir := range dirs {
		wg.Go(func() {
			if err := durable.SyncDir(dir); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("sync %s: %w", dir, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// syncFile flushes a file written and closed earlier: temporary objects
// are closed as soon as written, so a big batch holds no descriptors.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// discard drops the objects not flushed, after a failure.
func (b *batch) discard() {
	for h, tmp := range b.pending {
		os.Remove(tmp)
		delete(b.pending, h)
	}
}

// writeBytes stores a small object, skipping the write when it exists.
func (b *batch) writeBytes(typ plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	hs := plumbing.NewHasher(typ, int64(len(data)))
	hs.Write(data)
	if h := hs.Sum(); b.has(h) {
		return h, nil
	}
	return b.writeStream(typ, int64(len(data)), bytes.NewReader(data))
}

// writeTree stores a tree, sorting its entries the way git does.
func (b *batch) writeTree(entries []object.TreeEntry) (plumbing.Hash, error) {
	sort.Sort(object.TreeEntrySorter(entries))
	obj := &plumbing.MemoryObject{}
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode tree: %w", err)
	}
	return b.writeEncoded(obj)
}

// signature is the identity of the commits tether writes: they are made
// by the tool, not by the person whose config happens to be loaded.
func signature(when time.Time) object.Signature {
	return object.Signature{Name: "tether", Email: "tether@localhost", When: when}
}

// writeCommit stores a commit of tree with the given message and parents
// (zero hashes left out: the first commit of a ref has none).
func (b *batch) writeCommit(tree plumbing.Hash, msg string, parents ...plumbing.Hash) (plumbing.Hash, error) {
	sig := signature(time.Now())
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree}
	for _, p := range parents {
		if !p.IsZero() {
			c.ParentHashes = append(c.ParentHashes, p)
		}
	}
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode commit: %w", err)
	}
	return b.writeEncoded(obj)
}

func (b *batch) writeEncoded(obj *plumbing.MemoryObject) (plumbing.Hash, error) {
	if b.has(obj.Hash()) {
		return obj.Hash(), nil
	}
	rd, err := obj.Reader()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read encoded %s: %w", obj.Type(), err)
	}
	defer rd.Close()
	return b.writeStream(obj.Type(), obj.Size(), rd)
}

// blobEntry and treeEntry build tree entries.
func blobEntry(name string, h plumbing.Hash) object.TreeEntry {
	return object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h}
}

func treeEntry(name string, h plumbing.Hash) object.TreeEntry {
	return object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
}
