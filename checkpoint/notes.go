package checkpoint

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// noteKey starts the note line naming a checkpoint.
const noteKey = "Tether-Checkpoint:"

// noteLineID returns the checkpoint ID on a "Tether-Checkpoint: <id>" line.
func noteLineID(line string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), noteKey)
	if !ok {
		return "", false
	}
	f := strings.Fields(rest)
	if len(f) != 1 {
		return "", false
	}
	return f[0], true
}

// noteIDs returns the checkpoint IDs named in a note, first occurrence
// first, without duplicates.
func noteIDs(text string) []string {
	var ids []string
	for line := range strings.Lines(text) {
		if id, ok := noteLineID(line); ok && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// mergeNote adds a line per ID to an existing note. Other text is kept
// (runs of blank lines collapsed, blank edges trimmed) and the checkpoint
// lines follow it as one block, each ID once: git concatenates notes when
// a rewrite meets an existing note, which would otherwise repeat them.
func mergeNote(text string, ids []string) string {
	var lines, seen []string
	blank := true // drops leading blank lines and collapses runs
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if id, ok := noteLineID(line); ok {
			if !slices.Contains(seen, id) {
				seen = append(seen, id)
			}
			continue
		}
		isBlank := strings.TrimSpace(line) == ""
		if isBlank && blank {
			continue
		}
		blank = isBlank
		lines = append(lines, line)
	}
	if n := len(lines); n > 0 && blank {
		lines = lines[:n-1]
	}
	for _, id := range ids {
		if !slices.Contains(seen, id) {
			seen = append(seen, id)
		}
	}
	if len(lines) > 0 && len(seen) > 0 {
		lines = append(lines, "")
	}
	for _, id := range seen {
		lines = append(lines, noteKey+" "+id)
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// findNote looks for the note on object hex in the notes tree root, at any
// fanout depth: git writes notes flat while there are few and fans them out
// by two hex digits per level as they grow, and reads every layout.
func (r *Repo) findNote(root plumbing.Hash, hex string) (path []string, blob plumbing.Hash, ok bool, err error) {
	tree, rest := root, hex
	for !tree.IsZero() {
		entries, err := r.treeEntries(tree)
		if err != nil {
			return nil, plumbing.ZeroHash, false, err
		}
		i := slices.IndexFunc(entries, func(e object.TreeEntry) bool { return e.Name == rest && e.Mode != filemode.Dir })
		if i >= 0 {
			return append(path, rest), entries[i].Hash, true, nil
		}
		if len(rest) <= 2 {
			break
		}
		j := slices.IndexFunc(entries, func(e object.TreeEntry) bool { return e.Name == rest[:2] && e.Mode == filemode.Dir })
		if j < 0 {
			break
		}
		path = append(path, rest[:2])
		tree, rest = entries[j].Hash, rest[2:]
	}
	return nil, plumbing.ZeroHash, false, nil
}

// Notes returns the checkpoint IDs linked to a commit (none when the
// commit has no tether note).
func (r *Repo) Notes(commit string) ([]string, error) {
	h, err := r.resolveCommit(commit)
	if err != nil {
		return nil, fmt.Errorf("notes of %s: %w", commit, err)
	}
	text, err := r.noteText(h)
	if err != nil {
		return nil, fmt.Errorf("notes of %s: %w", h, err)
	}
	return noteIDs(text), nil
}

// noteText reads the note on commit h at the notes tip ("" if none).
func (r *Repo) noteText(h plumbing.Hash) (string, error) {
	tip, err := r.readRef(NotesRef)
	if err != nil {
		return "", err
	}
	root, err := r.commitTree(tip)
	if err != nil {
		return "", err
	}
	_, blob, ok, err := r.findNote(root, h.String())
	if err != nil || !ok {
		return "", err
	}
	data, err := r.readBlob(blob)
	if err != nil {
		return "", err
	}
	return string(data), nil
}

// Link records that commit was produced with the given checkpoints: their
// IDs are merged into the commit's note in refs/notes/tether, next to
// whatever the note already says. Linking again is harmless. Concurrent
// writers (another tether, git notes, a rebase copying notes) are handled
// by the compare-and-swap on the notes ref: the loser merges again on the
// new tip. IDs that are not on CheckpointsRef are left out of the note and
// reported in the error (wrapping ErrNotFound), after the others are linked.
func (r *Repo) Link(commit string, ids []string) error {
	h, err := r.resolveCommit(commit)
	if err != nil {
		return fmt.Errorf("link %s: %w", commit, err)
	}
	present, missing, err := r.present(ids)
	if err != nil {
		return fmt.Errorf("link %s: %w", h, err)
	}
	if len(present) > 0 {
		if err := r.writeNote(h, present); err != nil {
			return fmt.Errorf("link %s: %w", h, err)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("link %s: checkpoints %s: %w on %s", h, strings.Join(missing, ", "), ErrNotFound, CheckpointsRef)
	}
	return nil
}

// present splits ids into those on CheckpointsRef and those missing, so a
// wrong ID never ends up in a note.
func (r *Repo) present(ids []string) (present, missing []string, err error) {
	root, err := r.checkpointsRoot()
	if err != nil {
		return nil, nil, err
	}
	for _, id := range ids {
		if !validID(id) {
			missing = append(missing, strconv.Quote(id))
			continue
		}
		ok, err := r.has(root, id)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			present = append(present, id)
		} else {
			missing = append(missing, id)
		}
	}
	return present, missing, nil
}

// writeNote merges ids into the note of commit h and moves the notes ref,
// rebuilding on the new tip when a concurrent writer (git notes, a rebase
// copying notes) got there first.
func (r *Repo) writeNote(h plumbing.Hash, ids []string) error {
	b := r.newBatch()
	defer b.discard()
	for range casAttempts {
		c, tip, changed, err := b.noteCommit(h, ids)
		if err != nil || !changed {
			return err
		}
		if err := b.flush(); err != nil {
			return err
		}
		r.callHook("before-ref", NotesRef)
		err = r.casRef(NotesRef, c, tip)
		if errors.Is(err, errRefChanged) {
			continue
		}
		return err
	}
	return fmt.Errorf("update %s: lost the race %d times", NotesRef, casAttempts)
}

// noteCommit writes into b, unflushed, the commit that merges ids into
// the note of commit h on the notes ref's current tip, and returns it with
// that tip; changed is false when the note names them all already.
func (b *batch) noteCommit(h plumbing.Hash, ids []string) (c, tip plumbing.Hash, changed bool, err error) {
	r, hex := b.r, h.String()
	tip, root, err := r.tipAndRoot(NotesRef)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, false, err
	}
	path, blob, found, err := r.findNote(root, hex)
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, false, err
	}
	var old string
	if found {
		data, err := r.readBlob(blob)
		if err != nil {
			return plumbing.ZeroHash, plumbing.ZeroHash, false, err
		}
		old = string(data)
	} else {
		// One level of fanout keeps the root tree at most 256 entries
		// however many commits get notes.
		path = []string{hex[:2], hex[2:]}
	}
	text := mergeNote(old, ids)
	if found && text == old {
		return plumbing.ZeroHash, tip, false, nil
	}
	nb, err := b.writeBytes(plumbing.BlobObject, []byte(text))
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, false, err
	}
	newRoot, err := b.applyEdits(root, []edit{{path: path, entry: blobEntry(path[len(path)-1], nb)}})
	if err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, false, err
	}
	c, err = b.writeCommit(newRoot, fmt.Sprintf("tether: link %s to %s\n", hex[:12], strings.Join(ids, ", ")), tip)
	return c, tip, err == nil, err
}
