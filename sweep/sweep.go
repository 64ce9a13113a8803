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
	live, warns, err := st.List()
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	for _, w := range warns {
		rep.Warnings = append(rep.Warnings, w.Msg)
	}

	var toCondense []string
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
		if opts.beforeFinalize != nil {
			opts.beforeFinalize(s.ID)
		}
		tr, ended, err := finalize(st, s.ID, now, opts.StaleAfter)
		if err != nil {
			rep.Warnings = append(rep.Warnings, err.Error())
			continue
		}
		if !ended {
			// Revived between the scan and the lock: show it as it is now.
			if fresh, err := st.Load(s.ID); err == nil {
				rep.Sessions = append(rep.Sessions, Checked{fresh, state.OwnerVerdict(fresh)})
			}
			continue
		}
		rep.Finalized = append(rep.Finalized, tr)
		toCondense = append(toCondense, s.ID)
	}
	if opts.DryRun {
		return rep, nil
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

	var head string
	pendingLinks, err := st.Marked(state.MarkUnlinked)
	if err != nil {
		rep.Warnings = append(rep.Warnings, err.Error())
	}
	if opts.PostCommit {
		h, _, err := gitdir.Head(repo.GitDir, repo.CommonDir)
		if err != nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("read HEAD: %v", err))
		}
		head = h
	}
	if len(toCondense) == 0 && (head == "" || len(pendingLinks) == 0) {
		return rep, nil // nothing to write: never open the repository
	}

	cp, err := checkpoint.Open(repo.CommonDir)
	if err != nil {
		return rep, fmt.Errorf("open repository: %w", err)
	}
	if len(toCondense) > 0 {
		results, err := condense(st, cp, toCondense)
		rep.Checkpoints = append(rep.Checkpoints, results...)
		if err != nil {
			return rep, err
		}
		for _, r := range results {
			if r.Checkpoint != "" {
				pendingLinks = appendUnique(pendingLinks, r.Session)
			}
		}
	}
	if head != "" && len(pendingLinks) > 0 {
		linked, err := linkToHead(st, cp, repo.WorkTree, head, pendingLinks)
		rep.Linked, rep.Head = linked, head
		if err != nil {
			return rep, fmt.Errorf("link checkpoints to %s: %w", head, err)
		}
	}
	return rep, nil
}

// finalize ends a session under its lock, after deciding again on the state
// loaded there: a turn may have revived it since the scan.
func finalize(st *state.Store, id string, now func() time.Time, staleAfter time.Duration) (Transition, bool, error) {
	var tr Transition
	_, err := st.Mutate(id, func(s *state.Session) error {
		v := state.OwnerVerdict(s)
		ev, ok := state.Decide(s, v, now(), staleAfter)
		if !ok {
			return state.ErrNoChange
		}
		var ended bool
		if tr, ended = endSession(s, ev, now(), v.Reason); !ended {
			return state.ErrNoChange
		}
		return nil
	})
	if err != nil {
		return tr, false, fmt.Errorf("finalize session %s: %w", id, err)
	}
	if tr.ID == "" {
		return tr, false, nil
	}
	st.Logger().Info("transition", "session", id, "agent", tr.Agent, "from", string(tr.From),
		"to", string(state.PhaseEnded), "reason", tr.Reason, "owner", tr.Owner)
	return tr, true, nil
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
// checkpoints branch, marks the new checkpoints as waiting for a commit to
// link to and, once all went well, clears the sessions' to-condense marks.
// After a failure the marks stay and the next sweep tries again: condensing
// is idempotent.
func condense(st *state.Store, cp *checkpoint.Repo, ids []string) ([]checkpoint.Result, error) {
	results, err := cp.Condense(st, ids)
	for _, r := range results {
		if r.Checkpoint == "" {
			continue
		}
		if merr := st.SetMark(state.MarkUnlinked, r.Session); merr != nil && err == nil {
			err = merr
		}
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
