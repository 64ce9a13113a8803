package checkpoint

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The tree of CheckpointsRef's tip holds the checkpoints added since the
// ref last rolled; the older ones stay in the trees of earlier commits of
// the ref, which the archive file at the root names, one commit a line
// (whose trees may name older ones in turn). Why: the connectivity check
// of the git that receives a push reads the whole tree of the pushed
// ref's old tip, but not the trees of its ancestors; a tip tree holding
// every checkpoint made each push cost the whole history.
const archiveFile = "archive"

// defaultRollAt is how many checkpoints the tip's tree holds before the
// next condense rolls: a push reads at most that many checkpoint trees,
// and a lookup of an older checkpoint one more tree per roll.
const defaultRollAt = 1000

// recentTrailer, in the message of a commit of CheckpointsRef, counts the
// checkpoints its own tree holds, so a condense knows when to roll
// without reading the tree.
const recentTrailer = "Tether-Recent: "

// archives lists the commits the archive file at root names.
func (r *Repo) archives(root plumbing.Hash) ([]plumbing.Hash, error) {
	e, ok, err := r.lookup(root, archiveFile)
	if err != nil || !ok || e.Mode != filemode.Regular {
		return nil, err
	}
	data, err := r.readBlob(e.Hash)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", archiveFile, err)
	}
	var out []plumbing.Hash
	for _, line := range strings.Fields(string(data)) {
		if !plumbing.IsHash(line) {
			return nil, fmt.Errorf("read %s: %q is not a commit", archiveFile, line)
		}
		out = append(out, plumbing.NewHash(line))
	}
	return out, nil
}

// eachRoot calls fn with root, the tree of CheckpointsRef's tip, then
// with each tree its archive reaches, newest first and each once, until
// fn says stop.
func (r *Repo) eachRoot(root plumbing.Hash, fn func(tree plumbing.Hash) (stop bool, err error)) error {
	queue, seen := []plumbing.Hash{root}, map[plumbing.Hash]bool{}
	for len(queue) > 0 {
		tree := queue[0]
		queue = queue[1:]
		if tree.IsZero() || seen[tree] {
			continue
		}
		seen[tree] = true
		if stop, err := fn(tree); err != nil || stop {
			return err
		}
		commits, err := r.archives(tree)
		if err != nil {
			return err
		}
		for _, c := range commits {
			t, err := r.commitTree(c)
			if err != nil {
				return fmt.Errorf("archived checkpoints: %w", err)
			}
			queue = append(queue, t)
		}
	}
	return nil
}

// has reports whether the checkpoint id (a whole ID) is on CheckpointsRef,
// root being its tip's tree.
func (r *Repo) has(root plumbing.Hash, id string) (bool, error) {
	found := false
	err := r.eachRoot(root, func(tree plumbing.Hash) (bool, error) {
		_, ok, err := r.lookup(tree, id[:2], id[2:])
		found = ok
		return ok, err
	})
	return found, err
}

// recent counts the checkpoints the tree root of commit tip holds itself:
// from the commit's recentTrailer, else (a merge, a commit of an older
// tether) by reading the tree.
func (r *Repo) recent(tip, root plumbing.Hash) (int, error) {
	if tip.IsZero() {
		return 0, nil
	}
	c, err := object.GetCommit(r.st, tip)
	if err != nil {
		return 0, fmt.Errorf("read commit %s: %w", tip, err)
	}
	for line := range strings.Lines(c.Message) {
		if n, ok := strings.CutPrefix(strings.TrimSpace(line), recentTrailer); ok {
			if v, err := strconv.Atoi(n); err == nil && v >= 0 {
				return v, nil
			}
		}
	}
	shards, err := r.treeEntries(root)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range shards {
		if s.Mode != filemode.Dir || len(s.Name) != 2 {
			continue
		}
		entries, err := r.treeEntries(s.Hash)
		if err != nil {
			return 0, err
		}
		n += len(entries)
	}
	return n, nil
}

// unionArchive merges two archive files: every commit either names.
func unionArchive(ours, theirs string) string {
	all := slices.Concat(strings.Fields(ours), strings.Fields(theirs))
	slices.Sort(all)
	return strings.Join(slices.Compact(all), "\n") + "\n"
}
