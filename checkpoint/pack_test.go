package checkpoint

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// A batch's pack and index read back with git: every object, of every
// size class of the entry header, with the bytes written; an object
// stored already is not stored twice; nothing temporary is left.
func TestPackReadsBackWithGit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b := f.repo.newBatch()
	sizes := []int{0, 1, 15, 16, 2047, 2048, 1<<18 + 3, 3 << 20}
	contents := map[plumbing.Hash][]byte{}
	for i, n := range sizes {
		data := bytes.Repeat([]byte{byte('a' + i)}, n)
		h, err := b.writeStream(plumbing.BlobObject, int64(n), bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		contents[h] = data
	}
	again := mustBlob(t, b, strings.Repeat("b", 1)) // pending already
	if contents[again] == nil {
		t.Fatalf("rewriting a pending object gave a new hash %s", again)
	}
	if err := b.flush(); err != nil {
		t.Fatal(err)
	}
	if b.written != len(sizes) {
		t.Errorf("%d objects stored, want %d", b.written, len(sizes))
	}
	// Stored already (packed now): not added to the next pack.
	if h, err := b.writeStream(plumbing.BlobObject, 16, strings.NewReader(strings.Repeat("d", 16))); err != nil || contents[h] == nil {
		t.Fatalf("rewriting a stored object: %s, %v", h, err)
	}
	if err := b.flush(); err != nil {
		t.Fatal(err)
	}
	if b.written != len(sizes) {
		t.Errorf("a stored object was stored again: %d objects", b.written)
	}
	packs, _ := filepath.Glob(filepath.Join(f.common, "objects", "pack", "*"))
	var names []string
	for _, p := range packs {
		names = append(names, filepath.Base(p))
	}
	if len(packs) != 2 || !strings.HasSuffix(names[0], ".idx") || !strings.HasSuffix(names[1], ".pack") {
		t.Fatalf("objects/pack holds %v, want one pack and its index", names)
	}
	if out, err := gitCmd(f.dir, "verify-pack", "-v", packs[0]).CombinedOutput(); err != nil || strings.Count(string(out), " blob ") != len(sizes) {
		t.Fatalf("git verify-pack: %v\n%s", err, out)
	}
	for h, want := range contents {
		got, err := gitCmd(f.dir, "cat-file", "blob", h.String()).Output()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("blob %s of %d bytes reads back as %d bytes, %v", h, len(want), len(got), err)
		}
	}
	for _, p := range packs {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o444 {
			t.Errorf("%s: %v, %v; want read-only like git's", p, fi.Mode(), err)
		}
	}
	f.fsck(t)
}

// A discarded batch, or one that stored nothing, leaves no file behind.
func TestPackLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b := f.repo.newBatch()
	mustBlob(t, b, "discarded")
	b.discard()
	if err := b.flush(); err != nil {
		t.Fatal(err)
	}
	b = f.repo.newBatch()
	if err := b.flush(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(f.common, "objects", "pack", "*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
