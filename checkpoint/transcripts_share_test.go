package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// hasObject reports whether the repository at dir holds object h.
func hasObject(dir string, h string) bool {
	return gitCmd(dir, "cat-file", "-e", h).Run() == nil
}

// A clone fetches the checkpoints and notes, not the transcripts: what
// status, show and the notes need is there, a transcript is fetched when
// asked for, and the recent generations with fetch --transcripts.
func TestFetchLeavesTranscripts(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	a := c.clones[0].agent(t, "big")
	a.turnStart("write a lot")
	for i := range 2000 {
		a.write(fmt.Sprintf(`{"type":"assistant","n":%d,"text":"%s"}`, i, strings.Repeat("x", 100)))
	}
	a.turnEnd()
	id := c.clones[0].condense(t, "big")[0].Checkpoint
	if err := c.clones[0].repo.Link(c.base, []string{id}); err != nil {
		t.Fatal(err)
	}
	c.push(t, 0)

	f := c.clones[1]
	if res := c.fetch(t, 1); res.Checkpoints != FastForward || res.Notes != FastForward || len(res.Transcripts) != 0 {
		t.Fatalf("fetch = %+v", res)
	}
	cp, err := f.repo.Read(id)
	if err != nil || cp.Turns[0].Prompt != "write a lot" {
		t.Fatalf("Read = %+v, %v", cp, err)
	}
	if ids, err := f.repo.Notes(c.base); err != nil || len(ids) != 1 || ids[0] != id {
		t.Errorf("notes = %v, %v", ids, err)
	}
	blob := runGit(t, c.remote, "rev-parse", cp.Transcript.Ref+":"+id[:2]+"/"+id[2:]+"/transcript.jsonl")
	if hasObject(f.dir, blob) {
		t.Fatal("fetching the checkpoints brought the transcript")
	}
	var out strings.Builder
	if err := f.repo.WriteTranscript(&out, cp); !errors.Is(err, ErrTranscriptNotFetched) || !errors.Is(err, ErrNotFound) {
		t.Fatalf("WriteTranscript before fetching it: %v", err)
	}

	// Not a recent generation by the clock of August: not fetched.
	if res, err := f.repo.Fetch(f.st, "origin", FetchOptions{Transcripts: RecentTranscripts(time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC))}); err != nil || len(res.Transcripts) != 0 {
		t.Fatalf("fetch of August's transcripts = %+v, %v", res, err)
	}
	// In June, May is last month's: fetched.
	res, err := f.repo.Fetch(f.st, "origin", FetchOptions{Transcripts: RecentTranscripts(time.Date(2026, 6, 30, 23, 0, 0, 0, time.UTC))})
	if err != nil || res.Transcripts[cp.TranscriptRef()] != FastForward {
		t.Fatalf("fetch of June's transcripts = %+v, %v", res, err)
	}
	if err := f.repo.WriteTranscript(&out, cp); err != nil || out.String() != readFile(t, a.transcript) {
		t.Errorf("WriteTranscript = %d bytes, %v; want the %d bytes of the turn", out.Len(), err, len(readFile(t, a.transcript)))
	}
	f.fsck(t)
}

// Pushing after another clone pushed merges the checkpoints and notes,
// and never fetches that clone's transcripts: each clone's are on refs of
// its own, which no one else writes.
func TestPushLeavesOthersTranscripts(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	ids := c.work(t, "a")
	c.push(t, 1)
	res := c.push(t, 0)
	if res.Merge == nil || res.Merge.Checkpoints != Merged || len(res.Merge.Transcripts) != 0 {
		t.Fatalf("push = %+v", res.Merge)
	}
	for _, id := range ids[1] {
		cp, err := c.clones[0].repo.Read(id)
		if err != nil {
			t.Fatal(err)
		}
		if blob := runGit(t, c.remote, "rev-parse", cp.Transcript.Ref+":"+id[:2]+"/"+id[2:]+"/transcript.jsonl"); hasObject(c.clones[0].dir, blob) {
			t.Errorf("clone 0 has clone 1's transcript of %s", id)
		}
	}
	refs := runGit(t, c.remote, "for-each-ref", "--format=%(refname)", "refs/tether/transcripts/")
	if strings.Count(refs, "\n") != 1 {
		t.Errorf("transcript refs on the remote:\n%s\nwant one per clone", refs)
	}
}

// Checkpoints go to the generation of their first turn's month; a push
// shares every generation of the clone's.
func TestTranscriptGenerations(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 1)
	f := c.clones[0]
	a := f.agent(t, "long")
	a.turn("in May")
	may := f.condense(t, "long")[0].Checkpoint
	a.clock = time.Date(2026, 6, 2, 9, 0, 0, 0, time.UTC)
	a.turn("in June")
	june := f.condense(t, "long")[0].Checkpoint
	clone, err := f.st.CloneID()
	if err != nil {
		t.Fatal(err)
	}
	for id, gen := range map[string]string{may: "2026-05", june: "2026-06"} {
		cp, err := f.repo.Read(id)
		if err != nil || cp.TranscriptRef() != TranscriptRef(gen, clone) {
			t.Errorf("%s: transcript on %s (%v), want %s", id, cp.TranscriptRef(), err, TranscriptRef(gen, clone))
		}
	}
	c.push(t, 0)
	for _, gen := range []string{"2026-05", "2026-06"} {
		runGit(t, c.remote, "rev-parse", "--verify", TranscriptRef(gen, clone).String())
	}
}

