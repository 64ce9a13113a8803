package sweep

import (
	"time"

	"github.com/tetherdev/tether/capture"
	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/snapshot"
	"github.com/tetherdev/tether/state"
)

// turnChanges fills in what each condensed turn changed, from the session's
// captures: a turn's start against its end (snapshot.Pick). An interrupted
// turn with no capture after it is compared with the worktree as found now,
// which is captured and recorded (capture.Swept) so that a retry, and
// rewind, see the same. A running turn is left for the checkpoint that
// continues it. Failures are logged: a checkpoint is never held up by them.
func turnChanges(st *state.Store, commonDir string) checkpoint.TurnChanges {
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
			if t.Running || t.Changes != nil {
				continue
			}
			start, end, ok := snapshot.Pick(entries, t.Turn)
			// A killed turn's start is all that will come: no waiting then.
			if !ok && landing(t, time.Now()) && !(t.Interrupted && snapshot.Has(entries, t.Turn, capture.Start)) {
				entries = waitForCaptures(reader, s.ID, t.Turn, entries, log)
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
			t.Changes = ch
		}
	}
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

// waitForCaptures reads the session's captures again until the turn's
// start and end are there, up to captureWait: a sweep right after a turn
// (a session end, a commit) may run before the hook's capture lands.
func waitForCaptures(r *snapshot.Reader, session string, turn int, entries []capture.Entry, log func(string, error, int)) []capture.Entry {
	for deadline := time.Now().Add(captureWait); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		fresh, err := r.List(session)
		if err != nil {
			log("changes: read captures", err, turn)
			return entries
		}
		entries = fresh
		if _, _, ok := snapshot.Pick(entries, turn); ok {
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
