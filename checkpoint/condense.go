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
// the checkpoint refs and the notes.
const lockName = "checkpoints"

// Result is what Condense did for one session.
type Result struct {
	Session    string `json:"session"`
	Checkpoint string `json:"checkpoint"`
	Turns      int    `json:"turns"`             // turns in the checkpoint
	Skipped    bool   `json:"skipped,omitempty"` // already stored with the same content
	Linked     bool   `json:"linked,omitempty"`  // linked to Link.Commit
	// ChangedNothing: its turns are over and changed no file
	// (Checkpoint.ChangedNothing): no commit will take it.
	ChangedNothing bool `json:"-"`
}

// Link asks Condense to link the checkpoints it writes to a commit (the
// one a post-commit sweep runs for), those Wants says go with it, and to
// record the link in the same write that records the checkpoint: one state
// write per session, not two.
type Link struct {
	Commit string // a commit: a full hash or a ref, as Link takes
	// Wants decides for each new checkpoint, given the session as loaded
	// for condensing.
	Wants func(s *state.Session, c *Checkpoint) bool
}

// job is one session's checkpoint, its objects written, waiting for the
// commits and then for the session state update.
type job struct {
	res Result
	// meta is the tree of the checkpoint's directory on CheckpointsRef;
	// transcript, of its directory on the ref it names (zero when the
	// transcript was unavailable: nothing stored).
	meta, transcript plumbing.Hash
	ref              plumbing.ReferenceName
	session          *state.Session // as loaded for condensing
	cp               *Checkpoint
	linked           string // the commit the checkpoint was linked to
	// Turn-log progress to record once the commits are on the refs;
	// advance is false when an earlier checkpoint was rewritten in place.
	advance        bool
	next           int64 // turn-log offset reached
	condensedTurns int   // CondensedTurns when loaded
	starts         int   // turn-starts condensed
	// conversation replaces the transcript slice for a session whose agent
	// keeps no transcript file (state.Session.AgentDB).
	conversation *conversationSlice
}

// Condense writes the pending turns of the given sessions as checkpoints:
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
// With link set, the new checkpoints it wants are linked to its commit
// (see Link) before the sessions record their progress.
//
// It holds the store's checkpoints lock throughout, so concurrent
// condensers never condense the same turns twice, and takes session locks
// (Mutate) inside it: callers must not hold a session lock.
func (r *Repo) Condense(st *state.Store, ids []string, link *Link) (results []Result, err error) {
	convs := r.exportConversations(st, ids)
	err = r.Locked(st, func() error {
		results, err = r.condense(st, ids, link, convs)
		return err
	})
	if err != nil {
		return results, fmt.Errorf("condense: %w", err)
	}
	return results, nil
}

func (r *Repo) condense(st *state.Store, ids []string, link *Link, convs map[string]exported) (results []Result, err error) {
	var sessions []*state.Session
	var errs []error
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		s, err := load(st, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("condense %s: %w", id, err))
			continue
		}
		sessions = append(sessions, s)
	}
	jobs, _, failed, err := r.write(st, sessions, link, convs)
	errs = append(errs, failed...)
	if err != nil {
		return nil, errors.Join(append(errs, err)...)
	}
	recorded := recordCondensed(st, jobs)
	for i, j := range jobs {
		if recorded[i] != nil {
			errs = append(errs, recorded[i])
			continue
		}
		results = append(results, j.res)
	}
	return results, errors.Join(errs...)
}

// load reads a session to condense.
func load(st *state.Store, id string) (*state.Session, error) {
	s, err := st.Load(id)
	if err == nil && s.Incarnation == "" {
		// Written by an older tether: name the record before naming
		// checkpoints after it (any write gives it one).
		s, err = st.Mutate(id, func(*state.Session) error { return nil })
	}
	return s, err
}

