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
	// Migrated: the other side had checkpoints only on LegacyBranch; they
	// were migrated in.
	Migrated Outcome = "migrated"
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

// Tips are the commits of another copy's refs, their objects already in
// this repository (as after a fetch); zero or missing where it has none.
type Tips struct {
	Checkpoints plumbing.Hash
	Notes       plumbing.Hash
	// Transcripts are transcript refs of the other copy, each merged into
	// the ref of the same name.
	Transcripts map[plumbing.ReferenceName]plumbing.Hash
	// Legacy are commits of copies of LegacyBranch (a remote's, a stale
	// remote-tracking copy), migrated as ours is.
	Legacy []plumbing.Hash
}

// none reports that the other copy has none of the refs.
func (t Tips) none() bool {
	return t.Checkpoints.IsZero() && t.Notes.IsZero() && len(t.Transcripts) == 0 && len(t.Legacy) == 0
}

// MergeResult is what Merge did to each ref.
type MergeResult struct {
	Checkpoints Outcome                            `json:"checkpoints"`
	Notes       Outcome                            `json:"notes"`
	Transcripts map[plumbing.ReferenceName]Outcome `json:"transcripts,omitempty"`
	Conflicts   []Conflict                         `json:"conflicts,omitempty"`
}

// Merge brings another copy's refs into ours: its transcript refs, then
// its checkpoints (a checkpoint is never listed before its transcript),
// then its notes (which name checkpoints); copies of LegacyBranch are
// migrated first.
//
// Each ref fast-forwards when it can. Otherwise a merge commit with ours
// and theirs as parents holds a three-way merge of the trees against their
// merge bases (none when the two started the ref on their own): what
// changed on one side only, a removal included, is taken from that side,
// and subtrees equal on both sides or unchanged on one are reused by hash,
// never walked, so the cost follows the difference, not the size of the
// history.
//
//   - Checkpoints and transcripts: checkpoint IDs are unique, so the trees
//     are in effect a union. A file changed on both sides to different
//     bytes is a Conflict: ours stays, theirs is kept beside it
//     (checkpoint.json -> checkpoint.theirs-<hash>.json).
//   - Notes: a note changed on both sides is merged line by line
//     (unionNote), checkpoint lines deduplicated; notes may sit at fanout
//     or flat paths on either side.
//
// Merge holds the store's checkpoints lock and moves each ref by
// compare-and-swap, merging again on the new tip if another writer moved it.
func (r *Repo) Merge(st *state.Store, theirs Tips) (res MergeResult, err error) {
	res = MergeResult{Checkpoints: Absent, Notes: Absent}
	err = r.Locked(st, func() error {
		before, err := r.readRef(CheckpointsRef)
		if err != nil {
			return err
		}
		for _, c := range theirs.Legacy {
			conflicts, err := r.importLegacy(c)
			if err != nil {
				return fmt.Errorf("migrate %s: %w", c, err)
			}
			res.Conflicts = append(res.Conflicts, conflicts...)
		}
		for _, ref := range slices.Sorted(maps.Keys(theirs.Transcripts)) {
			outcome, conflicts, err := r.mergeRef(ref, theirs.Transcripts[ref], mergeTrees)
			if err != nil {
				return fmt.Errorf("merge %s: %w", ref, err)
			}
			if res.Transcripts == nil {
				res.Transcripts = map[plumbing.ReferenceName]Outcome{}
			}
			res.Transcripts[ref] = outcome
			res.Conflicts = append(res.Conflicts, conflicts...)
		}
		var conflicts []Conflict
		if res.Checkpoints, conflicts, err = r.mergeRef(CheckpointsRef, theirs.Checkpoints, mergeTrees); err != nil {
			return fmt.Errorf("merge %s: %w", CheckpointsRef, err)
		}
		if after, err := r.readRef(CheckpointsRef); err != nil {
			return err
		} else if after != before && (res.Checkpoints == Absent || res.Checkpoints == UpToDate) {
			res.Checkpoints = Migrated
		}
		res.Conflicts = append(res.Conflicts, conflicts...)
		if res.Notes, conflicts, err = r.mergeRef(NotesRef, theirs.Notes, mergeNotes); err != nil {
			return fmt.Errorf("merge %s: %w", NotesRef, err)
		}
		res.Conflicts = append(res.Conflicts, conflicts...)
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("merge: %w", err)
	}
	return res, nil
}

// Locked runs fn holding the store's checkpoints lock, with the packs
// read afresh and LegacyBranch migrated. Session locks are taken inside
// it, never the other way round.
func (r *Repo) Locked(st *state.Store, fn func() error) (err error) {
	unlock, err := st.Lock(lockName)
	if err != nil {
		return err
	}
	defer func() {
		if uerr := unlock(); uerr != nil {
			err = errors.Join(err, fmt.Errorf("release lock: %w", uerr))
		}
	}()
	if err := r.refresh(); err != nil {
		return err
	}
	if err := r.migrate(); err != nil {
		return err
	}
	return fn()
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
// unrelated histories, such as two clones that each started the ref).
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

// mergeTrees is the treeMerger of the checkpoint and transcript refs.
func mergeTrees(b *batch, ref plumbing.ReferenceName, ours, theirs plumbing.Hash, bases []plumbing.Hash) (plumbing.Hash, []Conflict, error) {
	var conflicts []Conflict
	h, err := b.mergeTree(ref, "", ours, theirs, bases, &conflicts)
	if err == nil && h.IsZero() {
		h, err = b.writeTree(nil) // everything was deleted: a commit still needs a tree
	}
	return h, conflicts, err
}

// mergeTree merges tree theirs into tree ours, dir being their path and
// bases the trees at that path in the merge bases; zero stands for a
// missing or empty tree. A side equal to a base version did not change:
// the other side wins, whole subtrees by hash, and a deletion (a checkpoint
// purged by hand, say) is a change like any other.
func (b *batch) mergeTree(ref plumbing.ReferenceName, dir string, ours, theirs plumbing.Hash, bases []plumbing.Hash, conflicts *[]Conflict) (plumbing.Hash, error) {
	switch {
	case ours == theirs || slices.Contains(bases, theirs):
		return ours, nil
	case slices.Contains(bases, ours):
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
	byName := func(entries []object.TreeEntry) map[string]object.TreeEntry {
		m := make(map[string]object.TreeEntry, len(entries))
		for _, e := range entries {
			m[e.Name] = e
		}
		return m
	}
	oursByName, theirsByName := byName(oursEntries), byName(theirsEntries)
	was := map[string][]object.TreeEntry{} // the versions of each entry in the merge bases
	for _, h := range bases {
		entries, err := b.r.treeEntries(h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		for _, e := range entries {
			was[e.Name] = append(was[e.Name], e)
		}
	}
	names := maps.Clone(oursByName)
	maps.Copy(names, theirsByName)
	merged := map[string]object.TreeEntry{}
	for name := range names {
		if _, done := merged[name]; done {
			continue // already kept as their version of a conflicting file
		}
		o, inOurs := oursByName[name]
		t, inTheirs := theirsByName[name]
		unchanged := func(e object.TreeEntry) bool {
			return slices.ContainsFunc(was[name], func(w object.TreeEntry) bool { return w.Hash == e.Hash && w.Mode == e.Mode })
		}
		switch {
		case !inTheirs:
			if !unchanged(o) { // else they deleted what we never changed
				merged[name] = o
			}
		case !inOurs:
			if !unchanged(t) { // else we deleted what they never changed
				merged[name] = t
			}
		case o.Hash == t.Hash && o.Mode == t.Mode || unchanged(t):
			merged[name] = o
		case unchanged(o):
			merged[name] = t
		case o.Mode == filemode.Dir && t.Mode == filemode.Dir:
			var subBases []plumbing.Hash
			for _, w := range was[name] {
				if w.Mode == filemode.Dir {
					subBases = append(subBases, w.Hash)
				}
			}
			h, err := b.mergeTree(ref, path.Join(dir, name), o.Hash, t.Hash, subBases, conflicts)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			if !h.IsZero() {
				merged[name] = treeEntry(name, h)
			}
		case ref == CheckpointsRef && dir == "" && name == archiveFile && o.Mode == filemode.Regular && t.Mode == filemode.Regular:
			// Both sides rolled: each archived tree stays reachable.
			oursText, err := b.r.readBlob(o.Hash)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			theirsText, err := b.r.readBlob(t.Hash)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			blob, err := b.writeBytes(plumbing.BlobObject, []byte(unionArchive(string(oursText), string(theirsText))))
			if err != nil {
				return plumbing.ZeroHash, err
			}
			merged[name] = blobEntry(name, blob)
		default:
			merged[name] = o
			beside := besideName(name, t.Hash)
			if _, kept := oursByName[beside]; kept {
				continue // an earlier merge kept their version already
			}
			t.Name = beside
			merged[beside] = t // the name holds their hash: nothing else has it
			*conflicts = append(*conflicts, Conflict{Ref: ref, Path: path.Join(dir, name), Theirs: path.Join(dir, beside)})
		}
	}
	if len(merged) == 0 {
		return plumbing.ZeroHash, nil
	}
	return b.writeTree(slices.Collect(maps.Values(merged)))
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

// mergeNotes is the treeMerger of the notes ref: a three-way merge per
// annotated object. A note changed on one side only is taken from that
// side (a removal too); changed on both, the two are merged line by line
// (unionNote). Ours keeps its layout: notes are rewritten where ours has
// them, new ones go to a fanout path as writeNote does.
func mergeNotes(b *batch, _ plumbing.ReferenceName, ours, theirs plumbing.Hash, bases []plumbing.Hash) (plumbing.Hash, []Conflict, error) {
	differ := map[string]bool{}
	if err := b.r.notesDiff(ours, theirs, "", differ); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	var edits []edit
	for _, hex := range slices.Sorted(maps.Keys(differ)) {
		oursPath, oursBlob, inOurs, err := b.r.findNote(ours, hex)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		_, theirsBlob, inTheirs, err := b.r.findNote(theirs, hex)
		if err != nil {
			return plumbing.ZeroHash, nil, err
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
		var blob plumbing.Hash // zero: remove ours
		switch {
		case inOurs && inTheirs && oursBlob == theirsBlob:
			continue
		case !inTheirs:
			if !inOurs || !slices.Contains(was, oursBlob) {
				continue // ours is new or changed: kept
			}
		case !inOurs:
			if slices.Contains(was, theirsBlob) {
				continue // we removed what they never changed
			}
			blob, oursPath = theirsBlob, []string{hex[:2], hex[2:]}
		case slices.Contains(was, theirsBlob):
			continue
		case slices.Contains(was, oursBlob):
			blob = theirsBlob
		default:
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
		edits = append(edits, edit{path: oursPath, entry: blobEntry(oursPath[len(oursPath)-1], blob)})
	}
	if len(edits) == 0 {
		return ours, nil, nil
	}
	root, err := b.applyEdits(ours, edits)
	if err == nil && root.IsZero() {
		root, err = b.writeTree(nil) // every note removed: a commit still needs a tree
	}
	return root, nil, err
}

// notesDiff adds to out the objects (by hex) whose notes may differ
// between the notes trees ours and theirs: it walks both together and
// skips entries equal by hash. Where the two use different fanouts the
// subtrees are walked whole; the caller looks each note up on each side at
// any depth.
func (r *Repo) notesDiff(ours, theirs plumbing.Hash, prefix string, out map[string]bool) error {
	if ours == theirs {
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
	type pair struct{ ours, theirs object.TreeEntry }
	byName := map[string]*pair{}
	for _, e := range oursEntries {
		byName[e.Name] = &pair{ours: e}
	}
	for _, e := range theirsEntries {
		if p := byName[e.Name]; p != nil {
			p.theirs = e
		} else {
			byName[e.Name] = &pair{theirs: e}
		}
	}
	for name, p := range byName {
		if p.ours.Hash == p.theirs.Hash && p.ours.Mode == p.theirs.Mode {
			continue
		}
		full := prefix + name
		if !validHex(name) || len(full) > 40 {
			continue // not a note: git keeps nothing else here, and neither do we
		}
		var sub [2]plumbing.Hash
		isDir := false
		for i, e := range []object.TreeEntry{p.ours, p.theirs} {
			if e.Mode == filemode.Dir {
				sub[i], isDir = e.Hash, true
			} else if !e.Hash.IsZero() && len(full) == 40 {
				out[strings.ToLower(full)] = true
			}
		}
		if isDir && len(full) < 40 {
			if err := r.notesDiff(sub[0], sub[1], full, out); err != nil {
				return err
			}
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
		_, isVia := noteVia(trimmed)
		if _, isID := noteLineID(trimmed); isID || isVia || trimmed == "" || have[trimmed] {
			continue
		}
		have[trimmed] = true
		extra = append(extra, strings.TrimRight(line, "\r\n"))
	}
	text := ours
	if len(extra) > 0 {
		text = strings.TrimRight(ours, "\r\n") + "\n\n" + strings.Join(extra, "\n") + "\n"
	}
	_, links := parseNote(theirs)
	return mergeNote(text, links)
}
