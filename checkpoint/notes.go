package checkpoint

import (
	"errors"
	"fmt"
	"maps"
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

// viaKey starts the note line saying how the checkpoint lines right above
// it came to the commit: inherited from other commits that carry the same
// change (see NoteLink.Via).
const viaKey = "Tether-Via:"

// NoteLink is one checkpoint a commit's note names: linked to the commit
// itself (Via ""), or inherited from commits carrying the same change,
// Via saying how ("squash of A..B", "cherry-pick of C", "rebase of C",
// "amend of C", "PR #N").
type NoteLink struct {
	ID  string `json:"id"`
	Via string `json:"via,omitempty"`
}

// noteVia returns what a "Tether-Via: ..." line says.
func noteVia(line string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), viaKey)
	rest = strings.TrimSpace(rest)
	return rest, ok && rest != ""
}

// parseNote splits a note into the lines that are not tether's (kept as
// written) and the checkpoints it names, each once, in the order first
// named. A Tether-Via line applies to the run of checkpoint lines right
// above it; a checkpoint named directly anywhere is a direct link, else
// the first Via that names it says how it came.
func parseNote(text string) (other []string, links []NoteLink) {
	type seen struct {
		at     int // index in links
		direct bool
	}
	byID := map[string]*seen{}
	var run []string // the checkpoint lines since the last other line
	settle := func(via string) {
		for _, id := range run {
			s := byID[id]
			if via == "" {
				s.direct = true
			} else if !s.direct && links[s.at].Via == "" {
				links[s.at].Via = via
			}
		}
		run = nil
	}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if id, ok := noteLineID(line); ok {
			if byID[id] == nil {
				byID[id] = &seen{at: len(links)}
				links = append(links, NoteLink{ID: id})
			}
			run = append(run, id)
			continue
		}
		if via, ok := noteVia(line); ok && len(run) > 0 {
			settle(via)
			continue
		}
		settle("")
		other = append(other, line)
	}
	settle("")
	for _, l := range links {
		if byID[l.ID].direct {
			links[byID[l.ID].at].Via = ""
		}
	}
	return other, links
}

// noteIDs returns the checkpoint IDs named in a note, first occurrence
// first, without duplicates.
func noteIDs(text string) []string {
	_, links := parseNote(text)
	ids := make([]string, len(links))
	for i, l := range links {
		ids[i] = l.ID
	}
	return ids
}

// direct makes links of checkpoint IDs linked to the commit itself.
func direct(ids []string) []NoteLink {
	links := make([]NoteLink, len(ids))
	for i, id := range ids {
		links[i] = NoteLink{ID: id}
	}
	return links
}