// CondenseEnding condenses sessions as they end, in the transactions that
// end them (state.Store.MutateEachThen): their checkpoints are written
// first, and the one state write that ends each session records its
// progress too, with no to-condense mark to set and clear. Only a session
// whose transaction ends it, appends no turn records and whose agent keeps
// a transcript file is taken; the others are left as they are, and like
// any session this fails for, end with their to-condense mark, for
// Condense. The caller holds the checkpoints lock (Locked), and took it
// before the session locks.
func (r *Repo) CondenseEnding(st *state.Store, txs []*state.Tx, link *Link) ([]Result, error) {
	var sessions []*state.Session
	byID := map[string]*state.Tx{}
	for _, tx := range txs {
		if s := tx.Session; s.Phase == state.PhaseEnded && !tx.Appends() && !s.AgentDB {
			sessions, byID[s.ID] = append(sessions, s), tx
		}
	}
	if len(sessions) == 0 {
		return nil, nil
	}
	jobs, idle, failed, err := r.write(st, sessions, link, nil)
	if err != nil {
		return nil, fmt.Errorf("condense: %w", errors.Join(append(failed, err)...))
	}
	results := make([]Result, 0, len(jobs))
	for _, j := range jobs {
		j.record(byID[j.res.Session])
		results = append(results, j.res)
	}
	for _, id := range idle {
		byID[id].ClearMark(state.MarkCondense) // nothing to condense
	}
	if len(failed) > 0 {
		return results, fmt.Errorf("condense: %w", errors.Join(failed...))
	}
	return results, nil
}

// write builds the checkpoints of the sessions, as loaded, and puts them
// on their refs, linking those link wants: everything of a condense but
// recording the sessions' progress. It lists the sessions with nothing to
// condense in idle; failed has the errors of the sessions left out (and
// of a link that could not be made); err is for what failed them all.
func (r *Repo) write(st *state.Store, sessions []*state.Session, link *Link, convs map[string]exported) (jobs []*job, idle []string, failed []error, err error) {
	clone, err := st.CloneID()
	if err != nil {
		return nil, nil, nil, err
	}
	// A fetch may have brought packs since this Repo last looked.
	if err := r.refresh(); err != nil {
		return nil, nil, nil, err
	}
	_, root, err := r.tipAndRoot(CheckpointsRef)
	if err != nil {
		return nil, nil, nil, err
	}
	b := r.newBatch()
	defer b.discard()
	b.st = st
	b.conversations = convs
	st.RemoveStaleStaging(tempPrefix, time.Now())
	for _, s := range sessions {
		j, err := r.prepare(b, st, s, root, clone, link != nil)
		switch {
		case err != nil:
			failed = append(failed, fmt.Errorf("condense %s: %w", s.ID, err))
		case j == nil:
			idle = append(idle, s.ID)
		default:
			jobs = append(jobs, j)
		}
	}
	var note *pendingNote
	if link != nil {
		// A link that cannot be made leaves the checkpoints to be linked
		// later, as if none was asked for: they are recorded either way.
		if note, err = r.linkJobs(jobs, link); err != nil {
			failed = append(failed, err)
		}
	}
	if err := r.commitJobs(b, jobs, note); err != nil {
		return nil, nil, failed, err
	}
	r.callHook("after-ref", CheckpointsRef)
	return jobs, idle, failed, nil
}

