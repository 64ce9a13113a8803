package checkpoint

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tetherdev/tether/state"
)

// batch writes the objects of one update into one pack: each object is
// appended to a temporary pack as it is written (a large blob streams
// through, never held in memory), and flush completes the pack and its
// index, fsyncs both and moves them into place. One fsync of the pack, one
// of its index and one of their directory, however many objects: a ref
// written after flush never points at an object a crash or power loss
// could take away. Objects of a batch are not readable before flush;
// nothing reads them back earlier.
type batch struct {
	r       *Repo
	pack    *packWriter            // nil until the first object
	pending map[plumbing.Hash]bool // objects in the pack, not flushed yet
	written int                    // objects stored (the sparse-update tests count them)
	// st stages redacted transcript slices (see writeTranscript); only
	// batches that write checkpoints set it.
	st *state.Store
	// conversations are the agents' answers for the sessions whose
	// conversation is not a transcript file (exportConversations).
	conversations map[string]exported
}

func (r *Repo) newBatch() *batch {
	return &batch{r: r, pending: map[plumbing.Hash]bool{}}
}

// has reports whether the object is stored, loose or packed, or pending.
func (b *batch) has(h plumbing.Hash) bool {
	return b.pending[h] || b.r.st.HasEncodedObject(h) == nil
}

// writeStream stores an object of a known size read from src, streaming
// it through zlib into the batch's pack.
func (b *batch) writeStream(typ plumbing.ObjectType, size int64, src io.Reader) (plumbing.Hash, error) {
	if b.pack == nil {
		p, err := newPackWriter(filepath.Join(b.r.dir, "objects"))
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("write %s object: %w", typ, err)
		}
		b.pack = p
	}
	h, err := b.pack.add(typ, size, src, b.has)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write %s object: %w", typ, err)
	}
	b.pending[h] = true
	return h, nil
}

// flush makes the pending objects durable and readable.
func (b *batch) flush() error {
	if b.pack == nil {
		return nil
	}
	p, n := b.pack, len(b.pack.entries)
	b.pack = nil
	clear(b.pending)
	if err := p.finish(); err != nil {
		return err
	}
	b.written += n
	return b.r.refresh()
}

// discard drops the objects not flushed, after a failure.
func (b *batch) discard() {
	if b.pack != nil {
		b.pack.abandon()
		b.pack = nil
	}
	clear(b.pending)
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
	return b.writeCommitAt(tree, msg, time.Now(), parents...)
}

// writeCommitAt is writeCommit dated when.
func (b *batch) writeCommitAt(tree plumbing.Hash, msg string, when time.Time, parents ...plumbing.Hash) (plumbing.Hash, error) {
	sig := signature(when)
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
