package sweep

import (
	"errors"
	"fmt"
	"time"

	"github.com/tetherdev/tether/agent"
	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/conversation"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/snapshot"
	"github.com/tetherdev/tether/state"
)

// Options steer one sweep.
type Options struct {
	// StaleAfter ends sessions of Unknown liveness whose last activity is
	// older than this; zero turns the policy off.
	StaleAfter time.Duration
	// DryRun decides and reports but writes nothing.
	DryRun bool
	// PostCommit also condenses this worktree's pending turns and links
	// checkpoints to HEAD: the work of the post-commit hook.
	PostCommit bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// GitHub, when set, reconciles the live sessions with GitHub first
	// (see github.go).
	GitHub *GitHubOptions

	// beforeFinalize runs between the scan and taking the session lock;
	// tests use it to revive a session in that window.
	beforeFinalize func(id string)
}

// Transition is one session ended by this sweep.
type Transition struct {
	ID     string      `json:"id"`
	Agent  string      `json:"agent"`
	From   state.Phase `json:"from"`
	Reason string      `json:"reason"`
	Owner  string      `json:"owner_verdict"`
}

// Report says what a sweep did (or, with DryRun, would do).
type Report struct {
	Finalized   []Transition        `json:"finalized"`
	Checkpoints []checkpoint.Result `json:"checkpoints"`
	Linked      []string            `json:"linked,omitempty"` // checkpoint IDs linked to HEAD
	Head        string              `json:"head,omitempty"`
	Warnings    []string            `json:"warnings"`
	GitHub      []GitHubUpdate      `json:"github,omitempty"` // views changed by --github
	// Sessions are the live sessions as the sweep left them, with the
	// verdict it reached, for status to show without a second scan.
	Sessions []Checked `json:"-"`
}

// Checked is a session with its owner's verdict.
type Checked struct {
	Session *state.Session
	Verdict proclive.Verdict
}

