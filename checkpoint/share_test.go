package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tetherdev/tether/state"
)

// cluster is a bare repository on disk and real clones of it, each with
// its own session store, sharing a first commit on main.
type cluster struct {
	remote string
	base   string // the shared commit
	clones []*fixture
}

func newCluster(t *testing.T, n int) *cluster {
	t.Helper()
	root := t.TempDir()
	c := &cluster{remote: filepath.Join(root, "remote.git")}
	runGit(t, root, "init", "-q", "--bare", "-b", "main", c.remote)
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("clone%d", i))
		runGit(t, root, "clone", "-q", c.remote, dir)
		f := attach(t, dir)
		if i == 0 {
			c.base = f.commit(t, "README", "shared\n")
			runGit(t, dir, "push", "-q", "origin", "main")
		}
		c.clones = append(c.clones, f)
	}
	return c
}

// work runs agents in every clone at once: each clone condenses turns of
// its own sessions and links them to the shared commit and to a commit of
// its own. It returns the checkpoint IDs made in each clone.
func (c *cluster) work(t *testing.T, tag string) [][]string {
	t.Helper()
	own := make([]string, len(c.clones))
	for i, f := range c.clones {
		own[i] = f.commit(t, fmt.Sprintf("clone%d-%s.txt", i, tag), tag+"\n")
		for s := range 2 {
			f.agent(t, fmt.Sprintf("c%d-%s-s%d", i, tag, s)).turn(fmt.Sprintf("task %d of clone %d", s, i))
		}
	}
	ids := make([][]string, len(c.clones))
	errs := make([]error, len(c.clones))
	var wg sync.WaitGroup
	for i, f := range c.clones {
		wg.Go(func() {
			sessions := []string{fmt.Sprintf("c%d-%s-s0", i, tag), fmt.Sprintf("c%d-%s-s1", i, tag)}
			res, err := f.repo.Condense(f.st, sessions, nil)
			if err != nil {
				errs[i] = err
				return
			}
			for _, r := range res {
				ids[i] = append(ids[i], r.Checkpoint)
			}
			errs[i] = errors.Join(f.repo.Link(c.base, ids[i]), f.repo.Link(own[i], ids[i]))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("clone %d: %v", i, err)
		}
		if len(ids[i]) != 2 {
			t.Fatalf("clone %d made checkpoints %q", i, ids[i])
		}
	}
	return ids
}

func (c *cluster) push(t *testing.T, i int) PushResult {
	t.Helper()
	f := c.clones[i]
	res, err := f.repo.Push(f.st, "origin", PushOptions{})
	if err != nil {
		t.Fatalf("clone %d: %v", i, err)
	}
	return res
}

func (c *cluster) fetch(t *testing.T, i int) FetchResult {
	t.Helper()
	f := c.clones[i]
	res, err := f.repo.Fetch(f.st, "origin", FetchOptions{})
	if err != nil {
		t.Fatalf("clone %d: %v", i, err)
	}
	return res
}

// check verifies that every clone holds every checkpoint, that the shared
// commit's note lists all of them in every clone, that each clone's own
// links survived, and that git fsck is clean everywhere.
func (c *cluster) check(t *testing.T, ids [][]string) {
	t.Helper()
	all := slices.Concat(ids...)
	tip := runGit(t, c.remote, "rev-parse", CheckpointsRef)
	for i, f := range c.clones {
		if got := runGit(t, f.dir, "rev-parse", CheckpointsRef); got != tip {
			t.Errorf("clone %d: branch at %s, remote at %s", i, got, tip)
		}
		dirs := runGit(t, f.dir, "ls-tree", "-d", "-r", "--name-only", CheckpointsRef)
		if n := strings.Count(dirs, "/"); n != len(all) {
			t.Errorf("clone %d: %d checkpoints on the branch, want %d:\n%s", i, n, len(all), dirs)
		}
		note := runGit(t, f.dir, "notes", "--ref=tether", "show", c.base)
		lines := strings.Split(note, "\n")
		for _, id := range all {
			if _, err := f.repo.Read(id); err != nil {
				t.Errorf("clone %d: %v", i, err)
			}
			if !slices.Contains(lines, "Tether-Checkpoint: "+id) {
				t.Errorf("clone %d: note on the shared commit lacks %s:\n%s", i, id, note)
			}
		}
		if n := strings.Count(note, "Tether-Checkpoint:"); n != len(all) {
			t.Errorf("clone %d: note on the shared commit has %d checkpoint lines, want %d:\n%s", i, n, len(all), note)
		}
		f.fsck(t)
	}
	fsckAt(t, c.remote)
}

// TestShareAcrossClones runs three clones that each condensed their own
// checkpoints through pushes and fetches in different orders ("p1" is
// clone 1 pushing, "f0" clone 0 fetching), then lets every clone fetch
// and push once more and fetch again, and checks that they all converge.
func TestShareAcrossClones(t *testing.T) {
	t.Parallel()
	for _, ops := range []string{
		"p0 p1 p2 f2 f1 f0",
		"f2 p2 f0 p0 f1 p1",
		"p2 f0 p1 f2 p0 f1 p2",
	} {
		t.Run(ops, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t, 3)
			ids := c.work(t, "a")
			for op := range strings.FieldsSeq(ops) {
				i := int(op[1] - '0')
				if op[0] == 'f' {
					c.fetch(t, i)
					continue
				}
				res := c.push(t, i)
				// The remote moved: the clone merged it (or, having
				// fetched since its last push, took it as it was).
				if m := res.Merge; m != nil && (m.Checkpoints == Absent || m.Checkpoints == UpToDate || m.Checkpoints != m.Notes || len(m.Conflicts) > 0) {
					t.Errorf("%s: merge %+v", op, *res.Merge)
				}
			}
			for i := range c.clones {
				c.fetch(t, i)
				c.push(t, i)
			}
			for i := range c.clones {
				if res := c.fetch(t, i); i == len(c.clones)-1 && (res.Checkpoints != UpToDate || res.Notes != UpToDate) {
					t.Errorf("the last to push fetched %+v, want up to date", res)
				}
			}
			c.check(t, ids)
		})
	}
}

