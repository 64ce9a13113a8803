package checkpoint

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tetherdev/tether/redact"
	"github.com/tetherdev/tether/state"
)

// lockName is the store lock (locks/checkpoints.lock) serializing writes to
// the branch and the notes.
const lockName = "checkpoints"

// Result is what Condense did for one session.
type Result struct {
	Session    string `json:"session"`
	Checkpoint string `json:"checkpoint"`
	Turns      int    `json:"turns"`             // turns in the checkpoint
	Skipped    bool   `json:"skipped,omitempty"` // the branch already held it with the same content
}

// job is one session's checkpoint, its objects written, waiting for the
// commit and then for the session state update.
type job struct {
	res  Result
	leaf plumbing.Hash // tree of the checkpoint directory
	// Turn-log progress to record once the commit is on the branch;
	// advance is false when an earlier checkpoint was rewritten in place.
	advance        bool
	next           int64 // turn-log offset reached
	condensedTurns int   // CondensedTurns when loaded
	starts         int   // turn-starts condensed
}

// Condense writes the pending turns of the given sessions to the branch:
// one checkpoint per session with pending turns, all in one commit, then
// advances each session's condensed offset. A session that fails (corrupt
// state, unreadable turn log) is reported in the returned error and does
// not stop the others; the results list what was done.
//
// Pending turns are the turn-log records after the session's condensed
// offset. A turn still running is condensed up to the current end of the
// transcript and marked running; its end, and the rest of its transcript,
// go into the next checkpoint as a continued turn, or, if the session ends
// without that turn ending, into the same checkpoint rewritten with the
// turn marked interrupted.
//
// It holds the store's checkpoints lock throughout, so concurrent
// condensers never condense the same turns twice, and takes session locks
// (Mutate) inside it: callers must not hold a session lock.
func (r *Repo) Condense(st *state.Store, ids []string) (results []Result, err error) {
	unlock, err := st.Lock(lockName)
	if err != nil {
		return nil, fmt.Errorf("condense: %w", err)
	}
	defer func() {
		if uerr := unlock(); uerr != nil {
			err = errors.Join(err, fmt.Errorf("condense: release lock: %w", uerr))
		}
	}()
	if err := r.refresh(); err != nil {
		return nil, fmt.Errorf("condense: %w", err)
	}
	tip, err := r.readRef(Branch)
	if err != nil {
		return nil, fmt.Errorf("condense: %w", err)
	}
	root, err := r.commitTree(tip)
	if err != nil {
		return nil, fmt.Errorf("condense: %w", err)
	}
	b := r.newBatch()
	defer b.discard()
	b.st = st
	st.RemoveStaleStaging(tempPrefix, time.Now())
	var jobs []*job
	var errs []error
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		j, err := r.prepare(b, st, id, root)
		if err != nil {
			errs = append(errs, fmt.Errorf("condense %s: %w", id, err))
			continue
		}
		if j != nil {
			jobs = append(jobs, j)
		}
	}
	if err := r.commitJobs(b, tip, root, jobs); err != nil {
		return nil, errors.Join(append(errs, fmt.Errorf("condense: %w", err))...)
	}
	r.callHook("after-ref", Branch)
	for _, j := range jobs {
		if err := recordCondensed(st, j); err != nil {
			errs = append(errs, err)
			continue
		}
		results = append(results, j.res)
	}
	return results, errors.Join(errs...)
}