// prepare builds the checkpoint of one session against the tree root of
// CheckpointsRef and writes its objects, its transcript for the clone
// named clone; nil means nothing is pending.
func (r *Repo) prepare(b *batch, st *state.Store, s *state.Session, root plumbing.Hash, clone string, atCommit bool) (*job, error) {
	id := s.ID
	recs, next, err := st.ReadTurns(id, s.Condensed)
	if err != nil {
		return nil, err
	}
	ended := sessionEnded(s, recs)
	// The previous checkpoint matters only when it ended in a running turn
	// that these records (or the session's end) now finish, or that a
	// commit made while it still runs counts up to (atCommit).
	var prev *Checkpoint
	if n := len(s.Checkpoints); n > 0 && (len(recs) == 0 && (ended || atCommit) || len(recs) > 0 && recs[0].T == state.RecTurnEnd) {
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
				cp.Turns[0].Earlier, cp.Turns[0].TranscriptFrom = pt.Changes, pt.TranscriptFrom
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
		last := &turns[len(turns)-1]
		// Counted up to a commit while it ran: now the whole turn.
		last.Running, last.Interrupted, last.Changes = false, true, nil
		cp = newCheckpoint(s, prev.ID, prev.TurnLog, turns)
		cp.Incarnation = prev.Incarnation // the record it was cut from, even one older than incarnations
		sp = span{from: prev.Transcript.From, toEOF: true}
		path = prev.Transcript.Path
		if path == "" {
			path = s.TranscriptPath
		}
		j.ref = plumbing.ReferenceName(prev.Transcript.Ref) // where the first version went
	case prev != nil && !ended && atCommit && prev.lastTurnRunning() && prev.Turns[len(prev.Turns)-1].Changes != nil:
		// Another commit made while the turn it last condensed still runs:
		// the same checkpoint, rewritten with the turn counted up to this
		// commit too, what it had at the earlier ones kept (Turn.Commits).
		turns := slices.Clone(prev.Turns)
		last := &turns[len(turns)-1]
		last.Commits, last.Changes = append(slices.Clone(last.Commits), last.Changes), nil
		cp = newCheckpoint(s, prev.ID, prev.TurnLog, turns)
		cp.Incarnation = prev.Incarnation
		sp = span{from: prev.Transcript.From, to: prev.Transcript.To}
		path = prev.Transcript.Path
		j.ref = plumbing.ReferenceName(prev.Transcript.Ref)
		if prev.Transcript.Unavailable || path == "" {
			path, sp = s.TranscriptPath, span{from: prev.Transcript.From, toEOF: true}
		}
	default:
		return nil, nil
	}
	if j.ref == "" {
		j.ref = TranscriptRef(cp.generation(), clone)
	}
	var said func(turn int) ([]byte, bool)
	if s.AgentDB {
		// No transcript file: what was said in these turns, as the agent
		// answered (or why it could not).
		e, ok := b.conversations[id]
		if !ok {
			e.err = fmt.Errorf("%s was not asked for the conversation", s.Agent)
		}
		c := e.slice(st, id, cp.Turns)
		j.conversation = &c
		said = e.turn
	}
	if r.changes != nil {
		r.changes(s, cp.Turns, said)
	}
	if err := b.writeCheckpoint(cp, path, transcriptLocOf(s), sp, j); err != nil {
		return nil, err
	}
	j.res = Result{Session: id, Checkpoint: cp.ID, Turns: len(cp.Turns), ChangedNothing: cp.ChangedNothing()}
	j.session, j.cp = s, cp
	return j, nil
}

// pendingNote is a link for commitJobs to write with the checkpoints:
// the IDs of jobs to merge into the note of commit.
type pendingNote struct {
	commit plumbing.Hash
	jobs   []*job
}

