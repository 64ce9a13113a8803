package checkpoint

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// oldCondense condenses sessions the way an earlier tether did: onto
// LegacyBranch, each checkpoint directory holding checkpoint.json (naming
// no transcript ref), prompts.md and the transcript files together. The
// repository's new refs are put back as they were, and no migration runs
// meanwhile. It returns the checkpoint IDs.
func oldCondense(tb testing.TB, f *fixture, sessions ...string) []string {
	tb.Helper()
	r := f.repo
	saved := map[string]string{}
	for line := range strings.Lines(runGit(tb, f.dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/tether/")) {
		name, h, _ := strings.Cut(strings.TrimSpace(line), " ")
		saved[name] = h
		runGit(tb, f.dir, "update-ref", "-d", name)
	}
	legacy, err := r.readRef(LegacyBranch)
	if err != nil {
		tb.Fatal(err)
	}
	if !legacy.IsZero() {
		runGit(tb, f.dir, "update-ref", "-d", LegacyBranch)
		runGit(tb, f.dir, "update-ref", CheckpointsRef, legacy.String())
	}
	var ids []string
	for _, res := range f.condense(tb, sessions...) {
		ids = append(ids, res.Checkpoint)
	}
	_, root, err := r.tipAndRoot(CheckpointsRef)
	if err != nil {
		tb.Fatal(err)
	}
	b := r.newBatch()
	var edits []edit
	for _, id := range ids {
		leaf, _, err := r.lookup(root, id[:2], id[2:])
		if err != nil {
			tb.Fatal(err)
		}
		cp, err := r.readAt(root, id)
		if err != nil {
			tb.Fatal(err)
		}
		entries, err := r.treeEntries(leaf.Hash)
		if err != nil {
			tb.Fatal(err)
		}
		_, troot, err := r.tipAndRoot(cp.TranscriptRef())
		if err != nil {
			tb.Fatal(err)
		}
		if tleaf, ok, err := r.lookup(troot, id[:2], id[2:]); err != nil {
			tb.Fatal(err)
		} else if ok {
			chunks, err := r.treeEntries(tleaf.Hash)
			if err != nil {
				tb.Fatal(err)
			}
			entries = append(entries, chunks...)
		}
		cp.Transcript.Ref = ""
		data, err := json.MarshalIndent(cp, "", "  ")
		if err != nil {
			tb.Fatal(err)
		}
		for i := range entries {
			if entries[i].Name == "checkpoint.json" {
				entries[i].Hash = mustBlob(tb, b, string(data)+"\n")
			}
		}
		h, err := b.writeTree(entries)
		if err != nil {
			tb.Fatal(err)
		}
		edits = append(edits, edit{path: []string{id[:2], id[2:]}, entry: treeEntry(id[2:], h)})
	}
	newRoot, err := b.applyEdits(root, edits)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := b.writeCommit(newRoot, "tether: checkpoints, the old way\n", legacy)
	if err != nil {
		tb.Fatal(err)
	}
	if err := b.flush(); err != nil {
		tb.Fatal(err)
	}
	for line := range strings.Lines(runGit(tb, f.dir, "for-each-ref", "--format=%(refname)", "refs/tether/")) {
		runGit(tb, f.dir, "update-ref", "-d", strings.TrimSpace(line))
	}
	for name, h := range saved {
		runGit(tb, f.dir, "update-ref", name, h)
	}
	runGit(tb, f.dir, "update-ref", LegacyBranch, c.String())
	return ids
}

// An earlier tether's branch, and a remote-tracking copy of it with one
// checkpoint more, are migrated by the first write: every checkpoint is on
// CheckpointsRef at its old path without its transcript, the notes still
// name it, its transcript reads back from LegacyTranscripts, which holds
// the whole old history, and the old refs are gone.
func TestMigrateLegacyBranch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	transcripts := map[string]string{}
	var ids []string
	var mine string
	for _, name := range []string{"old-a", "old-b", "old-c"} {
		a := f.agent(t, name)
		a.turn(name + ", the old way")
		id := oldCondense(t, f, name)[0]
		ids = append(ids, id)
		transcripts[id] = readFile(t, a.transcript)
		if name == "old-b" {
			mine = runGit(t, f.dir, "rev-parse", LegacyBranch)
		}
	}
	// old-c came with a teammate's branch: it is only on the
	// remote-tracking copy, one commit ahead of ours.
	theirs := runGit(t, f.dir, "rev-parse", LegacyBranch)
	runGit(t, f.dir, "update-ref", "refs/remotes/origin/tether/checkpoints/v1", theirs)
	runGit(t, f.dir, "update-ref", LegacyBranch, mine)
	head := f.commit(t, "a.txt", "a\n")
	if err := f.repo.Link(head, ids[:1]); err != nil {
		t.Fatal(err)
	}
	// Readers see the old branch before anything migrates it.
	if cp, err := f.repo.Read(ids[0]); err != nil || cp.Transcript.Ref != "" {
		t.Fatalf("Read before migrating: %+v, %v", cp, err)
	}

	f.agent(t, "new").turn("the new way")
	newID := f.condense(t, "new")[0].Checkpoint

	for _, ref := range []string{LegacyBranch, "refs/remotes/origin/tether/checkpoints/v1"} {
		if gitCmd(f.dir, "rev-parse", "--verify", "-q", ref).Run() == nil {
			t.Errorf("%s is still there", ref)
		}
	}
	if got := runGit(t, f.dir, "rev-parse", LegacyTranscripts); got != theirs {
		t.Errorf("%s at %s, want the old history's tip %s", LegacyTranscripts, got, theirs)
	}
	for _, id := range append(ids, newID) {
		if ls := runGit(t, f.dir, "ls-tree", "--name-only", "tether/checkpoints/v1:"+id[:2]+"/"+id[2:]); ls != "checkpoint.json\nprompts.md" {
			t.Errorf("%s: files %q", id, ls)
		}
		cp, err := f.repo.Read(id)
		if err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		if err := f.repo.WriteTranscript(&got, cp); err != nil {
			t.Errorf("%s: %v", id, err)
		}
		if want, old := transcripts[id]; old && (got.String() != want || cp.TranscriptRef() != LegacyTranscripts) {
			t.Errorf("%s: transcript %q from %s, want %q from the legacy ref", id, got.String(), cp.TranscriptRef(), want)
		}
	}
	if linked, err := f.repo.Notes(head); err != nil || len(linked) != 1 || linked[0] != ids[0] {
		t.Errorf("notes of %s = %v, %v", head, linked, err)
	}
	log := runGit(t, f.dir, "log", "--format=%s", "tether/checkpoints/v1")
	if !strings.Contains(log, "tether: checkpoints of tether/checkpoints/v1") || !strings.Contains(log, "tether: 1 checkpoint") {
		t.Errorf("git log tether/checkpoints/v1:\n%s", log)
	}
	f.fsck(t)

	// Done once: nothing left to migrate, nothing written.
	before := runGit(t, f.dir, "for-each-ref")
	if err := f.repo.migrate(); err != nil || runGit(t, f.dir, "for-each-ref") != before {
		t.Errorf("migrating again: %v, refs changed", err)
	}
}

