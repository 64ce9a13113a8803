package checkpoint

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tetherdev/tether/state"
)

// Outcome says how a ref took in the other side of a merge.
type Outcome string

const (
	// Absent: the other side has no such ref; nothing to merge.
	Absent Outcome = "absent"
	// UpToDate: the other side was already part of ours.
	UpToDate Outcome = "up-to-date"
	// FastForward: ours was part of the other side; the ref moved to it.
	FastForward Outcome = "fast-forward"
	// Merged: both sides had commits of their own; a merge commit with
	// both as parents joins them.
	Merged Outcome = "merged"
)

// Conflict is a path that holds different bytes on each side of a merge.
// Ours stays at Path; theirs is kept beside it, at Theirs.
type Conflict struct {
	Ref    plumbing.ReferenceName `json:"ref"`
	Path   string                 `json:"path"`
	Theirs string                 `json:"theirs"`
}

func (c Conflict) String() string {
	return fmt.Sprintf("%s: %s differs on each side; kept ours, and theirs as %s", c.Ref.Short(), c.Path, c.Theirs)
}

// MergeResult is what Merge did to the branch and to the notes.
type MergeResult struct {
	Branch    Outcome    `json:"branch"`
	Notes     Outcome    `json:"notes"`
	Conflicts []Conflict `json:"conflicts,omitempty"`
}

// Merge brings another copy's checkpoints branch and notes (the commits
// theirsBranch and theirsNotes, zero when that side has none, their
// objects already in this repository, as after a fetch) into ours.
//
// Each ref fast-forwards when it can. Otherwise a merge commit with ours
// and theirs as parents gets a three-way merge of the trees against their
// merge bases: what changed on one side only is taken, and subtrees equal
// on both sides (or unchanged on one) are reused by hash, never walked, so
// the cost follows the difference, not the size of the branch.
//
//   - Branch: checkpoint IDs are unique, so the trees are in effect a
//     union. A file that changed on both sides to different bytes is a
//     Conflict: ours stays, theirs is kept beside it
//     (checkpoint.json -> checkpoint.theirs-<hash>.json).
//   - Notes: for each annotated commit whose note changed on both sides,
//     the two notes are merged line by line (unionNote), checkpoint lines
//     deduplicated; notes may sit at fanout or flat paths on either side.
//
// Merge holds the store's checkpoints lock and moves each ref by
// compare-and-swap, merging again on the new tip if another writer moved it.
func (r *Repo) Merge(st *state.Store, theirsBranch, theirsNotes plumbing.Hash) (res MergeResult, err error) {
	unlock, err := st.Lock(lockName)
	if err != nil {
		return res, fmt.Errorf("merge: %w", err)
	}
	defer func() {
		if uerr := unlock(); uerr != nil {
			err = errors.Join(err, fmt.Errorf("merge: release lock: %w", uerr))
		}
	}()
	if err := r.refresh(); err != nil {
		return res, fmt.Errorf("merge: %w", err)
	}
	var conflicts []Conflict
	// The branch first: a note names checkpoints, which should be there.
	if res.Branch, conflicts, err = r.mergeRef(Branch, theirsBranch, mergeTrees); err != nil {
		return res, fmt.Errorf("merge %s: %w", Branch, err)
	}
	res.Conflicts = append(res.Conflicts, conflicts...)
	if res.Notes, conflicts, err = r.mergeRef(NotesRef, theirsNotes, mergeNotes); err != nil {
		return res, fmt.Errorf("merge %s: %w", NotesRef, err)
	}
	res.Conflicts = append(res.Conflicts, conflicts...)
	return res, nil
}

// treeMerger merges the tree theirs into ours, given the trees of the
// merge bases, writing new trees into b.
type treeMerger func(b *batch, ref plumbing.ReferenceName, ours, theirs plumbing.Hash, bases []plumbing.Hash) (plumbing.Hash, []Conflict, error)