// prepare builds the checkpoint of one session against the branch tree
// root and writes its objects; nil means nothing is pending.
func (r *Repo) prepare(b *batch, st *state.Store, id string, root plumbing.Hash) (*job, error) {
	s, err := st.Load(id)
	if err != nil {
		return nil, err
	}
	if s.Incarnation == "" {
		// Written by an older tether: name the record before naming
		// checkpoints after it (any write gives it one).
		if s, err = st.Mutate(id, func(*state.Session) error { return nil }); err != nil {
			return nil, err
		}
	}
	recs, next, err := st.ReadTurns(id, s.Condensed)
	if err != nil {
		return nil, err
	}
	ended := sessionEnded(s, recs)
	// The previous checkpoint matters only when it ended in a running turn
	// that these records (or the session's end) now finish.
	var prev *Checkpoint
	if n := len(s.Checkpoints); n > 0 && (len(recs) == 0 && ended || len(recs) > 0 && recs[0].T == state.RecTurnEnd) {
		prev, err = r.readAt(root, s.Checkpoints[n-1].ID)
		if errors.Is(err, ErrNotFound) {
			prev, err = nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("previous checkpoint: %w", err)
		}
	}
	var cp *Checkpoint
	var sp span
	var path string
	j := &job{next: next, condensedTurns: s.CondensedTurns}
	switch {
	case len(recs) > 0:
		cp = newCheckpoint(s, checkpointID(id, s.Incarnation, s.Condensed), LogRange{From: s.Condensed, To: next}, r.redactPrompts(pairTurns(recs, ended)))
		contFrom := int64(-1)
		if prev != nil && prev.lastTurnRunning() && len(cp.Turns) > 0 && !prev.Transcript.Unavailable && prev.Transcript.Path == s.TranscriptPath {
			if pt := prev.Turns[len(prev.Turns)-1]; pt.Turn == cp.Turns[0].Turn && cp.Turns[0].Continued {
				contFrom = prev.Transcript.To
				// The prompt was redacted when the earlier checkpoint
				// was written; its counts travel with it.
				cp.Turns[0].Prompt, cp.Turns[0].StartedAt, cp.Turns[0].HeadBefore = pt.Prompt, pt.StartedAt, pt.HeadBefore
				cp.Turns[0].Redactions = pt.Redactions
			}
		}
		sp = transcriptSpan(recs, ended, contFrom)
		path = s.TranscriptPath
		j.advance = true
		for _, rec := range recs {
			if rec.T == state.RecTurnStart {
				j.starts++
			}
		}
	case prev != nil && ended && prev.lastTurnRunning():
		// The session ended while the turn it last condensed was still
		// running: rewrite that checkpoint with the turn interrupted and
		// the transcript up to its end.
		turns := slices.Clone(prev.Turns)
		turns[len(turns)-1].Running, turns[len(turns)-1].Interrupted = false, true
		cp = newCheckpoint(s, prev.ID, prev.TurnLog, turns)
		cp.Incarnation = prev.Incarnation // the record it was cut from, even one older than incarnations
		sp = span{from: prev.Transcript.From, toEOF: true}
		path = prev.Transcript.Path
		if path == "" {
			path = s.TranscriptPath
		}
	default:
		return nil, nil
	}
	leaf, err := b.writeCheckpoint(cp, path, transcriptLocOf(s), sp)
	if err != nil {
		return nil, err
	}
	j.res = Result{Session: id, Checkpoint: cp.ID, Turns: len(cp.Turns)}
	j.leaf = leaf
	return j, nil
}

// sessionEnded reports whether the records were written by a session that
// has ended; a turn-start after the recorded end means it was revived while
// we read it, so its last turn is running, not interrupted.
func sessionEnded(s *state.Session, recs []state.TurnRecord) bool {
	if s.Phase != state.PhaseEnded {
		return false
	}
	return s.EndedAt.IsZero() || len(recs) == 0 || !recs[len(recs)-1].At.After(s.EndedAt)
}

func newCheckpoint(s *state.Session, id string, log LogRange, turns []Turn) *Checkpoint {
	return &Checkpoint{
		Version:     FormatVersion,
		ID:          id,
		Session:     s.ID,
		Incarnation: s.Incarnation,
		Agent:       s.Agent,
		Worktree:    s.Worktree,
		Branch:      s.Branch,
		StartedAt:   s.StartedAt,
		EndedAt:     s.EndedAt,
		EndReason:   s.EndReason,
		Interrupted: s.Interrupted,
		Owner:       s.Owner,
		TurnLog:     log,
		Turns:       turns,
	}
}

// redactPrompts replaces the secrets in the prompts of turns read from the
// turn log, recording the counts on each turn.
func (r *Repo) redactPrompts(turns []Turn) []Turn {
	for i := range turns {
		turns[i].Prompt, turns[i].Redactions = r.red.String(turns[i].Prompt)
	}
	return turns
}