// Two clones migrating the same old branch write the same commit.
func TestMigrateIsDeterministic(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.agent(t, "s").turn("one")
	oldCondense(t, f, "s")
	old := runGit(t, f.dir, "rev-parse", LegacyBranch)
	other := newFixture(t)
	runGit(t, other.dir, "fetch", "-q", f.dir, LegacyBranch+":"+LegacyBranch)
	var tips []string
	for _, g := range []*fixture{f, other} {
		g.agent(t, "x") // nothing to condense: only the migration writes
		if res := g.condense(t, "x"); len(res) != 0 {
			t.Fatalf("Condense = %+v", res)
		}
		tips = append(tips, runGit(t, g.dir, "rev-parse", CheckpointsRef))
		if got := runGit(t, g.dir, "rev-parse", LegacyTranscripts); got != old {
			t.Errorf("legacy ref at %s, want %s", got, old)
		}
	}
	if tips[0] != tips[1] {
		t.Errorf("the clones migrated to %s and %s", tips[0], tips[1])
	}
}

// An earlier tether that goes on writing the old branch after the
// migration (another clone not upgraded yet) adds checkpoints that the
// next migration takes, converting only what is new; a migration killed
// between its two steps is finished by the next.
func TestMigrateIncrementalAndResumed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, s := range []string{"s1", "s2", "s3"} {
		f.agent(t, s).turn("turn of " + s)
	}
	ids := oldCondense(t, f, "s1", "s2", "s3")
	f.agent(t, "x")
	f.condense(t, "x") // migrates
	// The old tether adds one checkpoint on top of the history it knows.
	runGit(t, f.dir, "update-ref", LegacyBranch, runGit(t, f.dir, "rev-parse", LegacyTranscripts))
	f.agent(t, "late").turn("written by an old tether")
	late := oldCondense(t, f, "late")[0]

	// Killed after the checkpoints moved, before the legacy ref did.
	killAt(t, f, "x", "before-ref@"+LegacyTranscripts)
	if _, err := f.repo.Read(late); err != nil {
		t.Fatalf("the killed migration had not moved the checkpoints: %v", err)
	}
	objs := objects(t, f.dir)
	f.condense(t, "x")
	if got := added(objs, objects(t, f.dir)); len(got) > 0 {
		t.Errorf("the resumed migration wrote %v, want nothing (the killed one did it)", got)
	}
	if gitCmd(f.dir, "rev-parse", "--verify", "-q", LegacyBranch).Run() == nil {
		t.Error("the old branch is still there")
	}
	for _, id := range append(ids, late) {
		if _, err := f.repo.Read(id); err != nil {
			t.Error(err)
		}
	}
	if n := runGit(t, f.dir, "rev-list", "--count", LegacyTranscripts); n != "2" {
		t.Errorf("legacy history has %s commits, want 2", n)
	}
	f.fsck(t)
}