// mergeRef merges commit theirs into the ref name.
func (r *Repo) mergeRef(name plumbing.ReferenceName, theirs plumbing.Hash, merge treeMerger) (Outcome, []Conflict, error) {
	if theirs.IsZero() {
		return Absent, nil, nil
	}
	if _, err := object.GetCommit(r.st, theirs); err != nil {
		return "", nil, fmt.Errorf("their commit %s: %w", theirs, err)
	}
	b := r.newBatch()
	defer b.discard()
	for range casAttempts {
		ours, err := r.readRef(name)
		if err != nil {
			return "", nil, err
		}
		if ours == theirs {
			return UpToDate, nil, nil
		}
		var bases []plumbing.Hash
		if !ours.IsZero() {
			if bases, err = r.mergeBases(ours, theirs); err != nil {
				return "", nil, err
			}
		}
		switch {
		case slices.Contains(bases, theirs):
			return UpToDate, nil, nil
		case ours.IsZero() || slices.Contains(bases, ours):
			r.callHook("before-ref", name.String())
			err := r.casRef(name, theirs, ours)
			if errors.Is(err, errRefChanged) {
				continue
			}
			if err != nil {
				return "", nil, err
			}
			return FastForward, nil, nil
		}
		oursRoot, err := r.commitTree(ours)
		if err != nil {
			return "", nil, err
		}
		theirsRoot, err := r.commitTree(theirs)
		if err != nil {
			return "", nil, err
		}
		baseRoots := make([]plumbing.Hash, 0, len(bases))
		for _, h := range bases {
			root, err := r.commitTree(h)
			if err != nil {
				return "", nil, err
			}
			baseRoots = append(baseRoots, root)
		}
		root, conflicts, err := merge(b, name, oursRoot, theirsRoot, baseRoots)
		if err != nil {
			return "", nil, err
		}
		var msg strings.Builder
		fmt.Fprintf(&msg, "tether: merge %s\n", theirs.String()[:12])
		if len(conflicts) > 0 {
			msg.WriteString("\nConflicts (ours kept in place, theirs beside it):\n")
			for _, c := range conflicts {
				fmt.Fprintf(&msg, "  %s -> %s\n", c.Path, c.Theirs)
			}
		}
		c, err := b.writeCommit(root, msg.String(), ours, theirs)
		if err != nil {
			return "", nil, err
		}
		if err := b.flush(); err != nil {
			return "", nil, err
		}
		r.callHook("before-ref", name.String())
		err = r.casRef(name, c, ours)
		if errors.Is(err, errRefChanged) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		return Merged, conflicts, nil
	}
	return "", nil, fmt.Errorf("update %s: lost the race %d times", name, casAttempts)
}

// mergeBases returns the best common ancestors of two commits (none for
// unrelated histories, such as two clones that each started the branch).
func (r *Repo) mergeBases(a, b plumbing.Hash) ([]plumbing.Hash, error) {
	ca, err := object.GetCommit(r.st, a)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", a, err)
	}
	cb, err := object.GetCommit(r.st, b)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", b, err)
	}
	found, err := ca.MergeBase(cb)
	if err != nil {
		return nil, fmt.Errorf("merge base of %s and %s: %w", a, b, err)
	}
	bases := make([]plumbing.Hash, 0, len(found))
	for _, c := range found {
		bases = append(bases, c.Hash)
	}
	return bases, nil
}

// mergeTrees is the treeMerger of the checkpoints branch.
func mergeTrees(b *batch, ref plumbing.ReferenceName, ours, theirs plumbing.Hash, bases []plumbing.Hash) (plumbing.Hash, []Conflict, error) {
	var conflicts []Conflict
	h, err := b.mergeTree(ref, "", ours, theirs, bases, &conflicts)
	return h, conflicts, err
}