// writeCheckpoint writes the files of a checkpoint and returns the tree of
// its directory. Its prompts are already redacted; the transcript slice is
// redacted here, and checkpoint.json and prompts.md pass the redactor whole
// as well, so a secret in any other field (a branch or path name) is masked
// and counted too. Every step is deterministic: a retry writes the same
// bytes.
func (b *batch) writeCheckpoint(cp *Checkpoint, transcript string, loc transcriptLoc, sp span) (plumbing.Hash, error) {
	entries, err := b.writeTranscript(transcript, loc, sp, &cp.Transcript)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	cp.Redactions = nil
	for _, t := range cp.Turns {
		cp.Redactions = addCounts(cp.Redactions, t.Redactions)
	}
	cp.Redactions = addCounts(cp.Redactions, cp.Transcript.Redactions)
	data, err := cp.marshal()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, other := b.r.red.String(string(data)); other != nil {
		cp.Redactions = addCounts(cp.Redactions, other)
		if data, err = cp.marshal(); err != nil {
			return plumbing.ZeroHash, err
		}
		clean, _ := b.r.red.String(string(data))
		data = []byte(clean)
	}
	md, _ := b.r.red.String(string(cp.promptsMarkdown())) // its secrets are the ones counted above
	for name, content := range map[string][]byte{"checkpoint.json": data, "prompts.md": []byte(md)} {
		h, err := b.writeBytes(plumbing.BlobObject, content)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("checkpoint %s: %s: %w", cp.ID, name, err)
		}
		entries = append(entries, blobEntry(name, h))
	}
	return b.writeTree(entries)
}

// commitJobs puts the checkpoints in one commit on the branch, skipping
// those already there with the same content. A lost compare-and-swap
// rebuilds the root on the new tip; the checkpoint trees are reused.
func (r *Repo) commitJobs(b *batch, tip, root plumbing.Hash, jobs []*job) error {
	for range casAttempts {
		var edits []edit
		var msg strings.Builder
		for _, j := range jobs {
			id := j.res.Checkpoint
			e, ok, err := r.lookup(root, id[:2], id[2:])
			if err != nil {
				return err
			}
			j.res.Skipped = ok && e.Hash == j.leaf
			if !j.res.Skipped {
				edits = append(edits, edit{path: []string{id[:2], id[2:]}, entry: treeEntry(id[2:], j.leaf)})
				fmt.Fprintf(&msg, "%s  session %s, %s\n", id, j.res.Session, plural(j.res.Turns, "turn"))
			}
		}
		if len(edits) == 0 {
			return b.flush()
		}
		newRoot, err := b.applyEdits(root, edits)
		if err != nil {
			return err
		}
		text, _ := r.red.String(fmt.Sprintf("tether: %s\n\n%s", plural(len(edits), "checkpoint"), msg.String())) // session IDs come from agents
		c, err := b.writeCommit(newRoot, text, tip)
		if err != nil {
			return err
		}
		if err := b.flush(); err != nil {
			return err
		}
		r.callHook("before-ref", Branch)
		err = r.casRef(Branch, c, tip)
		if !errors.Is(err, errRefChanged) {
			return err
		}
		if tip, err = r.readRef(Branch); err != nil {
			return err
		}
		if root, err = r.commitTree(tip); err != nil {
			return err
		}
	}
	return fmt.Errorf("update %s: lost the race %d times", Branch, casAttempts)
}