// Converting one more checkpoint of an old branch of many writes the
// trees on its path only.
func TestMigrateConvertsWhatIsNew(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	prebuildLegacy(t, f, 300)
	f.agent(t, "x")
	f.condense(t, "x")
	if n := strings.Count(runGit(t, f.dir, "ls-tree", "-r", "-d", "--name-only", CheckpointsRef), "/"); n != 300 {
		t.Fatalf("%d checkpoints migrated, want 300", n)
	}
	runGit(t, f.dir, "update-ref", LegacyBranch, runGit(t, f.dir, "rev-parse", LegacyTranscripts))
	f.agent(t, "late").turn("one more, the old way")
	oldCondense(t, f, "late")
	objs := objects(t, f.dir)
	f.condense(t, "x")
	// The converted leaf, its xx/ tree and the root of the converted
	// side; the merged xx/ tree, root and commit.
	if got := added(objs, objects(t, f.dir)); len(got) > 6 {
		t.Errorf("converting one checkpoint wrote %d objects: %v", len(got), got)
	}
}

// prebuildLegacy puts n placeholder checkpoints on LegacyBranch, each
// with a transcript, as an earlier tether would have.
func prebuildLegacy(tb testing.TB, f *fixture, n int) {
	tb.Helper()
	b := f.repo.newBatch()
	prebuildOn(tb, f, b, LegacyBranch, n, func(id string) plumbing.Hash {
		cp := mustBlob(tb, b, `{"version":1,"id":"`+id+`"}`)
		tr := mustBlob(tb, b, `{"line":`+id+`}`)
		leaf, err := b.writeTree([]object.TreeEntry{blobEntry("checkpoint.json", cp), blobEntry("transcript.jsonl", tr)})
		if err != nil {
			tb.Fatal(err)
		}
		return leaf
	})
}
