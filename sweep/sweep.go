package sweep

import (
	"fmt"
	"time"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/proclive"
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
	if opts.PostCommit && !opts.DryRun {
		h, _, err := gitdir.Head(repo.GitDir, repo.CommonDir)
		if err != nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("read HEAD: %v", err))
		}
		head = h
	}
	live, warns, err := st.List()
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	for _, w := range warns {
		rep.Warnings = append(rep.Warnings, w.Msg)
	}

	var toCondense, toEnd []string
	if opts.GitHub != nil {
		live, toCondense = reconcileGitHub(repo, st, live, opts, now, rep)
	}
	for _, s := range live {
		v := state.OwnerVerdict(s)
		ev, ok := state.Decide(s, v, now(), opts.StaleAfter)
		if !ok {
			rep.Sessions = append(rep.Sessions, Checked{s, v})
			// A running turn is condensed too: the commit it just made links
			// to it, and its end continues in the next checkpoint.
			if opts.PostCommit && s.Worktree == repo.WorkTree && s.HasPending() {
				toCondense = append(toCondense, s.ID)
			}
			continue
		}
		if opts.DryRun {
			rep.Finalized = append(rep.Finalized, Transition{ID: s.ID, Agent: s.Agent, From: s.Phase, Reason: endReason(s.Phase, ev), Owner: v.Reason})
			continue
		}
		toEnd = append(toEnd, s.ID)
	}
	if opts.DryRun {
		return rep, nil
	}
	for _, id := range toEnd {
		if opts.beforeFinalize != nil {
			opts.beforeFinalize(id)
		}
	}
	for _, f := range finalize(st, toEnd, now, opts.StaleAfter) {
		switch {
		case f.err != nil:
			rep.Warnings = append(rep.Warnings, f.err.Error())
		case f.ended:
			rep.Finalized = append(rep.Finalized, f.tr)
			toCondense = append(toCondense, f.tr.ID)
		case f.session != nil:
			// Revived between the scan and the lock: shown as it is now.
			rep.Sessions = append(rep.Sessions, Checked{f.session, state.OwnerVerdict(f.session)})
		}
	}
	// Sessions that ended since the last condense — by their agent's own
	// session end, or by a sweep that died before condensing them.
	ended, err := st.Marked(state.MarkCondense)
	if err != nil {
		rep.Warnings = append(rep.Warnings, err.Error())
	}
	for _, id := range ended {
		toCondense = appendUnique(toCondense, id)
	}

	pendingLinks, err := st.Marked(state.MarkUnlinked)
	if err != nil {
		rep.Warnings = append(rep.Warnings, err.Error())
	}
	if len(toCondense) > 0 || head != "" && len(pendingLinks) > 0 {
		if err := write(repo, st, rep, toCondense, head, pendingLinks); err != nil {
			return rep, err
		}
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

// write condenses the sessions toCondense and links the checkpoints of
// the sessions pendingLinks (and of those just condensed) to head, when
// set.
func write(repo gitdir.Repo, st *state.Store, rep *Report, toCondense []string, head string, pendingLinks []string) error {
	cp, err := checkpoint.Open(repo.CommonDir)
	if err != nil {
		return fmt.Errorf("open repository: %w", err)
	}
	if len(toCondense) > 0 {
		// At a commit, the checkpoints of this worktree's sessions are
		// linked to it as they are written.
		var link *checkpoint.Link
		if head != "" {
			link = &checkpoint.Link{Commit: head, Wants: func(s *state.Session, _ *checkpoint.Checkpoint) bool {
				return s.Worktree == repo.WorkTree
			}}
		}
		results, err := condense(st, cp, toCondense, link)
		rep.Checkpoints = append(rep.Checkpoints, results...)
		for _, r := range results {
			if r.Linked {
				rep.Linked, rep.Head = append(rep.Linked, r.Checkpoint), head
			}
		}
		if err != nil {
			return err
		}
	}
	if head != "" && len(pendingLinks) > 0 {
		// Checkpoints condensed earlier, waiting for a commit.
		linked, err := linkToHead(st, cp, repo.WorkTree, head, pendingLinks)
		rep.Linked, rep.Head = append(rep.Linked, linked...), head
		if err != nil {
			return fmt.Errorf("link checkpoints to %s: %w", head, err)
		}
	}
	return nil
}

// finalized is what finalize did to one session.
type finalized struct {
	tr      Transition
	ended   bool
	session *state.Session // as stored, when it was not ended
	err     error
}

// finalize ends sessions under their locks, in one grouped write, after
// deciding again on the state loaded there: a turn may have revived one
// since the scan.
func finalize(st *state.Store, ids []string, now func() time.Time, staleAfter time.Duration) []finalized {
	out := make([]finalized, len(ids))
	at := make(map[string]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	sessions, errs := st.MutateEach(ids, func(tx *state.Tx) error {
		s := tx.Session
		v := state.OwnerVerdict(s)
		ev, ok := state.Decide(s, v, now(), staleAfter)
		if !ok {
			return state.ErrNoChange
		}
		tr, ended := endSession(s, ev, now(), v.Reason)
		if !ended {
			return state.ErrNoChange
		}
		out[at[s.ID]].tr = tr
		return nil
	})
	for i, id := range ids {
		f := &out[i]
		f.session = sessions[i]
		if errs[i] != nil {
			*f = finalized{err: fmt.Errorf("finalize session %s: %w", id, errs[i])}
			continue
		}
		if f.tr.ID == "" {
			continue
		}
		f.ended = true
		st.Logger().Info("transition", "session", id, "agent", f.tr.Agent, "from", string(f.tr.From),
			"to", string(state.PhaseEnded), "reason", f.tr.Reason, "owner", f.tr.Owner)
	}
	return out
}

// endSession applies an ending event to a live session loaded under its
// lock, and returns the transition to report; false when the event does not
// end a session in its phase.
func endSession(s *state.Session, ev state.Event, now time.Time, ownerVerdict string) (Transition, bool) {
	to, act := state.Transition(s.Phase, ev)
	if act.Ignore || !act.Finalize {
		return Transition{}, false
	}
	tr := Transition{ID: s.ID, Agent: s.Agent, From: s.Phase, Reason: act.EndReason, Owner: ownerVerdict}
	s.Phase = to
	s.EndedAt, s.EndReason, s.Interrupted = now.UTC(), act.EndReason, act.Interrupted
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
// checkpoints, linking those link wants, marks the others as waiting for a
// commit to link to and, once all went well, clears the sessions'
// to-condense marks.
// After a failure the marks stay and the next sweep tries again:
// condensing is idempotent.
func condense(st *state.Store, cp *checkpoint.Repo, ids []string, link *checkpoint.Link) ([]checkpoint.Result, error) {
	results, err := cp.Condense(st, ids, link)
	var made []string
	for _, r := range results {
		if r.Checkpoint != "" && !r.Linked {
			made = append(made, r.Session)
		}
	}
	if merr := st.SetMarks(state.MarkUnlinked, made); merr != nil && err == nil {
		err = merr
	}
	if err != nil {
		return results, fmt.Errorf("condense: %w", err)
	}
	for _, id := range ids {
		if err := st.ClearMark(state.MarkCondense, id); err != nil {
			return results, err
		}
	}
	return results, nil
}