// linkJobs picks the jobs whose checkpoints link wants (nil when none).
func (r *Repo) linkJobs(jobs []*job, link *Link) (*pendingNote, error) {
	h, err := r.resolveCommit(link.Commit)
	if err != nil {
		return nil, fmt.Errorf("link to %s: %w", link.Commit, err)
	}
	note := &pendingNote{commit: h}
	for _, j := range jobs {
		if link.Wants(j.session, j.cp) {
			note.jobs = append(note.jobs, j)
		}
	}
	if len(note.jobs) == 0 {
		return nil, nil
	}
	return note, nil
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

// writeCheckpoint writes the files of a checkpoint and sets the trees of
// its directories in j: the transcript slice on j.ref, checkpoint.json and
// prompts.md on CheckpointsRef. Its prompts are already redacted; the
// transcript slice is redacted here, and checkpoint.json and prompts.md
// pass the redactor whole as well, so a secret in any other field (a
// branch or path name) is masked and counted too. Every step is
// deterministic: a retry writes the same bytes.
func (b *batch) writeCheckpoint(cp *Checkpoint, transcript string, loc transcriptLoc, sp span, j *job) error {
	var chunks []object.TreeEntry
	var err error
	if j.conversation != nil {
		chunks, err = b.writeConversation(*j.conversation, &cp.Transcript)
	} else {
		chunks, err = b.writeTranscript(transcript, loc, sp, &cp.Transcript)
	}
	if err != nil {
		return err
	}
	if len(chunks) > 0 {
		cp.Transcript.Ref = j.ref.String()
		if j.transcript, err = b.writeTree(chunks); err != nil {
			return err
		}
	}
	cp.Redactions = nil
	for _, t := range cp.Turns {
		cp.Redactions = addCounts(cp.Redactions, t.Redactions)
	}
	cp.Redactions = addCounts(cp.Redactions, cp.Transcript.Redactions)
	data, err := cp.marshal()
	if err != nil {
		return err
	}
	if _, other := b.r.red.String(string(data)); other != nil {
		cp.Redactions = addCounts(cp.Redactions, other)
		if data, err = cp.marshal(); err != nil {
			return err
		}
		clean, _ := b.r.red.String(string(data))
		data = []byte(clean)
	}
	md, _ := b.r.red.String(string(cp.promptsMarkdown())) // its secrets are the ones counted above
	var entries []object.TreeEntry
	for name, content := range map[string][]byte{"checkpoint.json": data, "prompts.md": []byte(md)} {
		h, err := b.writeBytes(plumbing.BlobObject, content)
		if err != nil {
			return fmt.Errorf("checkpoint %s: %s: %w", cp.ID, name, err)
		}
		entries = append(entries, blobEntry(name, h))
	}
	j.meta, err = b.writeTree(entries)
	return err
}

// commitJobs puts the checkpoints on the refs, one commit per ref however
// many checkpoints: their transcripts on the transcript refs first, then
// checkpoint.json and prompts.md on CheckpointsRef, so a checkpoint is
// never listed before its transcript is stored, then the note linking
// them, if any, which names them. All new objects go into one pack. A
// checkpoint already there with the same content is skipped. A lost
// compare-and-swap rebuilds on the new tips (what went through is then
// found in place); the checkpoint trees are reused.
func (r *Repo) commitJobs(b *batch, jobs []*job, note *pendingNote) error {
	refs := []plumbing.ReferenceName{}
	byRef := map[plumbing.ReferenceName][]*job{}
	for _, j := range jobs {
		if !j.transcript.IsZero() {
			if byRef[j.ref] == nil {
				refs = append(refs, j.ref)
			}
			byRef[j.ref] = append(byRef[j.ref], j)
		}
	}
	slices.Sort(refs)
	refs = append(refs, CheckpointsRef)
	byRef[CheckpointsRef] = jobs
	for range casAttempts {
		type update struct {
			ref         plumbing.ReferenceName
			commit, old plumbing.Hash
		}
		var updates []update
		for _, ref := range refs {
			tip, root, err := r.tipAndRoot(ref)
			if err != nil {
				return err
			}
			var edits []edit
			var msg strings.Builder
			for _, j := range byRef[ref] {
				id, leaf := j.res.Checkpoint, j.meta
				if ref != CheckpointsRef {
					leaf = j.transcript
				}
				e, ok, err := r.lookup(root, id[:2], id[2:])
				if err != nil {
					return err
				}
				same := ok && e.Hash == leaf
				if ref == CheckpointsRef {
					j.res.Skipped = same
				}
				if same {
					continue
				}
				edits = append(edits, edit{path: []string{id[:2], id[2:]}, entry: treeEntry(id[2:], leaf)})
				fmt.Fprintf(&msg, "%s  session %s, %s\n", id, j.res.Session, plural(j.res.Turns, "turn"))
			}
			if len(edits) == 0 {
				continue
			}
			what, trailer := "checkpoint", ""
			if ref != CheckpointsRef {
				what = "transcript"
			} else {
				n, err := r.recent(tip, root)
				if err != nil {
					return err
				}
				added := len(edits)
				if n+added > r.rollAt {
					// Roll: the new tip's tree holds only the new
					// checkpoints and the archive file naming the old tip.
					blob, err := b.writeBytes(plumbing.BlobObject, []byte(tip.String()+"\n"))
					if err != nil {
						return err
					}
					edits = append(edits, edit{path: []string{archiveFile}, entry: blobEntry(archiveFile, blob)})
					root, n = plumbing.ZeroHash, 0
				}
				trailer = fmt.Sprintf("\n%s%d\n", recentTrailer, n+added)
			}
			newRoot, err := b.applyEdits(root, edits)
			if err != nil {
				return err
			}
			text, _ := r.red.String(fmt.Sprintf("tether: %s\n\n%s", plural(len(edits), what), msg.String())) // session IDs come from agents
			c, err := b.writeCommit(newRoot, text+trailer, tip)
			if err != nil {
				return err
			}
			updates = append(updates, update{ref, c, tip})
		}
		if note != nil {
			var ids []string
			for _, j := range note.jobs {
				ids = append(ids, j.res.Checkpoint)
			}
			c, tip, changed, err := b.noteCommit(note.commit, direct(ids))
			if err != nil {
				return err
			}
			if changed {
				updates = append(updates, update{NotesRef, c, tip})
			}
		}
		if err := b.flush(); err != nil {
			return err
		}
		lost := false
		for _, u := range updates {
			r.callHook("before-ref", u.ref.String())
			err := r.casRef(u.ref, u.commit, u.old)
			if errors.Is(err, errRefChanged) {
				lost = true
				break
			}
			if err != nil {
				return err
			}
		}
		if !lost {
			if note != nil {
				for _, j := range note.jobs {
					j.linked, j.res.Linked = note.commit.String(), true
				}
			}
			return nil
		}
	}
	return fmt.Errorf("update %s: lost the race %d times", CheckpointsRef, casAttempts)
}

// tipAndRoot reads a ref's commit and its tree (zero for a missing ref).
func (r *Repo) tipAndRoot(ref plumbing.ReferenceName) (tip, root plumbing.Hash, err error) {
	if tip, err = r.readRef(ref); err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	if root, err = r.commitTree(tip); err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, err
	}
	return tip, root, nil
}