// Run sweeps one repository's store.
func Run(repo gitdir.Repo, st *state.Store, opts Options) (*Report, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	rep := &Report{Finalized: []Transition{}, Checkpoints: []checkpoint.Result{}, Warnings: []string{}}
	// The commit that ran the post-commit hook, read first: a sweep that
	// goes on in the background after the commit returned must link to
	// that commit, not to one made since.
	var head string
	var madeAt time.Time // the commit's, to the nanosecond: git keeps whole seconds
	if opts.PostCommit && !opts.DryRun {
		madeAt = now()
		h, _, err := gitdir.Head(repo.GitDir, repo.CommonDir)
		if err != nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("read HEAD: %v", err))
		}
		head = h
	}
	// Events their hooks spooled are applied for good first: what the
	// sweep decides on and condenses is then in the store.
	if !opts.DryRun {
		if _, err := st.DrainSpool(); err != nil {
			rep.Warnings = append(rep.Warnings, err.Error())
		}
	}
	live, warns, err := st.List()
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	for _, w := range warns {
		rep.Warnings = append(rep.Warnings, w.Msg)
	}

	var toCondense, toSettle []string
	if opts.GitHub != nil {
		live, toCondense = reconcileGitHub(repo, st, live, opts, now, rep)
	}
	// A running turn is condensed at a commit too: the commit it just made
	// links to it, and its end continues in the next checkpoint. One
	// condensed already is counted up to this commit as well.
	condenseLive := func(s *state.Session) {
		if opts.PostCommit && s.Worktree == repo.WorkTree && (s.HasPending() || s.TurnRunning()) {
			toCondense = append(toCondense, s.ID)
		}
	}
	for _, s := range live {
		v := state.OwnerVerdict(s)
		d := decide(s, v, turnCancelled(s), now(), opts.StaleAfter)
		if !d.endTurn && !d.end {
			rep.Sessions = append(rep.Sessions, Checked{s, v})
			condenseLive(s)
			continue
		}
		if opts.DryRun {
			if d.end {
				from := s.Phase
				if d.endTurn {
					from = state.PhaseIdle
				}
				rep.Finalized = append(rep.Finalized, Transition{ID: s.ID, Agent: s.Agent, From: from, Reason: endReason(d.from, d.ev), Owner: v.Reason})
			} else {
				rep.Sessions = append(rep.Sessions, Checked{s, v})
			}
			continue
		}
		toSettle = append(toSettle, s.ID)
	}
	if opts.DryRun {
		return rep, nil
	}
	for _, id := range toSettle {
		if opts.beforeFinalize != nil {
			opts.beforeFinalize(id)
		}
	}
	// What writes checkpoints, opened once when there is something to
	// write. A sweep that cannot open it still finalizes: the sessions it
	// ends keep their to-condense marks.
	var wr *writer
	var werr error
	writing := func() *writer {
		if wr == nil && werr == nil {
			wr, werr = openWriter(repo, st, head, madeAt)
		}
		return wr
	}
	if len(toSettle) > 0 {
		writing()
	}
	settled, results, cerr := settle(st, wr, toSettle, now, opts.StaleAfter)
	// The sessions condensed as they ended carry no to-condense mark; the
	// others ended marked, and are condensed below with the rest.
	report(rep, head, results)
	for _, f := range settled {
		switch {
		case f.err != nil:
			rep.Warnings = append(rep.Warnings, f.err.Error())
		case f.ended:
			rep.Finalized = append(rep.Finalized, f.tr)
		case f.session != nil:
			// Its cancelled turn ended, or revived between the scan and
			// the lock: shown as it is now.
			rep.Sessions = append(rep.Sessions, Checked{f.session, state.OwnerVerdict(f.session)})
			condenseLive(f.session)
		}
	}
	// Sessions that ended since the last condense — by their agent's own
	// session end, or by a sweep that died before condensing them.
	ended, err := st.Marked(state.MarkCondense)
	if err != nil {
		rep.Warnings = append(rep.Warnings, err.Error())
	}
	// A session its agent ended mid-turn may yet say, in what it writes
	// as it exits, that the turn was cancelled: its record settles first,
	// and is condensed once settled.
	unsettled, err := settleEnds(st, ended, now())
	if err != nil {
		rep.Warnings = append(rep.Warnings, err.Error())
	}
	for _, id := range ended {
		if !unsettled[id] {
			toCondense = appendUnique(toCondense, id)
		}
	}

	pendingLinks, err := st.Marked(state.MarkUnlinked)
	if err != nil {
		rep.Warnings = append(rep.Warnings, err.Error())
	}
	if len(toCondense) > 0 || head != "" && len(pendingLinks) > 0 {
		if writing() == nil {
			return rep, errors.Join(cerr, werr)
		}
		if err := wr.write(st, rep, toCondense, pendingLinks); err != nil {
			return rep, errors.Join(cerr, err)
		}
	}
	indexLinks(repo, st, rep)
	if cerr != nil {
		return rep, cerr
	}
	if len(rep.Sessions) == 0 {
		// Nothing live is left: unless a mark remains, a commit has nothing
		// to start a sweep for.
		if _, err := st.SettleActive(); err != nil {
			rep.Warnings = append(rep.Warnings, err.Error())
		}
	}
	return rep, nil
}

// openCheckpoints opens the repository's checkpoints, asking the agents
// that keep no transcript file for their sessions' conversations, and
// recording what each turn changed (from the captures of package
// snapshot).
func openCheckpoints(repo gitdir.Repo, st *state.Store) (*checkpoint.Repo, error) {
	return openCheckpointsAt(repo, st, nil)
}

// openCheckpointsAt is openCheckpoints for a sweep run by a commit: the
// turns still running in its worktree are counted up to it.
func openCheckpointsAt(repo gitdir.Repo, st *state.Store, at *atCommit) (*checkpoint.Repo, error) {
	cp, err := checkpoint.Open(repo.CommonDir)
	if err != nil {
		return nil, err
	}
	cp.SetConversations(conversation.Export)
	cp.SetTurnChanges(turnChanges(st, repo.CommonDir, at))
	return cp, nil
}

// writer writes a sweep's checkpoints and links: the repository's
// checkpoints and, at a commit, what the commit changed.
type writer struct {
	cp       *checkpoint.Repo
	worktree string
	head     string // the commit, "" for a sweep not run by one
	commit   snapshot.Commit
	// uncommitted says whether the work tree still holds changes to any
	// of the paths: a checkpoint not linked waits for a commit while it
	// does; in doubt, it waits.
	uncommitted func(paths []string) bool
}

