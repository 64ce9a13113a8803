package checkpoint

import (
	"fmt"
	"strings"
	"testing"
)

// tipCheckpoints counts the checkpoints the tree of CheckpointsRef's tip
// holds itself, read with plain git.
func tipCheckpoints(t *testing.T, f *fixture) int {
	t.Helper()
	return strings.Count(runGit(t, f.dir, "ls-tree", "-d", "-r", "--name-only", CheckpointsRef), "/")
}

// The tip of CheckpointsRef holds at most rollAt checkpoints: past that a
// condense rolls, and the older ones stay in the trees of the commits its
// archive file names, still read, linked and shown by ID or prefix, and
// readable with plain git.
func TestRollKeepsTheTipSmall(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.repo.rollAt = 3
	var ids []string
	for i := range 8 {
		name := fmt.Sprintf("roll-%d", i)
		f.agent(t, name).turn("turn of " + name)
		ids = append(ids, f.condense(t, name)[0].Checkpoint)
		if n := tipCheckpoints(t, f); n > 3 || n < 1 {
			t.Fatalf("after %d checkpoints the tip holds %d", i+1, n)
		}
	}
	archived := runGit(t, f.dir, "show", CheckpointsRef+":"+archiveFile)
	if got := runGit(t, f.dir, "merge-base", "--is-ancestor", archived, CheckpointsRef); got != "" {
		t.Errorf("merge-base: %s", got)
	}
	for _, id := range ids {
		for _, ask := range []string{id, id[:6]} {
			cp, err := f.repo.Read(ask)
			if err != nil || cp.ID != id {
				t.Errorf("Read(%s) = %+v, %v", ask, cp, err)
			}
		}
	}
	// The first checkpoint is two rolls back; git reads it where the
	// archive chain says.
	first := runGit(t, f.dir, "log", "--format=%H", "--grep", ids[0], CheckpointsRef)
	if out := runGit(t, f.dir, "show", first+":"+ids[0][:2]+"/"+ids[0][2:]+"/checkpoint.json"); !strings.Contains(out, ids[0]) {
		t.Errorf("git show of the archived checkpoint: %s", out)
	}
	if err := f.repo.Link(f.commit(t, "a.txt", "a\n"), ids[:1]); err != nil {
		t.Errorf("linking an archived checkpoint: %v", err)
	}
	if _, err := f.repo.Read("ffffffffffffffff"); err == nil {
		t.Error("an unknown ID was found")
	}
	f.fsck(t)
}

// Two clones that both rolled merge without a conflict: the merged tip's
// archive names both archived tips, and every checkpoint of both is found.
func TestMergeOfRolledTips(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	var all []string
	for i, f := range c.clones {
		f.repo.rollAt = 2
		for k := range 3 {
			name := fmt.Sprintf("clone%d-%d", i, k)
			f.agent(t, name).turn("one")
			all = append(all, f.condense(t, name)[0].Checkpoint)
		}
	}
	c.push(t, 0)
	if res := c.fetch(t, 1); res.Checkpoints != Merged || len(res.Conflicts) != 0 {
		t.Fatalf("fetch into clone 1 = %+v", res)
	}
	c.push(t, 1)
	c.fetch(t, 0)
	for i, f := range c.clones {
		if lines := strings.Fields(runGit(t, f.dir, "show", CheckpointsRef+":"+archiveFile)); len(lines) != 2 {
			t.Errorf("clone %d: archive names %v, want both rolled tips", i, lines)
		}
		for _, id := range all {
			if _, err := f.repo.Read(id); err != nil {
				t.Errorf("clone %d: %v", i, err)
			}
		}
		f.fsck(t)
	}
}
