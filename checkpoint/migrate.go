package checkpoint

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Earlier tethers kept everything on one branch, LegacyBranch: each
// checkpoint's checkpoint.json, prompts.md and transcript files together
// at <id[0:2]>/<id[2:]>/. Migrating a commit of that branch (the local
// branch, a remote-tracking copy of it, a remote's) loses nothing and
// renames nothing:
//
//   - its checkpoints, without their transcript files, join CheckpointsRef
//     at the same paths (a tree merge, so a checkpoint already there with
//     other content keeps ours, theirs beside it), and the notes, which
//     name checkpoint IDs, point at them as before;
//   - its whole history, transcripts included, joins LegacyTranscripts,
//     where the migrated checkpoints (whose checkpoint.json names no
//     transcript ref) find their transcripts.
//
// In that order, each step idempotent, so a crash in between is finished
// by the next attempt; the branch is deleted only after both. Only what
// differs from what LegacyTranscripts already holds is converted, so
// importing a branch an older tether keeps adding to costs what it added.

// checkpointsRoot is the tree of CheckpointsRef, or of LegacyBranch while
// that is not migrated yet (a reader that writes nothing does not migrate).
func (r *Repo) checkpointsRoot() (plumbing.Hash, error) {
	tip, err := r.readRef(CheckpointsRef)
	if err == nil && tip.IsZero() {
		tip, err = r.readRef(LegacyBranch)
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return r.commitTree(tip)
}

// legacyCopySuffix ends the remote-tracking copies of LegacyBranch that a
// plain git fetch, or an earlier tether's, made: refs/remotes/<r>/...
const legacyCopySuffix = "/tether/checkpoints/v1"

// migrate migrates LegacyBranch and its remote-tracking copies, then
// deletes them; a no-op costing one ref lookup once that is done. The
// caller holds the checkpoints lock.
func (r *Repo) migrate() error {
	old, err := r.readRef(LegacyBranch)
	if err != nil || old.IsZero() {
		return err
	}
	refs := map[plumbing.ReferenceName]plumbing.Hash{LegacyBranch: old}
	iter, err := r.st.IterReferences()
	if err != nil {
		return fmt.Errorf("migrate %s: %w", LegacyBranch, err)
	}
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		if name := ref.Name().String(); ref.Type() == plumbing.HashReference &&
			strings.HasPrefix(name, "refs/remotes/") && strings.HasSuffix(name, legacyCopySuffix) {
			refs[ref.Name()] = ref.Hash()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrate %s: %w", LegacyBranch, err)
	}
	for name, c := range refs {
		if _, err := r.importLegacy(c); err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
		if err := r.deleteRef(name, c); err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
	}
	return nil
}

// deleteRef deletes a ref if it still points at old, with git itself,
// which also clears a packed copy and the reflog.
func (r *Repo) deleteRef(name plumbing.ReferenceName, old plumbing.Hash) error {
	_, err := r.git("update-ref", "-d", name.String(), old.String())
	return err
}

// importLegacy migrates commit c of a legacy branch (its objects in this
// repository) and reports the checkpoints that differed from ours.
func (r *Repo) importLegacy(c plumbing.Hash) ([]Conflict, error) {
	commit, err := object.GetCommit(r.st, c)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", c, err)
	}
	_, had, err := r.tipAndRoot(LegacyTranscripts)
	if err != nil {
		return nil, err
	}
	b := r.newBatch()
	defer b.discard()
	var edits []edit
	err = r.changedLeaves(had, commit.TreeHash, func(dir, name string, leaf plumbing.Hash) error {
		meta, err := b.withoutTranscripts(leaf)
		if err == nil && !meta.IsZero() {
			edits = append(edits, edit{path: []string{dir, name}, entry: treeEntry(name, meta)})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var conflicts []Conflict
	if len(edits) > 0 {
		theirs, err := b.applyEdits(plumbing.ZeroHash, edits)
		if err != nil {
			return nil, err
		}
		if err := b.flush(); err != nil { // the merge reads them
			return nil, err
		}
		if conflicts, err = r.mergeLegacyCheckpoints(b, commit, theirs); err != nil {
			return nil, err
		}
	}
	if _, more, err := r.mergeRef(LegacyTranscripts, c, mergeTrees); err != nil {
		return nil, fmt.Errorf("merge into %s: %w", LegacyTranscripts, err)
	} else {
		conflicts = append(conflicts, more...)
	}
	return conflicts, nil
}

// mergeLegacyCheckpoints merges the tree theirs (converted checkpoints of
// the legacy commit) into CheckpointsRef. The first commit of a ref made
// this way is dated like the legacy commit, so clones migrating the same
// branch write the same commit.
func (r *Repo) mergeLegacyCheckpoints(b *batch, legacy *object.Commit, theirs plumbing.Hash) ([]Conflict, error) {
	for range casAttempts {
		tip, root, err := r.tipAndRoot(CheckpointsRef)
		if err != nil {
			return nil, err
		}
		var conflicts []Conflict
		merged, err := b.mergeTree(CheckpointsRef, "", root, theirs, nil, &conflicts)
		if err != nil || merged == root {
			return nil, err
		}
		when := legacy.Committer.When
		if !tip.IsZero() {
			when = time.Now()
		}
		c, err := b.writeCommitAt(merged, fmt.Sprintf("tether: checkpoints of %s %s, transcripts on %s\n", plumbing.ReferenceName(LegacyBranch).Short(), legacy.Hash.String()[:12], LegacyTranscripts), when, tip)
		if err != nil {
			return nil, err
		}
		if err := b.flush(); err != nil {
			return nil, err
		}
		err = r.casRef(CheckpointsRef, c, tip)
		if errors.Is(err, errRefChanged) {
			continue
		}
		return conflicts, err
	}
	return nil, fmt.Errorf("update %s: lost the race %d times", CheckpointsRef, casAttempts)
}

// changedLeaves calls fn for each checkpoint directory (<dir>/<name>) of
// the legacy tree now that differs from its version in the tree had,
// skipping whole subtrees equal on both sides.
func (r *Repo) changedLeaves(had, now plumbing.Hash, fn func(dir, name string, leaf plumbing.Hash) error) error {
	return r.eachNew(had, now, func(dir object.TreeEntry, old plumbing.Hash) error {
		if dir.Mode != filemode.Dir {
			return nil
		}
		return r.eachNew(old, dir.Hash, func(leaf object.TreeEntry, _ plumbing.Hash) error {
			if leaf.Mode != filemode.Dir {
				return nil
			}
			return fn(dir.Name, leaf.Name, leaf.Hash)
		})
	})
}

// eachNew calls fn for each entry of tree now whose hash differs from the
// entry of the same name in tree had, with that entry's hash (zero if
// none).
func (r *Repo) eachNew(had, now plumbing.Hash, fn func(e object.TreeEntry, old plumbing.Hash) error) error {
	if had == now {
		return nil
	}
	before, err := r.treeEntries(had)
	if err != nil {
		return err
	}
	old := make(map[string]plumbing.Hash, len(before))
	for _, e := range before {
		old[e.Name] = e.Hash
	}
	after, err := r.treeEntries(now)
	if err != nil {
		return err
	}
	for _, e := range after {
		if old[e.Name] != e.Hash {
			if err := fn(e, old[e.Name]); err != nil {
				return err
			}
		}
	}
	return nil
}

// withoutTranscripts writes a legacy checkpoint directory's tree without
// its transcript files; zero when nothing else is left.
func (b *batch) withoutTranscripts(leaf plumbing.Hash) (plumbing.Hash, error) {
	entries, err := b.r.treeEntries(leaf)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	kept := entries[:0]
	for _, e := range entries {
		if !isTranscriptFile(e.Name) {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return plumbing.ZeroHash, nil
	}
	return b.writeTree(kept)
}

// isTranscriptFile tells transcript chunks (transcript.jsonl,
// transcript.001.jsonl, ..., and their versions a merge kept beside them)
// from a checkpoint's other files.
func isTranscriptFile(name string) bool {
	return strings.HasPrefix(name, "transcript.") && strings.HasSuffix(name, ".jsonl")
}