// openWriter opens the checkpoints and reads what head, when set, changed.
func openWriter(repo gitdir.Repo, st *state.Store, head string, madeAt time.Time) (*writer, error) {
	var at *atCommit
	if head != "" {
		at = &atCommit{worktree: repo.WorkTree, head: head}
	}
	cp, err := openCheckpointsAt(repo, st, at)
	if err != nil {
		return nil, fmt.Errorf("open repository: %w", err)
	}
	w := &writer{cp: cp, worktree: repo.WorkTree, head: head}
	if head == "" {
		return w, nil
	}
	// What the commit changed decides which checkpoints go with it.
	r, err := snapshot.OpenReader(repo.CommonDir)
	if err == nil {
		w.commit, err = r.CommitChanges(head)
	}
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", head, err)
	}
	w.uncommitted = func(paths []string) bool {
		changed, err := r.Uncommitted(head, repo.WorkTree, paths)
		return changed || err != nil
	}
	// Its post-commit hook runs right after it: a closer time than the
	// committer date, and one a rebase or GIT_COMMITTER_DATE cannot set.
	w.commit.At = madeAt
	return w, nil
}

// link is what the checkpoints written at a commit link to it: those of
// this worktree's sessions that contributed to it. The others wait for a
// commit that takes one of their paths. Nil when no commit runs the sweep.
func (w *writer) link() *checkpoint.Link {
	if w.head == "" {
		return nil
	}
	return &checkpoint.Link{Commit: w.head, Wants: func(s *state.Session, c *checkpoint.Checkpoint) bool {
		return s.Worktree == w.worktree && contributed(c, w.commit)
	}}
}

// write condenses the sessions toCondense and links the checkpoints of
// the sessions pendingLinks (and of those just condensed) to the commit,
// when there is one.
func (w *writer) write(st *state.Store, rep *Report, toCondense, pendingLinks []string) error {
	if len(toCondense) > 0 {
		results, err := condense(st, w.cp, toCondense, w.link())
		report(rep, w.head, results)
		if err != nil {
			return err
		}
	}
	if w.head != "" && len(pendingLinks) > 0 {
		// Checkpoints condensed earlier, waiting for a commit.
		linked, err := linkToHead(st, w.cp, w.worktree, w.head, w.commit, w.uncommitted, pendingLinks)
		rep.Linked, rep.Head = append(rep.Linked, linked...), w.head
		if err != nil {
			return fmt.Errorf("link checkpoints to %s: %w", w.head, err)
		}
	}
	return nil
}

// report adds the checkpoints a condense wrote to the report, with those
// it linked to head.
func report(rep *Report, head string, results []checkpoint.Result) {
	for _, r := range results {
		rep.Checkpoints = append(rep.Checkpoints, r)
		if r.Linked {
			rep.Linked, rep.Head = append(rep.Linked, r.Checkpoint), head
		}
	}
}

// markUnlinked marks the sessions of the checkpoints written and not
// linked as waiting for a commit to link them to; one that changed nothing
// waits for none.
func markUnlinked(st *state.Store, results []checkpoint.Result) error {
	var made []string
	for _, r := range results {
		if r.Checkpoint != "" && !r.Linked && !r.ChangedNothing {
			made = append(made, r.Session)
		}
	}
	return st.SetMarks(state.MarkUnlinked, made)
}

// settled is what settle did to one session.
type settled struct {
	tr        Transition
	ended     bool
	cancelled bool           // its cancelled turn's end was recorded
	session   *state.Session // as stored, when it was not ended
	err       error
}

// decision is what the sweep does with one live session.
type decision struct {
	// endTurn: the running turn is over, the agent said so only in its
	// transcript (a cancel): its turn-end is recorded, the session idle.
	endTurn bool
	// end: the session ends by ev, from the table's row from (idle after
	// endTurn; see state.TablePhase).
	end  bool
	ev   state.Event
	from state.Phase
}

// decide is the sweep's verdict on a live session, from its phase, its
// owner's liveness, whether its transcript shows the running turn
// cancelled (only asked of active sessions) and the stale-after policy.
// A cancelled turn ends first, so an owner gone afterwards ended an idle
// session: owner-exited, not interrupted. Pure: the sweep decides on the
// scan, and again on the state loaded under the lock.
func decide(s *state.Session, v proclive.Verdict, cancelled bool, now time.Time, staleAfter time.Duration) decision {
	d := decision{from: state.TablePhase(s)}
	if s.TurnRunning() && cancelled {
		d.endTurn, d.from = true, state.PhaseIdle
		idle := *s
		idle.SetPhase(state.PhaseIdle)
		s = &idle
	}
	d.ev, d.end = state.Decide(s, v, now, staleAfter)
	return d
}