// Two clones of one store (copied by hand) share a clone name: their
// pushes meet on the same transcript ref, which merges like the others.
func TestSharedCloneNameMerges(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	name, err := c.clones[0].st.CloneID()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(c.clones[1].st.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.clones[1].st.Dir(), "clone"), []byte(name+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ids := c.work(t, "a")
	c.push(t, 0)
	res := c.push(t, 1)
	ref := TranscriptRef("2026-05", name)
	if res.Merge == nil || res.Merge.Transcripts[ref] != Merged {
		t.Fatalf("push = %+v", res.Merge)
	}
	c.fetch(t, 0)
	c.check(t, ids)
	for _, f := range c.clones {
		for _, id := range slices.Concat(ids...) {
			cp, err := f.repo.Read(id)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.repo.WriteTranscript(&strings.Builder{}, cp); err != nil && !errors.Is(err, ErrTranscriptNotFetched) {
				t.Error(err)
			}
		}
	}
	if got := runGit(t, c.remote, "ls-tree", "-r", "-d", "--name-only", ref.String()); strings.Count(got, "/") != 4 {
		t.Errorf("transcripts on the shared ref:\n%s", got)
	}
}

// A remote that an earlier tether pushed its branch to: a clone fetching
// from it migrates that branch (and the remote-tracking copy a plain git
// fetch made), and its push puts the checkpoints under the new refs and
// deletes the old branch there, unless someone pushed to it since, in
// which case the next push takes what they added.
func TestLegacyRemote(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 3)
	old, f := c.clones[0], c.clones[1]
	old.agent(t, "old-1").turn("pushed by an old tether")
	first := oldCondense(t, old, "old-1")[0]
	runGit(t, old.dir, "push", "-q", "origin", LegacyBranch)
	runGit(t, f.dir, "fetch", "-q", "origin") // the default refspec copies the branch
	runGit(t, f.dir, "rev-parse", "--verify", "refs/remotes/origin/tether/checkpoints/v1")

	res := c.fetch(t, 1)
	if res.Checkpoints != Migrated || len(res.Conflicts) != 0 {
		t.Fatalf("fetch = %+v", res)
	}
	if _, err := f.repo.Read(first); err != nil {
		t.Fatal(err)
	}
	if gitCmd(f.dir, "rev-parse", "--verify", "-q", "refs/remotes/origin/tether/checkpoints/v1").Run() == nil {
		t.Error("the remote-tracking copy is still there")
	}

	// The old tether pushes once more while the new one migrates.
	old.agent(t, "old-2").turn("pushed during the migration")
	var second string
	f.repo.hook = func(point, ref string) {
		if point == "before-ref" && ref == LegacyTranscripts && second == "" {
			second = oldCondense(t, old, "old-2")[0]
			runGit(t, old.dir, "push", "-q", "origin", LegacyBranch)
		}
	}
	runGit(t, f.dir, "update-ref", "-d", LegacyTranscripts) // so the push migrates again
	pushed := c.push(t, 1)
	f.repo.hook = nil
	if second == "" || pushed.Merge == nil {
		t.Fatalf("push = %+v", pushed)
	}
	if gitCmd(c.remote, "rev-parse", "--verify", "-q", LegacyBranch).Run() != nil {
		t.Fatal("the old branch was deleted though someone pushed to it")
	}
	c.push(t, 1)
	if gitCmd(c.remote, "rev-parse", "--verify", "-q", LegacyBranch).Run() == nil {
		t.Fatal("the old branch is still on the remote")
	}
	// A fresh clone finds everything under the new refs.
	g := c.clones[2]
	c.fetch(t, 2)
	var cps []*Checkpoint
	for _, id := range []string{first, second} {
		cp, err := g.repo.Read(id)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.repo.WriteTranscript(&strings.Builder{}, cp); !errors.Is(err, ErrTranscriptNotFetched) {
			t.Errorf("%s: transcript before fetching the legacy ref: %v", id, err)
		}
		cps = append(cps, cp)
	}
	if _, err := g.repo.Fetch(g.st, "origin", FetchOptions{Transcripts: TheseTranscripts(cps[0].TranscriptRef())}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"pushed by an old tether", "pushed during the migration"} {
		var out strings.Builder
		if err := g.repo.WriteTranscript(&out, cps[i]); err != nil || !strings.Contains(out.String(), want) {
			t.Errorf("%s: transcript %q, %v", cps[i].ID, out.String(), err)
		}
	}
	fsckAt(t, c.remote)
	g.fsck(t)
}
