package sweep

import (
	"time"

	"github.com/tetherdev/tether/capture"
	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/snapshot"
	"github.com/tetherdev/tether/state"
)

// atCommit is the commit a post-commit sweep runs for, in its worktree.
type atCommit struct {
	worktree, head string
}

// turnChanges fills in what each condensed turn changed, from the session's
// captures: a turn's start against its end (snapshot.Pick). An interrupted
// turn with no capture after it is compared with the worktree as found now,
// which is captured and recorded (capture.Swept) so that a retry, and
// rewind, see the same. A turn still running when a commit of its worktree
// condenses it (at) is counted up to that commit: the paths the commit
// took that the turn wrote (committedChanges); the checkpoint continuing it
// then holds only what that commit did not take. A running turn with no
// commit is left for the checkpoint that continues it. Failures are
// logged: a checkpoint is never held up by them.
func turnChanges(st *state.Store, commonDir string, at *atCommit) checkpoint.TurnChanges {
	var reader *snapshot.Reader
	return func(s *state.Session, turns []checkpoint.Turn) {
		log := func(msg string, err error, turn int) {
			st.Logger().Warn(msg, state.LogKeySession, s.ID, "turn", turn, state.LogKeyError, err.Error())
		}
		if reader == nil {
			r, err := snapshot.OpenReader(commonDir)
			if err != nil {
				log("changes: open captures", err, 0)
				return
			}
			reader = r
		}
		entries, err := reader.List(s.ID)
		if err != nil {
			log("changes: read captures", err, 0)
			return
		}
		if len(entries) == 0 {
			return // captures off, or an older tether
		}
		for i := range turns {
			t := &turns[i]
			if t.Changes != nil {
				continue
			}
			if t.Running {
				if at == nil || s.Worktree != at.worktree {
					continue
				}
				if !snapshot.Has(entries, t.Turn, capture.Start) && landing(t, time.Now()) {
					entries = waitForCaptures(reader, s.ID, t.Turn, entries, startLanded, log)
				}
				start, ok := snapshot.First(entries, t.Turn, capture.Start)
				if !ok {
					continue
				}
				if t.Changes, err = committedChanges(reader, start, t.HeadBefore, at.head); err != nil {
					log("changes: compare the turn's start with the commit", err, t.Turn)
				}
				continue
			}
			start, end, ok := snapshot.Pick(entries, t.Turn)
			// A killed turn's start is all that will come: no waiting then.
			if !ok && landing(t, time.Now()) && !(t.Interrupted && snapshot.Has(entries, t.Turn, capture.Start)) {
				entries = waitForCaptures(reader, s.ID, t.Turn, entries, bothLanded, log)
				start, end, ok = snapshot.Pick(entries, t.Turn)
			}
			if !ok && t.Interrupted {
				if e, err := sweptCapture(st, s, t.Turn, entries); err != nil {
					log("changes: capture the interrupted turn's worktree", err, t.Turn)
				} else if e != nil {
					entries = append(entries, *e)
					start, end, ok = snapshot.Pick(entries, t.Turn)
				}
			}
			if !ok {
				continue
			}
			ch, err := reader.Diff(start.Tree, end.Tree)
			if err != nil {
				log("changes: compare captures", err, t.Turn)
				continue
			}
			ch.AfterAt = end.At
			if end.Turn != t.Turn {
				ch.AfterAt = "next-start"
			}
			ch.Unsure(start.Late, end.Late)
			if e := t.Earlier; e != nil && e.UpTo != "" {
				if err := notCommitted(reader, ch, e); err != nil {
					log("changes: compare the turn's end with its commit", err, t.Turn)
					continue
				}
			}
			t.Changes = ch
		}
	}
}

// committedChanges is what a running turn changed up to a commit of its
// worktree: the paths committed since the turn started (from headBefore,
// else the commit's parent) whose content in the commit differs from the
// turn's start capture. A path the worktree already held as committed
// when the turn started is not the turn's.
func committedChanges(r *snapshot.Reader, start capture.Entry, headBefore, head string) (*snapshot.Changes, error) {
	tree, base, err := r.Trees(head)
	if err != nil {
		return nil, err
	}
	if headBefore != "" && headBefore != head {
		if t, _, err := r.Trees(headBefore); err == nil {
			base = t
		}
	}
	committed, err := r.Diff(base, tree)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, p := range committed.Paths() {
		keep[p] = true
	}
	ch, err := r.Diff(start.Tree, tree)
	if err != nil {
		return nil, err
	}
	ch.Keep(keep)
	ch.AfterAt, ch.UpTo = snapshot.AfterCommit, head
	ch.Unsure(start.Late, nil)
	return ch, nil
}

// notCommitted takes out of a continued turn's changes the paths that
// hold at its end what the commit its earlier part was counted up to
// holds: that commit has them already.
func notCommitted(r *snapshot.Reader, ch, earlier *snapshot.Changes) error {
	paths := ch.Paths()
	now, err := r.Files(ch.After, paths)
	if err != nil {
		return err
	}
	then, err := r.Files(earlier.After, paths)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, p := range paths {
		keep[p] = now[p] != then[p]
	}
	ch.Keep(keep)
	ch.Since = earlier.UpTo
	return nil
}

// captureLanding bounds how long after a turn's boundary its capture,
// started in the background by the hook, may still be on its way; and
// captureWait how long a sweep waits for it: it waits holding the
// checkpoints lock, which other sweeps wait for at most a few seconds.
const (
	captureLanding = time.Minute
	captureWait    = 3 * time.Second
)

// landing reports whether a turn's captures may still be on their way: it
// started or ended less than captureLanding before now.
func landing(t *checkpoint.Turn, now time.Time) bool {
	last := t.EndedAt
	if last.IsZero() {
		last = t.StartedAt
	}
	return !last.IsZero() && now.Sub(last) < captureLanding
}

// startLanded and bothLanded say whether a turn's captures are there:
// its start, or its start and end.
func startLanded(entries []capture.Entry, turn int) bool {
	return snapshot.Has(entries, turn, capture.Start)
}

func bothLanded(entries []capture.Entry, turn int) bool {
	_, _, ok := snapshot.Pick(entries, turn)
	return ok
}

// waitForCaptures reads the session's captures again until landed says
// the turn's are there, up to captureWait: a sweep right after a turn
// boundary (a session end, a commit) may run before the hook's capture
// lands.
func waitForCaptures(r *snapshot.Reader, session string, turn int, entries []capture.Entry, landed func([]capture.Entry, int) bool, log func(string, error, int)) []capture.Entry {
	for deadline := time.Now().Add(captureWait); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		fresh, err := r.List(session)
		if err != nil {
			log("changes: read captures", err, turn)
			return entries
		}
		entries = fresh
		if landed(entries, turn) {
			break
		}
	}
	return entries
}

// sweptCapture captures the worktree of an interrupted turn that has a
// start capture, as the sweep finds it; nil when there is nothing to
// compare it with.
func sweptCapture(st *state.Store, s *state.Session, turn int, entries []capture.Entry) (*capture.Entry, error) {
	if !snapshot.Has(entries, turn, capture.Start) {
		return nil, nil // nothing to compare with
	}
	repo, err := gitdir.Find(s.Worktree)
	if err != nil {
		return nil, err
	}
	e, err := capture.New(repo, st).CaptureTurn(s.ID, turn, capture.Swept, time.Time{})
	if err != nil {
		return nil, err
	}
	return &e, nil
}