// turnCancelled reads, for a session whose turn runs only, whether its
// agent wrote the running turn's cancel into its transcript.
func turnCancelled(s *state.Session) bool {
	return s.TurnRunning() &&
		agent.TurnCancelled(s.Agent, s.TranscriptRoot, s.TranscriptPath, s.TurnTranscriptFrom)
}

// lastWords records what the transcript of a session whose owner died says
// that no hook reported: a turn its agent ran without announcing it
// (agent.StartTurnFromTranscript), a model error that ended the running
// turn before the agent exited (a headless Qwen Code fires no hook on
// one). A turn that failed so ended; the owner's death did not cut it.
func lastWords(tx *state.Tx, at time.Time) error {
	s := tx.Session
	head := worktreeHead(s.Worktree)
	size := agent.TranscriptSize(s.TranscriptRoot, s.TranscriptPath)
	if _, err := agent.StartTurnFromTranscript(tx, at, head, size); err != nil {
		return err
	}
	if s.Phase != state.PhaseActive {
		return nil
	}
	_, err := agent.EndTurnFromTranscript(tx, at, head, true, size)
	return err
}

// settle ends cancelled turns and finalizes sessions under their locks, in
// one grouped write, after deciding again on the state loaded there: a
// turn may have revived one since the scan. With w, the sessions it ends
// are condensed into that write (checkpoint.CondenseEnding), under the
// checkpoints lock taken first; it returns what was condensed. Without w,
// or when the checkpoints lock cannot be had, they end with their
// to-condense marks, for a condense after.
func settle(st *state.Store, w *writer, ids []string, now func() time.Time, staleAfter time.Duration) ([]settled, []checkpoint.Result, error) {
	out := make([]settled, len(ids))
	at := make(map[string]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	end := func(tx *state.Tx) error {
		s := tx.Session
		v := state.OwnerVerdict(s)
		if v.Liveness == proclive.Dead {
			// The agent's last words, which no hook reported: a turn it
			// never announced, or the model error that ended its turn.
			if err := lastWords(tx, now().UTC()); err != nil {
				return err
			}
		}
		d := decide(s, v, turnCancelled(s), now(), staleAfter)
		if !d.endTurn && !d.end {
			return state.ErrNoChange
		}
		if d.endTurn {
			size := agent.TranscriptSize(s.TranscriptRoot, s.TranscriptPath)
			if _, err := agent.EndTurnFromTranscript(tx, now().UTC(), worktreeHead(s.Worktree), false, size); err != nil {
				return err
			}
			out[at[s.ID]].cancelled = true
		}
		if d.end {
			if tr, ended := endSession(s, d.ev, now(), v.Reason); ended {
				out[at[s.ID]].tr = tr
			}
		}
		return nil
	}
	var sessions []*state.Session
	var errs []error
	var results []checkpoint.Result
	var cerr error
	ran := false
	if w != nil {
		lerr := w.cp.Locked(st, func() error {
			ran = true
			sessions, errs = st.MutateEachThen(ids, end, func(txs []*state.Tx) {
				r, err := w.cp.CondenseEnding(st, txs, w.link())
				results, cerr = append(results, r...), errors.Join(cerr, err)
			})
			return nil
		})
		if ran {
			cerr = errors.Join(cerr, lerr, markUnlinked(st, results))
		}
	}
	if !ran {
		sessions, errs = st.MutateEach(ids, end)
	}
	for i, id := range ids {
		f := &out[i]
		f.session = sessions[i]
		if errs[i] != nil {
			*f = settled{err: fmt.Errorf("settle session %s: %w", id, errs[i])}
			continue
		}
		if f.cancelled {
			st.Logger().Info("turn cancelled (from the transcript)", "session", id)
		}
		if f.tr.ID == "" {
			continue
		}
		f.ended = true
		st.Logger().Info("transition", "session", id, "agent", f.tr.Agent, "from", string(f.tr.From),
			"to", string(state.PhaseEnded), "reason", f.tr.Reason, "owner", f.tr.Owner)
	}
	return out, results, cerr
}

// worktreeHead is the commit checked out in a session's worktree, "" when
// it can't be read: a turn-end record only notes it.
func worktreeHead(dir string) string {
	r, err := gitdir.Find(dir)
	if err != nil {
		return ""
	}
	head, _, _ := gitdir.Head(r.GitDir, r.CommonDir)
	return head
}

// endSession applies an ending event to a live session loaded under its
// lock, and returns the transition to report; false when the event does not
// end a session in its phase.
func endSession(s *state.Session, ev state.Event, now time.Time, ownerVerdict string) (Transition, bool) {
	to, act := state.Transition(state.TablePhase(s), ev)
	if act.Ignore || !act.Finalize {
		return Transition{}, false
	}
	tr := Transition{ID: s.ID, Agent: s.Agent, From: s.Phase, Reason: act.EndReason, Owner: ownerVerdict}
	s.SetPhase(to)
	s.EndedAt, s.EndReason, s.Interrupted, s.EndedBy = now.UTC(), act.EndReason, act.Interrupted, ev
	return tr, true
}

// endReason is the reason a decided event would record, for dry runs.
func endReason(from state.Phase, ev state.Event) string {
	_, act := state.Transition(from, ev)
	return act.EndReason
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// condense writes the pending turns of the given sessions to the
// checkpoints, linking those link wants, and marks the others as waiting
// for a commit to link to. Condense clears the to-condense mark of each
// session it wrote a checkpoint for; once all went well, so does this for
// the sessions that had nothing to condense.
// After a failure the marks stay and the next sweep tries again:
// condensing is idempotent.
func condense(st *state.Store, cp *checkpoint.Repo, ids []string, link *checkpoint.Link) ([]checkpoint.Result, error) {
	results, err := cp.Condense(st, ids, link)
	if merr := markUnlinked(st, results); merr != nil && err == nil {
		err = merr
	}
	if err != nil {
		return results, fmt.Errorf("condense: %w", err)
	}
	written := map[string]bool{}
	for _, r := range results {
		written[r.Session] = true
	}
	var rest []string
	for _, id := range ids {
		if !written[id] {
			rest = append(rest, id)
		}
	}
	return results, clearCondensed(st, rest)
}

// clearCondensed clears the to-condense marks of the sessions ids whose
// turn logs are condensed to the end. A session that took turns, or ended
// again, after a condense pass read it keeps its mark, for the next sweep
// to condense the rest. Its lock makes the check and the clearing one
// step: a session that ends marks itself, then writes its last turns,
// under that lock.
func clearCondensed(st *state.Store, ids []string) error {
	_, errs := st.MutateEach(ids, func(tx *state.Tx) error {
		if !tx.Session.HasPending() {
			tx.ClearMark(state.MarkCondense)
		}
		return state.ErrNoChange
	})
	return errors.Join(errs...)
}

// settleGrace bounds the wait for an agent that ended its session mid-turn
// to write how the turn ended: it does as it exits, within milliseconds of
// its session-end hook; an agent that lives on (a TUI cleared mid-turn)
// has written it well before this.
const settleGrace = 10 * time.Second

// agentWriting says whether the agent of an Unsettled session may still
// write how its turn ended: it is alive, and ended the session moments
// ago. Pure, for the table.
func agentWriting(v proclive.Liveness, sinceEnd time.Duration) bool {
	return v == proclive.Alive && sinceEnd < settleGrace
}

// settleEnds settles the records of the sessions ids that are
// agent.Unsettled, once their agent is done writing (agent.SettleEnd), and
// returns those whose agent may still write: they are condensed later,
// settled.
func settleEnds(st *state.Store, ids []string, now time.Time) (map[string]bool, error) {
	var candidates []string
	for _, id := range ids {
		if s, err := st.Load(id); err == nil && agent.Unsettled(s) {
			candidates = append(candidates, id)
		}
	}
	if len(candidates) == 0 {
		return nil, nil
	}
	writing := map[string]bool{}
	var settled []string
	_, errs := st.MutateEach(candidates, func(tx *state.Tx) error {
		s := tx.Session
		if !agent.Unsettled(s) {
			return state.ErrNoChange
		}
		if agentWriting(state.OwnerVerdict(s).Liveness, now.Sub(s.EndedAt)) {
			writing[s.ID] = true
			return state.ErrNoChange
		}
		changed, err := agent.SettleEnd(tx, worktreeHead(s.Worktree))
		if err != nil {
			return err
		}
		if !changed {
			return state.ErrNoChange
		}
		settled = append(settled, s.ID)
		return nil
	})
	for _, id := range settled {
		st.Logger().Info("turn ended before the session, as its agent wrote (settled)", state.LogKeySession, id)
	}
	return writing, errors.Join(errs...)
}