func TestShareRedactsEverywhere(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	tok := fakeGitHubToken()
	a := c.clones[0].agent(t, "leaky")
	a.turnStart("deploy with " + tok)
	a.write(`{"type":"tool_result","content":"GITHUB_TOKEN=` + tok + `"}`)
	a.turnEnd()
	c.clones[0].condense(t, "leaky")
	c.clones[1].agent(t, "clean").turn("nothing secret")
	c.clones[1].condense(t, "clean")
	c.push(t, 0)
	c.push(t, 1)
	c.fetch(t, 0)
	for _, dir := range []string{c.clones[0].dir, c.clones[1].dir, c.remote} {
		assertNoSecret(t, dir, tok)
	}
	if got := runGit(t, c.clones[1].dir, "grep", "-c", "REDACTED:github-token", CheckpointsRef, "--"); !strings.Contains(got, "prompts.md:1") {
		t.Errorf("markers on the merged checkpoints:\n%s", got)
	}
	cp, err := c.clones[1].repo.Read(a.load().Checkpoints[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, c.remote, "grep", "-c", "REDACTED:github-token", cp.Transcript.Ref, "--"); !strings.Contains(got, "transcript.jsonl:1") {
		t.Errorf("markers in the transcript on the remote:\n%s", got)
	}
}

func TestPushRemoteMoved(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	ids := c.work(t, "a")
	c.push(t, 1)
	res := c.push(t, 0)
	if res.Merge == nil || res.Merge.Checkpoints != Merged || res.Merge.Notes != Merged {
		t.Fatalf("push after the remote moved: %+v", res)
	}
	for _, s := range res.Refs {
		// The transcripts went through the first time: no other clone
		// writes them.
		if want := byte(' '); isTranscriptRef(plumbing.ReferenceName(s.To)) && s.Flag != '=' || !isTranscriptRef(plumbing.ReferenceName(s.To)) && s.Flag != want {
			t.Errorf("second attempt: %+v", s)
		}
	}
	c.fetch(t, 1)
	c.check(t, ids)
	if parents := runGit(t, c.remote, "log", "-1", "--format=%P", CheckpointsRef); strings.Count(parents, " ") != 1 {
		t.Errorf("remote tip has parents %q, want a merge", parents)
	}
}

// The remote moves again while the push merges: the second attempt is
// refused, reported, and the next push gets through.
func TestPushRemoteMovesTwice(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	ids := c.work(t, "a")
	c.push(t, 1)
	more := c.clones[1].agent(t, "racer")
	more.turn("pushed during the merge")
	raced := false
	c.clones[0].repo.hook = func(point, ref string) {
		if point != "before-ref" || ref != CheckpointsRef || raced {
			return
		}
		raced = true
		id := c.clones[1].condense(t, "racer")[0].Checkpoint
		if err := c.clones[1].repo.Link(c.base, []string{id}); err != nil {
			t.Error(err)
		}
		c.push(t, 1)
	}
	_, err := c.clones[0].repo.Push(c.clones[0].st, "origin", PushOptions{})
	if !raced || !errors.Is(err, ErrPushRejected) {
		t.Fatalf("raced=%v, push error %v, want ErrPushRejected", raced, err)
	}
	c.push(t, 0)
	c.fetch(t, 1)
	ids[1] = append(ids[1], more.load().Checkpoints[0].ID)
	c.check(t, [][]string{ids[0], ids[1]})
}

func TestMergeConflictKeepsBoth(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	// One session record copied into two clones (a store copied by hand):
	// the same checkpoint ID, with different contents.
	for i, f := range c.clones {
		a := f.agent(t, "same")
		a.mutate(func(tx *state.Tx) error { tx.Session.Incarnation = "copied"; return nil })
		a.turn(fmt.Sprintf("prompt in clone %d", i))
		f.condense(t, "same")
	}
	id := checkpointID("same", "copied", 0)
	dir := id[:2] + "/" + id[2:]
	theirs := map[string]string{}
	for _, name := range []string{"checkpoint.json", "prompts.md"} {
		theirs[name] = runGit(t, c.clones[0].dir, "rev-parse", CheckpointsRef+":"+dir+"/"+name)
	}
	c.push(t, 0)
	res := c.push(t, 1)
	// The transcripts do not meet: each clone's are on refs of its own.
	if res.Merge == nil || len(res.Merge.Conflicts) != 2 {
		t.Fatalf("merge %+v, want 2 conflicts", res.Merge)
	}
	for _, cf := range res.Merge.Conflicts {
		name := filepath.Base(cf.Path)
		want := dir + "/" + besideName(name, plumbing.NewHash(theirs[name]))
		if cf.Ref != CheckpointsRef || cf.Theirs != want || !strings.HasPrefix(cf.Path, dir+"/") || !strings.Contains(cf.String(), "kept ours") {
			t.Errorf("conflict %+v, want theirs at %s", cf, want)
		}
	}
	if !strings.Contains(runGit(t, c.clones[1].dir, "show", CheckpointsRef+":"+dir+"/prompts.md"), "prompt in clone 1") {
		t.Error("ours is not at its path")
	}
	c.fetch(t, 0)
	for i, f := range c.clones {
		files := runGit(t, f.dir, "ls-tree", "--name-only", CheckpointsRef+":"+dir)
		if strings.Count(files, "\n") != 3 || !strings.Contains(files, "checkpoint.theirs-") {
			t.Errorf("clone %d: files of %s:\n%s", i, id, files)
		}
		var both string
		for name := range strings.Lines(files) {
			if strings.HasPrefix(name, "prompts") {
				both += runGit(t, f.dir, "show", CheckpointsRef+":"+dir+"/"+strings.TrimSpace(name))
			}
		}
		if !strings.Contains(both, "prompt in clone 0") || !strings.Contains(both, "prompt in clone 1") {
			t.Errorf("clone %d: prompts kept:\n%s", i, both)
		}
		if got, err := f.repo.Read(id); err != nil || got.Turns[0].Prompt != "prompt in clone 1" {
			t.Errorf("clone %d: Read = %+v, %v", i, got, err)
		}
		all, err := f.repo.ReadVariants(id)
		if err != nil || len(all) != 2 || all[0].Turns[0].Prompt != "prompt in clone 1" || all[1].Turns[0].Prompt != "prompt in clone 0" {
			t.Errorf("clone %d: ReadVariants = %+v, %v; want ours, then theirs", i, all, err)
		}
		f.fsck(t)
	}
	// Merging the same sides again finds nothing new.
	if res := c.fetch(t, 1); res.Checkpoints != UpToDate || len(res.Conflicts) != 0 {
		t.Errorf("fetch again: %+v", res)
	}
}

// The same agent session recorded in two clones never shares a checkpoint
// ID: each clone's record of it has its own incarnation.
func TestSameSessionInTwoClonesGetsTwoCheckpoints(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	var ids []string
	for i, f := range c.clones {
		f.agent(t, "same").turn(fmt.Sprintf("prompt in clone %d", i))
		ids = append(ids, f.condense(t, "same")[0].Checkpoint)
	}
	if ids[0] == ids[1] {
		t.Fatalf("both clones named their checkpoint %s", ids[0])
	}
	c.push(t, 0)
	if res := c.push(t, 1); res.Merge == nil || len(res.Merge.Conflicts) != 0 {
		t.Fatalf("merge %+v, want no conflict", res.Merge)
	}
	c.fetch(t, 0)
	for i, id := range ids {
		got, err := c.clones[0].repo.Read(id)
		if err != nil || got.Turns[0].Prompt != fmt.Sprintf("prompt in clone %d", i) {
			t.Errorf("checkpoint %s = %+v, %v", id, got, err)
		}
	}
}

// A checkpoint rewritten in one clone after another clone fetched it is
// taken as rewritten: the other clone never changed it.
func TestMergeTakesRewrittenCheckpoint(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	a := c.clones[0].agent(t, "dying")
	a.turnStart("long task")
	a.write(`{"step":1}`)
	id := c.clones[0].condense(t, "dying")[0].Checkpoint
	c.push(t, 0)
	c.clones[1].agent(t, "other").turn("unrelated")
	c.clones[1].condense(t, "other")
	c.fetch(t, 1)
	c.push(t, 1)
	a.write(`{"step":2}`)
	a.end("interrupted", true)
	if res := c.clones[0].condense(t, "dying"); len(res) != 1 || res[0].Checkpoint != id {
		t.Fatalf("rewrite = %+v", res)
	}
	res := c.push(t, 0)
	if res.Merge == nil || res.Merge.Checkpoints != Merged || len(res.Merge.Conflicts) != 0 {
		t.Fatalf("merge %+v, want a clean merge", res.Merge)
	}
	c.fetch(t, 1)
	for i, f := range c.clones {
		cp, err := f.repo.Read(id)
		if err != nil || !cp.Turns[0].Interrupted {
			t.Errorf("clone %d: %+v, %v; want the rewritten checkpoint", i, cp, err)
		}
	}
}

func TestMergeNotesLayouts(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	ids := c.work(t, "a") // tether writes fanout paths
	// A person adds a note in clone 1 with git: git writes it flat, and
	// it merges with tether's fanout note on the same commit.
	extra := c.clones[1].commit(t, "human.txt", "h\n")
	runGit(t, c.clones[1].dir, "notes", "--ref=tether", "append", "-m", "Reviewed by a human.", c.base)
	runGit(t, c.clones[1].dir, "notes", "--ref=tether", "add", "-m", "Only a human note.", extra)
	runGit(t, c.clones[1].dir, "push", "-q", "origin", "main")
	runGit(t, c.clones[0].dir, "pull", "-q", "--no-rebase", "origin", "main")
	c.push(t, 0)
	c.push(t, 1)
	c.fetch(t, 0)
	c.check(t, ids)
	for i, f := range c.clones {
		note := runGit(t, f.dir, "notes", "--ref=tether", "show", c.base)
		if !strings.HasPrefix(note, "Reviewed by a human.\n\nTether-Checkpoint: ") || strings.Count(note, "Reviewed") != 1 {
			t.Errorf("clone %d: merged note:\n%s", i, note)
		}
		if got := runGit(t, f.dir, "notes", "--ref=tether", "show", extra); got != "Only a human note." {
			t.Errorf("clone %d: note on %s = %q", i, extra[:8], got)
		}
		// One note per annotated commit: no commit has notes at two paths.
		list := runGit(t, f.dir, "notes", "--ref=tether", "list")
		seen := map[string]bool{}
		for line := range strings.Lines(list) {
			obj := strings.Fields(line)[1]
			if seen[obj] {
				t.Errorf("clone %d: %s has two notes:\n%s", i, obj, list)
			}
			seen[obj] = true
		}
	}
}

// Merging one new checkpoint from each side into a history of 1,000 reads
// and writes the trees on the paths of the new entries, not the history.
func TestMergeSparse(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	for _, f := range c.clones {
		f.repo.rollAt = 2000 // a merge of two unrolled tips (see TestMergeOfRolledTips)
	}
	prebuild(t, c.clones[0], 1000)
	c.push(t, 0)
	c.fetch(t, 1)
	for i, f := range c.clones {
		f.agent(t, fmt.Sprintf("sparse-%d", i)).turn("one")
		f.condense(t, fmt.Sprintf("sparse-%d", i))
	}
	c.push(t, 0)
	track, trackNotes := Tracking("origin", CheckpointsRef), Tracking("origin", NotesRef)
	runGit(t, c.clones[1].dir, "fetch", "-q", "origin", "+"+CheckpointsRef+":"+track.String())
	theirs := plumbing.NewHash(runGit(t, c.clones[1].dir, "rev-parse", track.String()))
	before := objects(t, c.clones[1].dir)
	read := map[string]bool{}
	c.clones[1].repo.hook = func(point, h string) {
		if point == "read-tree" {
			read[h] = true
		}
	}
	res, err := c.clones[1].repo.Merge(c.clones[1].st, Tips{Checkpoints: theirs})
	c.clones[1].repo.hook = nil
	if err != nil || res.Checkpoints != Merged || res.Notes != Absent {
		t.Fatalf("Merge = %+v, %v", res, err)
	}
	// The three roots (ours, theirs, their base); an xx/ tree changed on
	// one side only is taken by its hash, unread (the three xx/ trees too
	// when both new checkpoints share one). A walk would read some 250.
	if len(read) > 6 {
		t.Errorf("the merge read %d trees, want at most 6", len(read))
	}
	// The root, at most two xx/ trees, the merge commit.
	if got := added(before, objects(t, c.clones[1].dir)); len(got) > 4 {
		t.Errorf("the merge wrote %d objects (%v), want at most 4", len(got), got)
	}
	if n := strings.Count(runGit(t, c.clones[1].dir, "ls-tree", "-d", "-r", "--name-only", CheckpointsRef), "/"); n != 1002 {
		t.Errorf("%d checkpoints after the merge, want 1002", n)
	}
	if _, err := os.Stat(filepath.Join(c.clones[1].common, filepath.FromSlash(trackNotes.String()))); err == nil {
		t.Error("fetching from a remote without notes wrote a notes tracking ref")
	}
	c.clones[1].fsck(t)
}

func TestShareNothingAndErrors(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	if res := c.push(t, 0); !res.Nothing || res.Refs != nil {
		t.Errorf("push without a branch = %+v", res)
	}
	if res := c.fetch(t, 1); !res.Empty || res.Checkpoints != Absent || res.Notes != Absent {
		t.Errorf("fetch from a remote without checkpoints = %+v", res)
	}
	c.clones[0].agent(t, "s").turn("one")
	c.clones[0].condense(t, "s")
	// Checkpoints without notes: the checkpoints and their transcripts are
	// pushed, and the checkpoints fetched.
	if res := c.push(t, 0); len(res.Refs) != 2 || res.Refs[0].Flag != '*' || res.Refs[0].To != CheckpointsRef || res.Refs[1].Flag != '*' {
		t.Errorf("first push = %+v", res)
	}
	if res := c.push(t, 0); len(res.Refs) != 2 || res.Refs[0].Flag != '=' || res.Refs[1].Flag != '=' {
		t.Errorf("second push = %+v", res)
	}
	if res := c.fetch(t, 1); res.Empty || res.Checkpoints != FastForward || res.Notes != Absent {
		t.Errorf("fetch = %+v", res)
	}
	f := c.clones[0]
	// A missing remote: one line that says why, git's whole say kept aside.
	_, pushErr := f.repo.Push(f.st, "no-such-remote", PushOptions{})
	_, fetchErr := f.repo.Fetch(f.st, "no-such-remote", FetchOptions{})
	for _, err := range []error{pushErr, fetchErr} {
		var ge *GitError
		if err == nil || !errors.As(err, &ge) || strings.Contains(err.Error(), "\n") ||
			!strings.Contains(err.Error(), "fatal: 'no-such-remote' does not appear to be a git repository") ||
			!strings.Contains(ge.Stderr, "Could not read from remote repository") {
			t.Errorf("a missing remote: %q (%#v); want one line naming it, git's stderr in GitError", err, ge)
		}
	}
	// A server hook that refuses the push: reported, not retried.
	hook := filepath.Join(c.remote, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'checkpoints are frozen' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.agent(t, "s2").turn("two")
	f.condense(t, "s2")
	res, err := f.repo.Push(f.st, "origin", PushOptions{})
	if !errors.Is(err, ErrPushRejected) || res.Merge != nil || len(res.Refs) != 2 || res.Refs[0].Summary != "[remote rejected]" {
		t.Errorf("push refused by the server: %+v, %v", res, err)
	}
}

// A checkpoint purged from the branch by hand (a leaked secret, say) stays
// purged when a clone that still has it merges.
func TestMergeHonoursPurge(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	c.clones[0].agent(t, "leak").turn("oops")
	id := c.clones[0].condense(t, "leak")[0].Checkpoint
	c.clones[0].agent(t, "keep").turn("fine")
	kept := c.clones[0].condense(t, "keep")[0].Checkpoint
	c.push(t, 0)
	c.fetch(t, 1)
	// Purged with git in a worktree of the branch, and pushed.
	wt := filepath.Join(t.TempDir(), "purge")
	runGit(t, c.clones[0].dir, "worktree", "add", "-q", "--detach", wt, "tether/checkpoints/v1")
	runGit(t, wt, "rm", "-q", "-r", id[:2]+"/"+id[2:])
	runGit(t, wt, "commit", "-q", "-m", "purge "+id)
	runGit(t, wt, "update-ref", CheckpointsRef, "HEAD")
	c.push(t, 0)
	// Clone 1 adds a checkpoint of its own, then merges the purge.
	c.clones[1].agent(t, "later").turn("more")
	c.clones[1].condense(t, "later")
	if res := c.push(t, 1); res.Merge == nil || res.Merge.Checkpoints != Merged {
		t.Fatalf("push = %+v", res)
	}
	c.fetch(t, 0)
	for i, f := range c.clones {
		if _, err := f.repo.Read(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("clone %d: the purged checkpoint came back: %v", i, err)
		}
		if _, err := f.repo.Read(kept); err != nil {
			t.Errorf("clone %d: %v", i, err)
		}
		f.fsck(t)
	}
}

// A note removed on one side, and not changed on the other since, stays
// removed; a note changed on both sides merges line by line.
func TestMergeNoteRemoval(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 2)
	c.work(t, "a")
	c.push(t, 0)
	c.push(t, 1)
	c.fetch(t, 0)
	// Clone 1 removes the note on the shared commit; clone 0 links a new
	// checkpoint to its own commit meanwhile.
	runGit(t, c.clones[1].dir, "notes", "--ref=tether", "remove", c.base)
	c.clones[1].agent(t, "one-more").turn("x")
	c.clones[1].condense(t, "one-more")
	f := c.clones[0]
	f.agent(t, "later").turn("y")
	id := f.condense(t, "later")[0].Checkpoint
	own := f.commit(t, "later.txt", "later\n")
	if err := f.repo.Link(own, []string{id}); err != nil {
		t.Fatal(err)
	}
	c.push(t, 0)
	if res := c.push(t, 1); res.Merge == nil || res.Merge.Notes != Merged {
		t.Fatalf("push = %+v", res)
	}
	c.fetch(t, 0)
	for i, f := range c.clones {
		if out, err := gitCmd(f.dir, "notes", "--ref=tether", "show", c.base).CombinedOutput(); err == nil {
			t.Errorf("clone %d: the removed note came back:\n%s", i, out)
		}
		// Clone 1 lacks the commit; git shows its note by full hash.
		if note := runGit(t, f.dir, "notes", "--ref=tether", "show", own); note != "Tether-Checkpoint: "+id {
			t.Errorf("clone %d: note on %s = %q", i, own[:8], note)
		}
		f.fsck(t)
	}
}

func TestGitMessage(t *testing.T) {
	for _, tc := range []struct{ stderr, want string }{
		{"fatal: 'x' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\n", "fatal: 'x' does not appear to be a git repository"},
		{"remote: checkpoints are frozen\nerror: failed to push some refs to 'r'\n", "error: failed to push some refs to 'r'"},
		{"warning: something\n", "warning: something"},
		{"fatal: remote says \x1b[31mno\x1b[0m\r\n", "fatal: remote says  [31mno [0m"},
		{"", ""},
	} {
		if got := gitMessage(tc.stderr); got != tc.want {
			t.Errorf("gitMessage(%q) = %q, want %q", tc.stderr, got, tc.want)
		}
	}
}