// mergeNote adds links to an existing note. Other text is kept (runs of
// blank lines collapsed, blank edges trimmed) and the checkpoint lines
// follow it, each ID once: first those linked to the commit itself, as
// one block, then one block per way of inheriting, its Tether-Via line
// under it. Git concatenates notes when a rewrite meets an existing note,
// which would otherwise repeat them; a checkpoint linked directly and
// inherited as well is a direct link.
func mergeNote(text string, add []NoteLink) string {
	old, links := parseNote(text)
	var lines []string
	blank := true // drops leading blank lines and collapses runs
	for _, line := range old {
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
	for _, l := range add {
		i := slices.IndexFunc(links, func(o NoteLink) bool { return o.ID == l.ID })
		switch {
		case i < 0:
			links = append(links, l)
		case l.Via == "":
			links[i].Via = ""
		}
	}
	var vias []string
	for _, l := range links {
		if l.Via != "" && !slices.Contains(vias, l.Via) {
			vias = append(vias, l.Via)
		}
	}
	for _, via := range append([]string{""}, vias...) {
		var block []string
		for _, l := range links {
			if l.Via == via {
				block = append(block, noteKey+" "+l.ID)
			}
		}
		if len(block) == 0 {
			continue
		}
		if via != "" {
			block = append(block, viaKey+" "+via)
		}
		if len(lines) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, block...)
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
// commit has no tether note), inherited ones included.
func (r *Repo) Notes(commit string) ([]string, error) {
	links, err := r.NoteLinks(commit)
	ids := make([]string, len(links))
	for i, l := range links {
		ids[i] = l.ID
	}
	return ids, err
}

// NoteLinks returns the checkpoints a commit's note names, and how each
// came to it. A full hash is looked up as it is, the commit being here or
// not (a pull request's commits, gone with its branch, keep their notes).
func (r *Repo) NoteLinks(commit string) ([]NoteLink, error) {
	h := plumbing.NewHash(commit)
	if len(commit) != 40 || !validHex(commit) || h.String() != strings.ToLower(commit) {
		var err error
		if h, err = r.resolveCommit(commit); err != nil {
			return nil, fmt.Errorf("notes of %s: %w", commit, err)
		}
	} else if err := r.refresh(); err != nil {
		return nil, err
	}
	text, err := r.noteText(h)
	if err != nil {
		return nil, fmt.Errorf("notes of %s: %w", h, err)
	}
	_, links := parseNote(text)
	return links, nil
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
func (r *Repo) Link(commit string, ids []string) error { return r.link("link", commit, ids, "") }

// link merges ids into the note of commit, inherited via how when via is
// set, leaving out and reporting those missing from CheckpointsRef.
func (r *Repo) link(verb, commit string, ids []string, via string) error {
	h, err := r.resolveCommit(commit)
	if err != nil {
		return fmt.Errorf("%s %s: %w", verb, commit, err)
	}
	present, missing, err := r.present(ids)
	if err != nil {
		return fmt.Errorf("%s %s: %w", verb, h, err)
	}
	if len(present) > 0 {
		links := make([]NoteLink, len(present))
		for i, id := range present {
			links[i] = NoteLink{ID: id, Via: via}
		}
		if err := r.writeNote(h, links); err != nil {
			return fmt.Errorf("%s %s: %w", verb, h, err)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s %s: checkpoints %s: %w on %s", verb, h, strings.Join(missing, ", "), ErrNotFound, CheckpointsRef)
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

// Inherit records that commit carries the change of commits linked to
// the checkpoints ids: their IDs are merged into its note under a line
// "Tether-Via: <via>". Checkpoints the note already names stay as they
// are. IDs missing from CheckpointsRef are left out and reported, as by
// Link.
func (r *Repo) Inherit(commit string, ids []string, via string) error {
	if strings.ContainsAny(via, "\r\n") || strings.TrimSpace(via) == "" {
		return fmt.Errorf("inherit %s: bad via %q", commit, via)
	}
	return r.link("inherit", commit, ids, strings.TrimSpace(via))
}

// writeNote merges links into the note of commit h and moves the notes
// ref, rebuilding on the new tip when a concurrent writer (git notes, a
// rebase copying notes) got there first.
func (r *Repo) writeNote(h plumbing.Hash, links []NoteLink) error {
	b := r.newBatch()
	defer b.discard()
	for range casAttempts {
		c, tip, changed, err := b.noteCommit(h, links)
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

// noteCommit writes into b, unflushed, the commit that merges links into
// the note of commit h on the notes ref's current tip, and returns it with
// that tip; changed is false when the note names them all already.
func (b *batch) noteCommit(h plumbing.Hash, links []NoteLink) (c, tip plumbing.Hash, changed bool, err error) {
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
	text := mergeNote(old, links)
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
	ids := make([]string, len(links))
	for i, l := range links {
		ids[i] = l.ID
	}
	msg := fmt.Sprintf("tether: link %s to %s\n", hex[:12], strings.Join(ids, ", "))
	if len(links) > 0 && links[0].Via != "" {
		via := links[0].Via
		msg = fmt.Sprintf("tether: link %s to %s (%s)\n", hex[:12], strings.Join(ids, ", "), via)
	}
	c, err = b.writeCommit(newRoot, msg, tip)
	return c, tip, err == nil, err
}

// NotedSince lists the objects whose tether notes changed between the
// notes ref at since (a commit it pointed to; "" for none) and its tip,
// and returns that tip ("" when there are no notes): what an index of
// linked commits must look at again, bounded by what changed.
func (r *Repo) NotedSince(since string) (changed []string, tip string, err error) {
	if err := r.refresh(); err != nil {
		return nil, "", err
	}
	t, root, err := r.tipAndRoot(NotesRef)
	if err != nil {
		return nil, "", fmt.Errorf("notes: %w", err)
	}
	if t.IsZero() {
		return nil, "", nil
	}
	var old plumbing.Hash
	if since != "" {
		if old, err = r.commitTree(plumbing.NewHash(since)); err != nil {
			old = plumbing.ZeroHash // gone: look at every note
		}
	}
	out := map[string]bool{}
	if err := r.notesDiff(old, root, "", out); err != nil {
		return nil, "", fmt.Errorf("notes: %w", err)
	}
	return slices.Sorted(maps.Keys(out)), t.String(), nil
}

// TidyNote rewrites a commit's note in mergeNote's layout where git left
// it otherwise: a rewrite that met an existing note, or squashed commits
// together, concatenates their notes, naming checkpoints twice.
func (r *Repo) TidyNote(commit string) error {
	h, err := r.resolveCommit(commit)
	if err != nil {
		return fmt.Errorf("tidy the note of %s: %w", commit, err)
	}
	text, err := r.noteText(h)
	if err != nil || text == "" || mergeNote(text, nil) == text {
		return err
	}
	return r.writeNote(h, nil)
}
