package sweep

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/tetherdev/tether/agent"
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
	var sessions []*state.Session // read once, for the sessions sharing a worktree
	listed := false
	return func(s *state.Session, turns []checkpoint.Turn, said func(int) ([]byte, bool)) {
		// Only what the turn's own agent changed is the turn's: the paths
		// its file tools wrote, and, where it ran a shell, the rest the
		// captures saw, shared with another session working there
		// meanwhile (ownChanges). What its tools wrote is read once for
		// all the turns, when the first needs it.
		var writes []agent.ToolWrites
		var told []bool
		own := func(i int, ch *snapshot.Changes) {
			if !listed {
				sessions, _, _ = st.List()
				listed = true
			}
			if writes == nil {
				writes, told = turnWrites(s, turns, said)
			}
			ownChanges(ch, writes[i], told[i], sharing(s, &turns[i], sessions), s.Worktree, s.Cwd)
		}
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
				ch, err := committedChanges(reader, start, at.head)
				if err != nil {
					log("changes: compare the turn's start with the commit", err, t.Turn)
					continue
				}
				own(i, ch)
				t.Changes = ch
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
			own(i, ch)
			t.Changes = ch
		}
	}
}

// committedChanges is what a running turn made of a commit of its
// worktree: the paths the commit changed whose content in it differs from
// the turn's start capture. A path the worktree already held as committed
// when the turn started is not the turn's.
func committedChanges(r *snapshot.Reader, start capture.Entry, head string) (*snapshot.Changes, error) {
	tree, parent, err := r.Trees(head)
	if err != nil {
		return nil, err
	}
	committed, err := r.Diff(parent, tree)
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

// sharing reports whether another session works in the same worktree as
// s and was there while turn t ran: what the captures saw change then may
// be either's. A session that started after the turn ended, or ended
// before it started, was not there.
func sharing(s *state.Session, t *checkpoint.Turn, sessions []*state.Session) bool {
	for _, o := range sessions {
		if o.ID == s.ID || o.Worktree != s.Worktree {
			continue
		}
		startedAfter := !t.EndedAt.IsZero() && !o.StartedAt.IsZero() && !o.StartedAt.Before(t.EndedAt)
		endedBefore := !o.EndedAt.IsZero() && !t.StartedAt.IsZero() && o.EndedAt.Before(t.StartedAt)
		if !startedAfter && !endedBefore {
			return true
		}
	}
	return false
}

// turnWrites reads what each turn's own tools wrote: from the agent's
// transcript, each turn's part of it read once (agent.TurnWrites), or, for
// an agent that keeps its conversation in a database, from the turn's
// messages (said). told[i] is false where they cannot tell. A turn's part
// of the transcript ends where it ended, else where the next turn starts
// (an interrupted turn), else at the transcript's end (a running turn); a
// continued turn whose start the earlier checkpoint did not give has no
// known start.
func turnWrites(s *state.Session, turns []checkpoint.Turn, said func(int) ([]byte, bool)) ([]agent.ToolWrites, []bool) {
	if said != nil {
		writes, told := make([]agent.ToolWrites, len(turns)), make([]bool, len(turns))
		for i, t := range turns {
			if messages, ok := said(t.Turn); ok {
				writes[i], told[i] = agent.ConversationWrites(s.Agent, messages)
			}
		}
		return writes, told
	}
	spans := make([]agent.Span, len(turns))
	for i, t := range turns {
		spans[i] = agent.Span{From: t.TranscriptFrom, To: t.TranscriptTo}
		switch {
		case t.Continued && t.StartedAt.IsZero():
			spans[i].From = -1
		case t.Running:
			spans[i].To = -1
		case t.TranscriptTo == 0 && i+1 < len(turns) && !turns[i+1].Continued:
			spans[i].To = turns[i+1].TranscriptFrom
		case t.TranscriptTo == 0:
			spans[i].To = -1
		}
	}
	return agent.TurnWrites(s.Agent, s.TranscriptRoot, s.TranscriptPath, spans)
}

// ownChanges keeps of a turn's changes what its own agent changed. Where
// the agent's transcript tells (told), a path its file tools wrote is the
// turn's; a path they did not write is the turn's only if it ran a tool
// that may write anything (a shell command), and then, when another
// session shared the worktree, it is marked shared; any other path was
// written by someone else and is left out. Where the transcript cannot
// tell, the captures alone decide, and with another session there every
// path is shared. A relative path the agent named starts at its working
// directory (cwd, else the worktree).
func ownChanges(ch *snapshot.Changes, w agent.ToolWrites, told, shared bool, worktree, cwd string) {
	ch.Shared = nil
	if !told {
		if shared {
			ch.Shared = ch.Paths()
		}
		return
	}
	own := map[string]bool{}
	for _, p := range w.Paths {
		if !filepath.IsAbs(p) && cwd != "" {
			p = filepath.Join(cwd, p)
		}
		if rel, ok := inWorktree(worktree, p); ok {
			own[rel] = true
		}
	}
	keep := map[string]bool{}
	for _, p := range ch.Paths() {
		switch {
		case own[p]:
			keep[p] = true
		case w.Shell:
			keep[p] = true
			if shared {
				ch.Shared = append(ch.Shared, p)
			}
		}
	}
	ch.Keep(keep)
}

// inWorktree turns a path a tool named (absolute, or relative to the
// worktree) into the worktree's slash-separated path; false when it is
// outside.
func inWorktree(worktree, p string) (string, bool) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(worktree, p)
	}
	for _, root := range []string{worktree, realPath(worktree)} {
		if rel, err := filepath.Rel(root, filepath.Clean(p)); err == nil && rel != "." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != ".." {
			return filepath.ToSlash(rel), true
		}
	}
	return "", false
}

// realPath is a path with its symlinks resolved, or as it is.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