// recordCondensed records each job in its session (see job.record), all
// sessions in one grouped write. It returns each job's error.
func recordCondensed(st *state.Store, jobs []*job) []error {
	ids := make([]string, len(jobs))
	byID := make(map[string]*job, len(jobs))
	for i, j := range jobs {
		ids[i], byID[j.res.Session] = j.res.Session, j
	}
	_, errs := st.MutateEach(ids, func(tx *state.Tx) error {
		if !tx.Exists {
			return fmt.Errorf("session is gone: %w", state.ErrNotFound)
		}
		if !byID[tx.Session.ID].record(tx) {
			return state.ErrNoChange
		}
		return nil
	})
	for i, err := range errs {
		if err != nil {
			errs[i] = fmt.Errorf("record checkpoint %s in session %s: %w", jobs[i].res.Checkpoint, ids[i], err)
		}
	}
	return errs
}

// record advances the session's condensed offset and lists the job's
// checkpoint (with the commit it was linked to, if any), never moving an
// offset back if another condenser already got further. A session
// condensed to the end of its turn log has its to-condense mark cleared
// with that write. It reports whether the session changed.
func (j *job) record(tx *state.Tx) bool {
	s, changed := tx.Session, false
	if j.advance && s.Condensed < j.next {
		s.CondensedTurns = max(s.CondensedTurns, j.condensedTurns+j.starts)
		s.Condensed = j.next
		changed = true
	}
	i := slices.IndexFunc(s.Checkpoints, func(c state.CheckpointRef) bool { return c.ID == j.res.Checkpoint })
	if i < 0 {
		s.Checkpoints = append(s.Checkpoints, state.CheckpointRef{ID: j.res.Checkpoint})
		i, changed = len(s.Checkpoints)-1, true
	}
	if c := &s.Checkpoints[i]; j.linked != "" && !slices.Contains(c.Linked, j.linked) {
		c.Linked = append(c.Linked, j.linked)
		changed = true
	}
	if !s.HasPending() {
		tx.ClearMark(state.MarkCondense)
	}
	return changed
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