// mergeTree merges tree theirs into tree ours, dir being their path and
// bases the trees at that path in the merge bases. A side equal to a base
// version did not change: the other side wins whole, by hash.
func (b *batch) mergeTree(ref plumbing.ReferenceName, dir string, ours, theirs plumbing.Hash, bases []plumbing.Hash, conflicts *[]Conflict) (plumbing.Hash, error) {
	switch {
	case ours == theirs || theirs.IsZero() || slices.Contains(bases, theirs):
		return ours, nil
	case ours.IsZero() || slices.Contains(bases, ours):
		return theirs, nil
	}
	oursEntries, err := b.r.treeEntries(ours)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	theirsEntries, err := b.r.treeEntries(theirs)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	baseEntries := make([][]object.TreeEntry, 0, len(bases))
	for _, h := range bases {
		entries, err := b.r.treeEntries(h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		baseEntries = append(baseEntries, entries)
	}
	out := map[string]object.TreeEntry{}
	for _, e := range oursEntries {
		out[e.Name] = e
	}
	for _, t := range theirsEntries {
		o, ok := out[t.Name]
		switch {
		case !ok:
			out[t.Name] = t
			continue
		case o.Hash == t.Hash && o.Mode == t.Mode:
			continue
		}
		isDir := o.Mode == filemode.Dir && t.Mode == filemode.Dir
		var was []plumbing.Hash // this entry in the bases, same kind
		for _, entries := range baseEntries {
			if i := slices.IndexFunc(entries, func(e object.TreeEntry) bool { return e.Name == t.Name }); i >= 0 && (entries[i].Mode == filemode.Dir) == isDir {
				was = append(was, entries[i].Hash)
			}
		}
		if isDir {
			h, err := b.mergeTree(ref, path.Join(dir, t.Name), o.Hash, t.Hash, was, conflicts)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			out[t.Name] = treeEntry(t.Name, h)
			continue
		}
		switch {
		case slices.Contains(was, t.Hash) && o.Mode == t.Mode:
			continue // theirs unchanged: ours is newer
		case slices.Contains(was, o.Hash) && o.Mode == t.Mode:
			out[t.Name] = t
			continue
		}
		beside := besideName(t.Name, t.Hash)
		if e, ok := out[beside]; ok && e.Hash == t.Hash {
			continue // kept by an earlier merge
		}
		t.Name = beside
		out[beside] = t
		*conflicts = append(*conflicts, Conflict{Ref: ref, Path: path.Join(dir, o.Name), Theirs: path.Join(dir, beside)})
	}
	merged := make([]object.TreeEntry, 0, len(out))
	for _, e := range out {
		merged = append(merged, e)
	}
	return b.writeTree(merged)
}

// besideName is where their version of a conflicting file is kept:
// checkpoint.json -> checkpoint.theirs-<hash>.json. The hash makes the name
// unique to their bytes, so merging the same conflict again adds nothing.
func besideName(name string, theirs plumbing.Hash) string {
	tag := ".theirs-" + theirs.String()[:12]
	ext := path.Ext(name)
	if ext == "" || ext == name {
		return name + tag
	}
	return strings.TrimSuffix(name, ext) + tag + ext
}

// mergeNotes is the treeMerger of the notes ref. Ours keeps its layout:
// merged notes are written where ours has them, new ones at a fanout path
// as writeNote does.
func mergeNotes(b *batch, _ plumbing.ReferenceName, ours, theirs plumbing.Hash, bases []plumbing.Hash) (plumbing.Hash, []Conflict, error) {
	changed := map[string]plumbing.Hash{}
	if err := b.r.notesDiff(ours, theirs, "", changed); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	var edits []edit
	for _, hex := range slices.Sorted(maps.Keys(changed)) {
		theirsBlob := changed[hex]
		oursPath, oursBlob, found, err := b.r.findNote(ours, hex)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		if found && oursBlob == theirsBlob {
			continue
		}
		var was []plumbing.Hash
		for _, root := range bases {
			_, blob, ok, err := b.r.findNote(root, hex)
			if err != nil {
				return plumbing.ZeroHash, nil, err
			}
			if ok {
				was = append(was, blob)
			}
		}
		if slices.Contains(was, theirsBlob) {
			continue // theirs unchanged since a base: ours is newer
		}
		blob := theirsBlob
		if found && !slices.Contains(was, oursBlob) {
			oursText, err := b.r.readBlob(oursBlob)
			if err != nil {
				return plumbing.ZeroHash, nil, err
			}
			theirsText, err := b.r.readBlob(theirsBlob)
			if err != nil {
				return plumbing.ZeroHash, nil, err
			}
			if blob, err = b.writeBytes(plumbing.BlobObject, []byte(unionNote(string(oursText), string(theirsText)))); err != nil {
				return plumbing.ZeroHash, nil, err
			}
		}
		if !found {
			oursPath = []string{hex[:2], hex[2:]}
		}
		edits = append(edits, edit{path: oursPath, entry: blobEntry(oursPath[len(oursPath)-1], blob)})
	}
	if len(edits) == 0 {
		return ours, nil, nil
	}
	root, err := b.applyEdits(ours, edits)
	return root, nil, err
}

// notesDiff collects into out the notes of tree theirs (by the hex of the
// object they annotate) that ours does not hold at the same path, walking
// both trees together and skipping entries equal by hash. Where the two
// use different fanouts, the subtree of theirs is walked whole, and the
// caller looks each note up in ours at any depth.
func (r *Repo) notesDiff(ours, theirs plumbing.Hash, prefix string, out map[string]plumbing.Hash) error {
	if ours == theirs || theirs.IsZero() {
		return nil
	}
	oursEntries, err := r.treeEntries(ours)
	if err != nil {
		return err
	}
	theirsEntries, err := r.treeEntries(theirs)
	if err != nil {
		return err
	}
	for _, t := range theirsEntries {
		i := slices.IndexFunc(oursEntries, func(e object.TreeEntry) bool { return e.Name == t.Name })
		if i >= 0 && oursEntries[i].Hash == t.Hash {
			continue
		}
		name := prefix + t.Name
		if t.Mode == filemode.Dir {
			var sub plumbing.Hash
			if i >= 0 && oursEntries[i].Mode == filemode.Dir {
				sub = oursEntries[i].Hash
			}
			if len(name) < 40 && validHex(t.Name) {
				if err := r.notesDiff(sub, t.Hash, name, out); err != nil {
					return err
				}
			}
			continue
		}
		// Anything but a note on an object (git keeps nothing else there)
		// is left alone.
		if len(name) == 40 && validHex(name) {
			out[strings.ToLower(name)] = t.Hash
		}
	}
	return nil
}

// unionNote merges two versions of a note line by line: the lines of ours,
// then those only theirs has, and the checkpoint lines of both as one
// block, each ID once (mergeNote's layout).
func unionNote(ours, theirs string) string {
	have := map[string]bool{}
	for line := range strings.Lines(ours) {
		have[strings.TrimSpace(line)] = true
	}
	var extra []string
	for line := range strings.Lines(theirs) {
		trimmed := strings.TrimSpace(line)
		if _, isID := noteLineID(trimmed); isID || trimmed == "" || have[trimmed] {
			continue
		}
		have[trimmed] = true
		extra = append(extra, strings.TrimRight(line, "\r\n"))
	}
	text := ours
	if len(extra) > 0 {
		text = strings.TrimRight(ours, "\r\n") + "\n\n" + strings.Join(extra, "\n") + "\n"
	}
	return mergeNote(text, noteIDs(theirs))
}
