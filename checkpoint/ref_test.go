package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

const testRef = plumbing.ReferenceName("refs/heads/tether/test")

func TestCasRef(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := plumbing.NewHash(f.commit(t, "a", "a"))
	b := plumbing.NewHash(f.commit(t, "b", "b"))
	if err := f.repo.casRef(testRef, a, plumbing.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if err := f.repo.casRef(testRef, b, plumbing.ZeroHash); !errors.Is(err, errRefChanged) {
		t.Errorf("creating an existing ref: %v", err)
	}
	if err := f.repo.casRef(testRef, b, b); !errors.Is(err, errRefChanged) {
		t.Errorf("moving from a wrong old value: %v", err)
	}
	if err := f.repo.casRef(testRef, b, a); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(f.common, "refs", "heads", "tether", "test")); got != b.String()+"\n" {
		t.Errorf("ref file = %q", got)
	}
	// A packed ref is the old value; the loose file written over it wins.
	runGit(t, f.dir, "pack-refs", "--all")
	if err := f.repo.casRef(testRef, a, b); err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, f.dir, "rev-parse", string(testRef)); got != a.String() {
		t.Errorf("git rev-parse = %s, want %s", got, a)
	}
	if _, err := os.Stat(filepath.Join(f.common, string(testRef)) + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left behind: %v", err)
	}
}

func TestCasRefLocks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := plumbing.NewHash(f.commit(t, "a", "a"))
	lock := filepath.Join(f.common, string(testRef)) + ".lock"
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	// Held by a git process for a moment: we wait for it.
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	released := make(chan error)
	go func() {
		time.Sleep(50 * time.Millisecond)
		released <- os.Remove(lock)
	}()
	if err := f.repo.casRef(testRef, a, plumbing.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	// Left by a crash long ago: cleared.
	b := plumbing.NewHash(f.commit(t, "b", "b"))
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	if err := f.repo.casRef(testRef, b, a); err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, f.dir, "rev-parse", string(testRef)); got != b.String() {
		t.Errorf("ref = %s, want %s", got, b)
	}
}

func TestCondenseLosesRaceOnBranch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.agent(t, "first").turn("one")
	f.condense(t, "first")
	f.agent(t, "second").turn("two")
	raced := false
	f.repo.hook = func(point, ref string) {
		if point != "before-ref" || ref != CheckpointsRef || raced {
			return
		}
		raced = true
		// Another writer moves the branch between our read and our update.
		tip := runGit(t, f.dir, "rev-parse", CheckpointsRef)
		c := runGit(t, f.dir, "commit-tree", "-p", tip, "-m", "external", tip+"^{tree}")
		runGit(t, f.dir, "update-ref", CheckpointsRef, c, tip)
	}
	res := f.condense(t, "second")
	if !raced || len(res) != 1 {
		t.Fatalf("raced=%v results=%+v", raced, res)
	}
	log := runGit(t, f.dir, "log", "--format=%s", CheckpointsRef)
	if log != "tether: 1 checkpoint\nexternal\ntether: 1 checkpoint" {
		t.Errorf("branch history:\n%s", log)
	}
	if _, err := f.repo.Read(res[0].Checkpoint); err != nil {
		t.Error(err)
	}
	f.fsck(t)
}

// prebuild puts n placeholder checkpoints on the checkpoints ref with
// plumbing, as fast as a real ref of that size can be made, and returns the
// tip.
func prebuild(tb testing.TB, f *fixture, n int) plumbing.Hash {
	tb.Helper()
	b := f.repo.newBatch()
	leaf, err := b.writeTree([]object.TreeEntry{blobEntry("checkpoint.json", mustBlob(tb, b, `{"version":1}`))})
	if err != nil {
		tb.Fatal(err)
	}
	return prebuildOn(tb, f, b, CheckpointsRef, n, func(string) plumbing.Hash { return leaf })
}

// prebuildOn writes n checkpoints, each the tree leaf returns for its ID,
// as one commit on ref, and returns it.
func prebuildOn(tb testing.TB, f *fixture, b *batch, ref plumbing.ReferenceName, n int, leaf func(id string) plumbing.Hash) plumbing.Hash {
	tb.Helper()
	dirs := map[string][]object.TreeEntry{}
	for i := range n {
		id := checkpointID("prebuilt", "", int64(i))
		dirs[id[:2]] = append(dirs[id[:2]], treeEntry(id[2:], leaf(id)))
	}
	var root []object.TreeEntry
	for name, entries := range dirs {
		h, err := b.writeTree(entries)
		if err != nil {
			tb.Fatal(err)
		}
		root = append(root, treeEntry(name, h))
	}
	rh, err := b.writeTree(root)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := b.writeCommit(rh, "prebuilt\n")
	if err != nil {
		tb.Fatal(err)
	}
	if err := b.flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.repo.casRef(ref, c, plumbing.ZeroHash); err != nil {
		tb.Fatal(err)
	}
	return c
}

// objects lists every object of the repository at dir, loose or packed,
// with its type.
func objects(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	found := map[string]string{}
	out := runGit(tb, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
	for line := range strings.Lines(out) {
		if h, typ, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			found[h] = typ
		}
	}
	return found
}

// added lists the types of the objects in after that are not in before.
func added(before, after map[string]string) []string {
	var types []string
	for h, typ := range after {
		if _, old := before[h]; !old {
			types = append(types, typ)
		}
	}
	slices.Sort(types)
	return types
}

func TestCondenseSparseUpdate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	prebuild(t, f, 100)
	before := runGit(t, f.dir, "ls-tree", CheckpointsRef)
	objsBefore := objects(t, f.dir)

	f.agent(t, "new").turn("one more")
	id := f.condense(t, "new")[0].Checkpoint

	// transcript, checkpoint.json, prompts.md; on each ref (checkpoints,
	// transcripts) the leaf, its xx/ tree, the root and the commit.
	// Nothing else is rewritten.
	if got := added(objsBefore, objects(t, f.dir)); len(got) != 11 {
		t.Errorf("condensing one checkpoint wrote %d objects (%v), want 11", len(got), got)
	}
	after := runGit(t, f.dir, "ls-tree", CheckpointsRef)
	changed := 0
	for line := range strings.Lines(before) {
		if !strings.Contains(after, line) {
			changed++
			if !strings.HasSuffix(line, "\t"+id[:2]+"\n") {
				t.Errorf("unrelated subtree changed: %q", line)
			}
		}
	}
	if changed > 1 {
		t.Errorf("%d root entries changed, want at most 1", changed)
	}
	f.fsck(t)
}