// recordCondensed advances the session's condensed offset and lists the
// checkpoint, never moving the offset back if another condenser already
// got further.
func recordCondensed(st *state.Store, j *job) error {
	_, err := st.MutateTx(j.res.Session, func(tx *state.Tx) error {
		if !tx.Exists {
			return fmt.Errorf("session is gone: %w", state.ErrNotFound)
		}
		s, changed := tx.Session, false
		if j.advance && s.Condensed < j.next {
			s.CondensedTurns = max(s.CondensedTurns, j.condensedTurns+j.starts)
			s.Condensed = j.next
			changed = true
		}
		if !slices.ContainsFunc(s.Checkpoints, func(c state.CheckpointRef) bool { return c.ID == j.res.Checkpoint }) {
			s.Checkpoints = append(s.Checkpoints, state.CheckpointRef{ID: j.res.Checkpoint})
			changed = true
		}
		if !changed {
			return state.ErrNoChange
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record checkpoint %s in session %s: %w", j.res.Checkpoint, j.res.Session, err)
	}
	return nil
}

// Read returns the checkpoint with the given ID, or the only one whose ID
// starts with the given prefix (at least 4 hex digits).
func (r *Repo) Read(id string) (*Checkpoint, error) {
	all, err := r.read(id, false)
	if err != nil {
		return nil, err
	}
	return all[0], nil
}

// ReadVariants is Read, followed by the other versions of the checkpoint
// that merges kept beside it (checkpoint.theirs-<hash>.json): two clones
// that once held different content under one ID both keep theirs visible.
func (r *Repo) ReadVariants(id string) ([]*Checkpoint, error) {
	return r.read(id, true)
}

func (r *Repo) read(id string, variants bool) ([]*Checkpoint, error) {
	if err := r.refresh(); err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", id, err)
	}
	tip, err := r.readRef(Branch)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", id, err)
	}
	root, err := r.commitTree(tip)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", id, err)
	}
	full, dir, err := r.find(root, id)
	if err != nil {
		return nil, err
	}
	entries, err := r.treeEntries(dir)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", full, err)
	}
	var ours *Checkpoint
	var theirs []*Checkpoint
	for _, e := range entries {
		isTheirs := strings.HasPrefix(e.Name, "checkpoint.theirs-")
		if e.Name != "checkpoint.json" && !(variants && isTheirs) {
			continue
		}
		cp, err := r.readCheckpointBlob(e.Hash)
		if err != nil {
			return nil, fmt.Errorf("read checkpoint %s: %s: %w", full, e.Name, err)
		}
		if isTheirs {
			theirs = append(theirs, cp)
		} else {
			ours = cp
		}
	}
	if ours == nil {
		return nil, fmt.Errorf("read checkpoint %s: no checkpoint.json", full)
	}
	return append([]*Checkpoint{ours}, theirs...), nil
}

// readAt reads a checkpoint from the branch tree root.
func (r *Repo) readAt(root plumbing.Hash, id string) (*Checkpoint, error) {
	full, dir, err := r.find(root, id)
	if err != nil {
		return nil, err
	}
	e, ok, err := r.lookup(dir, "checkpoint.json")
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", full, err)
	}
	if !ok {
		return nil, fmt.Errorf("read checkpoint %s: no checkpoint.json", full)
	}
	cp, err := r.readCheckpointBlob(e.Hash)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", full, err)
	}
	return cp, nil
}

// find resolves a checkpoint ID, or a unique prefix of one, to its full ID
// and the tree of its directory under the branch tree root.
func (r *Repo) find(root plumbing.Hash, id string) (string, plumbing.Hash, error) {
	if !validID(id) {
		return "", plumbing.ZeroHash, fmt.Errorf("read checkpoint %q: not a checkpoint ID: %w", id, ErrNotFound)
	}
	dir, ok, err := r.lookup(root, id[:2])
	if err != nil {
		return "", plumbing.ZeroHash, fmt.Errorf("read checkpoint %s: %w", id, err)
	}
	var matches []object.TreeEntry
	if ok {
		entries, err := r.treeEntries(dir.Hash)
		if err != nil {
			return "", plumbing.ZeroHash, fmt.Errorf("read checkpoint %s: %w", id, err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name, id[2:]) {
				matches = append(matches, e)
			}
		}
	}
	switch len(matches) {
	case 0:
		return "", plumbing.ZeroHash, fmt.Errorf("checkpoint %s: %w", id, ErrNotFound)
	case 1:
		return id[:2] + matches[0].Name, matches[0].Hash, nil
	default:
		return "", plumbing.ZeroHash, fmt.Errorf("checkpoint %s: prefix matches %d checkpoints", id, len(matches))
	}
}

func (r *Repo) readCheckpointBlob(h plumbing.Hash) (*Checkpoint, error) {
	data, err := r.readBlob(h)
	if err != nil {
		return nil, err
	}
	return parseCheckpoint(data)
}

// addCounts returns c with o added, allocating c when needed: Counts.Add
// needs a non-nil receiver, and a checkpoint without redactions keeps nil
// (no "redactions" field in checkpoint.json).
func addCounts(c, o redact.Counts) redact.Counts {
	if len(o) == 0 {
		return c
	}
	if c == nil {
		c = redact.Counts{}
	}
	c.Add(o)
	return c
}

// plural counts things in a commit message: "1 turn", "2 turns".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
