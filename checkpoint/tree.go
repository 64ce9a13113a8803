package checkpoint

import (
	"fmt"
	"io"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// edit puts entry at path (its last element is the entry's name), or
// removes what is there when entry.Hash is zero.
type edit struct {
	path  []string
	entry object.TreeEntry
}

// applyEdits writes the tree base with edits applied and returns its hash,
// zero when the result is empty (a tree emptied by removals disappears from
// its parent, as git never stores empty subtrees). Only the trees on the
// paths of the edits are read and rewritten; every other subtree keeps its
// hash, so the cost depends on the depth and width of the touched trees,
// never on the size of the whole branch.
func (b *batch) applyEdits(base plumbing.Hash, edits []edit) (plumbing.Hash, error) {
	entries, err := b.r.treeEntries(base)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	direct := map[string]object.TreeEntry{}
	nested := map[string][]edit{}
	for _, e := range edits {
		if len(e.path) == 1 {
			direct[e.path[0]] = e.entry
			continue
		}
		nested[e.path[0]] = append(nested[e.path[0]], edit{path: e.path[1:], entry: e.entry})
	}
	for name, sub := range nested {
		var subBase plumbing.Hash
		if i := slices.IndexFunc(entries, func(e object.TreeEntry) bool { return e.Name == name }); i >= 0 && entries[i].Mode == filemode.Dir {
			subBase = entries[i].Hash
		}
		h, err := b.applyEdits(subBase, sub)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		direct[name] = treeEntry(name, h)
	}
	out := make([]object.TreeEntry, 0, len(entries)+len(direct))
	for _, e := range entries {
		if _, replaced := direct[e.Name]; !replaced {
			out = append(out, e)
		}
	}
	for name, e := range direct {
		if !e.Hash.IsZero() {
			e.Name = name
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return plumbing.ZeroHash, nil
	}
	return b.writeTree(out)
}

// treeEntries returns a copy of the entries of tree h (none for zero).
func (r *Repo) treeEntries(h plumbing.Hash) ([]object.TreeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	r.callHook("read-tree", h.String())
	t, err := object.GetTree(r.st, h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	return slices.Clone(t.Entries), nil
}

// lookup finds the entry at path under tree root; ok is false when any
// element of the path is missing.
func (r *Repo) lookup(root plumbing.Hash, path ...string) (e object.TreeEntry, ok bool, err error) {
	cur := root
	for i, name := range path {
		if cur.IsZero() {
			return object.TreeEntry{}, false, nil
		}
		entries, err := r.treeEntries(cur)
		if err != nil {
			return object.TreeEntry{}, false, err
		}
		j := slices.IndexFunc(entries, func(e object.TreeEntry) bool { return e.Name == name })
		if j < 0 {
			return object.TreeEntry{}, false, nil
		}
		if i == len(path)-1 {
			return entries[j], true, nil
		}
		if entries[j].Mode != filemode.Dir {
			return object.TreeEntry{}, false, nil
		}
		cur = entries[j].Hash
	}
	return object.TreeEntry{Mode: filemode.Dir, Hash: root}, true, nil
}

// commitTree returns the tree of commit h (zero for zero).
func (r *Repo) commitTree(h plumbing.Hash) (plumbing.Hash, error) {
	if h.IsZero() {
		return plumbing.ZeroHash, nil
	}
	c, err := object.GetCommit(r.st, h)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read commit %s: %w", h, err)
	}
	return c.TreeHash, nil
}

// maxSmallBlob bounds the blobs read whole into memory (checkpoint.json,
// notes); anything bigger is not ours.
const maxSmallBlob = 16 << 20

// readBlob reads a small blob whole.
func (r *Repo) readBlob(h plumbing.Hash) ([]byte, error) {
	blob, err := object.GetBlob(r.st, h)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	if blob.Size > maxSmallBlob {
		return nil, fmt.Errorf("read blob %s: %d bytes, more than %d", h, blob.Size, maxSmallBlob)
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", h, err)
	}
	return data, nil
}
