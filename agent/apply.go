package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// Call is one call of an agent's hook as tether-hook saw it: the event,
// when, and the repository's HEAD then.
type Call struct {
	Event    Event     `json:"event"`
	At       time.Time `json:"at"`
	Head     string    `json:"head,omitempty"`
	Branch   string    `json:"branch,omitempty"` // "" when HEAD could not be read
	Worktree string    `json:"worktree,omitempty"`
}

// Surroundings answer what applying a call needs to know of the agent's
// process, environment and files as they were when its hook ran: the hook
// asks them live, a spooled call (Spooled) answers from what its hook
// recorded.
type Surroundings interface {
	// TranscriptRoot is the directory the agent keeps its transcripts in,
	// for its transcript at path: the one place it is read.
	TranscriptRoot(path string) string
	// GuessTranscript is the session's transcript, and its root, for an
	// agent whose early payloads do not name it; "" when unknown.
	GuessTranscript() (path, root string)
	// TranscriptSize is the transcript's size (see TranscriptSize).
	TranscriptSize(root, path string) int64
	// Owner is the agent's process, and OwnerPID the PID the agent says
	// is its own (0 when it says none).
	Owner() (proclive.Identity, error)
	OwnerPID() int
}

// Outcome is what applying a call did.
type Outcome struct {
	From, To    state.Phase
	Act         state.Actions
	Duplicate   bool // the turn start already recorded, delivered again
	Cancelled   bool // the running turn had been cancelled, as the transcript says
	Failed      bool // it had failed, as the transcript says
	Unannounced bool // a turn the agent never announced started, as the transcript says
	// CaptureTurn and CaptureAt name the turn boundary the call is
	// ("start", "end"), to capture the worktree for; CaptureAt "" for none.
	CaptureTurn int
	CaptureAt   string
	// OwnerErr: the owner could not be resolved.
	OwnerErr error
	// NewWait: a wait began (not a signal of one under way).
	NewWait bool
}

// ownerErrPrefix marks a LastError left by a failed owner capture.
const ownerErrPrefix = "owner: "

// sameTurn tells a turn start that is the turn already recorded: the
// agent's key for it is the last turn's, delivered again (two configs, or
// user and project level) while the session goes on. An ended session that
// hears its last turn's key again is no duplicate: that turn outlived the
// owner recorded for it, and the key is evidence of life. Codex's app-server
// daemon runs a turn on after its TUI is killed; `codex resume` joins that
// turn, steering its first prompt into it under the same turn_id.
func sameTurn(from state.Phase, lastKey, key string) bool {
	return key != "" && key == lastKey && from != state.PhaseEnded
}

// Apply applies a hook call to the session in tx, loaded under its lock
// (or, for a reader, as the next writer will see it): the transition
// table decides, and the turn's records carry what it changed. It returns
// state.ErrNoChange when the call changes nothing (a duplicate, an event
// the phase ignores, an update for a session never recorded).
func Apply(tx *state.Tx, c Call, env Surroundings) (Outcome, error) {
	ev, now := c.Event, c.At
	s := tx.Session
	out := Outcome{From: s.Phase}
	if ev.NoCreate && out.From == state.PhaseNone {
		return out, state.ErrNoChange
	}
	if ev.Kind == state.EventTurnStart && sameTurn(out.From, s.LastTurnKey, ev.Key) {
		out.Duplicate = true
		return out, state.ErrNoChange
	}
	if ev.Unannounced {
		// A turn runs: the one recorded, or one the agent never
		// announced, whose prompt its transcript holds.
		if out.From != state.PhaseIdle {
			return out, state.ErrNoChange
		}
		size := env.TranscriptSize(s.TranscriptRoot, s.TranscriptPath)
		switch started, err := StartTurnFromTranscript(tx, now, c.Head, size); {
		case err != nil:
			return out, err
		case !started:
			return out, state.ErrNoChange
		}
		out.Unannounced, out.To = true, s.Phase
		out.CaptureTurn, out.CaptureAt = s.Turns, "start"
		s.LastHookAt = now
		return out, nil
	}
	if out.From == state.PhaseIdle && (ev.Kind == state.EventTurnEnd || ev.Kind == state.EventError || ev.Kind == state.EventSessionEnd) {
		// The turn this ends may be one the agent never announced.
		size := env.TranscriptSize(s.TranscriptRoot, s.TranscriptPath)
		started, err := StartTurnFromTranscript(tx, now, c.Head, size)
		if err != nil {
			return out, err
		}
		out.Unannounced = started
	}
	if ev.Kind == state.EventTurnStart || ev.Kind == state.EventSessionEnd {
		// The agent fired nothing when the user cancelled the running
		// turn, but wrote it into its transcript: that turn ended there,
		// it was not interrupted by what comes now. Nor, at a session
		// end, may its hook have recorded a turn a model error ended: the
		// agent exits, killing it, as this runs.
		size := env.TranscriptSize(s.TranscriptRoot, s.TranscriptPath)
		end, err := EndTurnFromTranscript(tx, now, c.Head, ev.Kind == state.EventSessionEnd, size)
		if err != nil {
			return out, err
		}
		out.Cancelled, out.Failed = end.Cancelled, end.Failure != ""
	}
	to, act := state.Transition(state.TablePhase(s), ev.Kind)
	out.To, out.Act = to, act
	if act.Ignore {
		return out, state.ErrNoChange
	}
	if act.BeginWait {
		w := ev.Wait
		if w.Since.IsZero() {
			w.Since = now
		}
		if w.Kind == state.WaitPermission && w.Detail == "" && w.Key == "" {
			// The signal names no tool (Droid's): the transcript does.
			size := env.TranscriptSize(s.TranscriptRoot, s.TranscriptPath)
			w.Detail, w.Key = DialogCall(s.Agent, s.TranscriptRoot, s.TranscriptPath, firstNonEmpty(ev.Cwd, s.Cwd),
				s.TurnTranscriptFrom, size)
		}
		if w.Kind == state.WaitPermission && ReviewerAnswers(s.Agent, s.TranscriptRoot, s.TranscriptPath) {
			return out, state.ErrNoChange // the agent's own reviewer answers it, not the user
		}
		before := s.Waiting
		if !s.BeginWait(w) {
			return out, state.ErrNoChange // the same wait, signalled again
		}
		out.NewWait = before == nil || !before.Since.Equal(s.Waiting.Since)
	}
	if act.EndWait && !s.EndWait(ev.Wait.Key) {
		return out, state.ErrNoChange // another request's end
	}
	if s.StartedAt.IsZero() {
		s.StartedAt = now
	}
	s.Agent = ev.Agent
	if info, ok := Lookup(ev.Agent); ok && info.Database {
		s.AgentDB = true // resumable, and readable, through the agent
	}
	s.Worktree = c.Worktree
	if ev.Cwd != "" {
		s.Cwd = ev.Cwd
	}
	if c.Branch != "" {
		s.Branch = c.Branch
	}
	switch {
	case ev.TranscriptPath != "":
		if ev.TranscriptPath != s.TranscriptPath {
			s.TranscriptRoot = env.TranscriptRoot(ev.TranscriptPath)
		}
		s.TranscriptPath = ev.TranscriptPath
	case s.TranscriptPath == "":
		// Copilot CLI names it only at a turn's end, but a session
		// killed in its first turn has one too.
		if p, root := env.GuessTranscript(); p != "" {
			s.TranscriptPath, s.TranscriptRoot = p, root
		}
	}
	if !act.BeginWait && !act.EndWait {
		// A wait's signals leave the state file as it is (its time is
		// the wait's own): see state's waitfile.go.
		s.LastHookAt = now
	}

	if act.Revive {
		// A new life: nothing of the old ending, nor its last error.
		s.EndedAt, s.EndReason, s.EndNote, s.Interrupted, s.EndedBy, s.LastError = time.Time{}, "", "", false, "", ""
	}
	// A session first seen mid-way (tether installed during it) has no
	// owner yet: any event from a living agent is a chance to find it.
	if act.CaptureOwner || (s.Owner == nil && to != state.PhaseEnded) {
		prev := s.Owner
		s.Owner = nil // never leave an old owner behind a failed capture...
		owner, err := env.Owner()
		if err != nil {
			// ...unless the agent that ran this hook says it is that very
			// owner, and it is gone: killed while its hook ran. Dropping it
			// would leave the session owner-less forever.
			if prev != nil && env.OwnerPID() == prev.PID && proclive.Check(*prev).Liveness == proclive.Dead {
				s.Owner = prev
			}
			s.LastError = ownerErrPrefix + err.Error()
			out.OwnerErr = err
		} else {
			s.Owner = &owner
			if strings.HasPrefix(s.LastError, ownerErrPrefix) {
				s.LastError = "" // the failure this capture makes good
			}
		}
	}
	switch {
	case ev.SessionGone:
		s.Resumable, s.ResumableReason = false, "agent reported the session is gone"
	case ev.Kind == state.EventSessionStart:
		s.InUse() // a turn start does the same through its record
	}
	if ev.Kind == state.EventError && !act.AppendTurnEnd {
		s.LastError = ev.Reason // else the turn's end record carries it (below)
	}
	// The records carry the turn's own fields into the session (turns,
	// times, prompt, resumable): see state.Tx.AppendTurn.
	if act.AppendTurnStart {
		if err := tx.AppendTurn(state.TurnRecord{
			T: state.RecTurnStart, Turn: s.Turns + 1, At: now, Prompt: ev.Prompt,
			Head: c.Head, TranscriptSize: env.TranscriptSize(s.TranscriptRoot, s.TranscriptPath), Owner: s.Owner, Key: ev.Key,
		}); err != nil {
			return out, err
		}
		out.CaptureTurn, out.CaptureAt = s.Turns, "start"
	}
	if act.AppendTurnEnd {
		size := env.TranscriptSize(s.TranscriptRoot, s.TranscriptPath)
		rec := state.TurnRecord{T: state.RecTurnEnd, Turn: s.Turns, At: now, Head: c.Head, TranscriptSize: size}
		switch ev.Kind {
		case state.EventError:
			rec.Error = ev.Reason
		case state.EventTurnEnd:
			// An agent whose turn end does not say whether it failed.
			rec.Error = TurnFailure(s.Agent, s.TranscriptRoot, s.TranscriptPath, s.TurnTranscriptFrom, size)
		}
		if err := tx.AppendTurn(rec); err != nil {
			return out, err
		}
		out.CaptureTurn, out.CaptureAt = s.Turns, "end"
	}
	if act.Finalize {
		s.EndedAt, s.EndReason, s.Interrupted, s.EndedBy = now, act.EndReason, act.Interrupted, ev.Kind
		if ev.Reason != "" {
			s.EndNote = ev.Agent + ": " + ev.Reason // e.g. "claude-code: logout"
		}
	}
	s.SetPhase(to)
	return out, nil
}

// Spooled is a hook call its hook could not apply in time, as it spooled
// it (state.Store.Spool): the call, and the answers of its surroundings,
// asked when it ran (Spool). Applied later (ApplySpooled), by whoever
// writes or reads the session next, it changes the session as it would
// have then.
type Spooled struct {
	Call      Call               `json:"call"`
	Roots     map[string]string  `json:"roots,omitempty"` // transcript path: the directory it is read in
	Guess     string             `json:"guess,omitempty"`
	GuessRoot string             `json:"guess_root,omitempty"`
	Sizes     map[string]int64   `json:"sizes,omitempty"` // root NUL path: size
	Process   *proclive.Identity `json:"owner,omitempty"` // the owner, resolved
	OwnerErr  string             `json:"owner_error,omitempty"`
	PID       int                `json:"owner_pid,omitempty"`
}

// Spool asks live surroundings, once, all that applying c may ask of
// them, given the session as a reader sees it (cur, nil for none): the
// answers go with the call into the spool.
func Spool(c Call, live Surroundings, cur *state.Session) *Spooled {
	sp := &Spooled{Call: c, Roots: map[string]string{}, Sizes: map[string]int64{}, PID: live.OwnerPID()}
	size := func(root, path string) {
		if path != "" {
			sp.Sizes[root+"\x00"+path] = live.TranscriptSize(root, path)
		}
	}
	if p := c.Event.TranscriptPath; p != "" {
		sp.Roots[p] = live.TranscriptRoot(p)
		size(sp.Roots[p], p)
	}
	sp.Guess, sp.GuessRoot = live.GuessTranscript()
	size(sp.GuessRoot, sp.Guess)
	if cur != nil {
		size(cur.TranscriptRoot, cur.TranscriptPath)
	}
	if owner, err := live.Owner(); err != nil {
		sp.OwnerErr = err.Error()
	} else {
		sp.Process = &owner
	}
	return sp
}

// ApplySpooled applies a spooled call (state.ApplyFunc): what its hook
// would have done, as its hook saw things.
func ApplySpooled(tx *state.Tx, event []byte) error {
	var sp Spooled
	if err := json.Unmarshal(event, &sp); err != nil {
		return fmt.Errorf("spooled call: %w", err)
	}
	if sp.Call.Event.SessionID != tx.Session.ID {
		return fmt.Errorf("spooled call of session %q, not %q", sp.Call.Event.SessionID, tx.Session.ID)
	}
	_, err := Apply(tx, sp.Call, &sp)
	if errors.Is(err, state.ErrNoChange) {
		return nil
	}
	return err
}

func (sp *Spooled) TranscriptRoot(path string) string { return sp.Roots[path] }

func (sp *Spooled) GuessTranscript() (string, string) { return sp.Guess, sp.GuessRoot }

// TranscriptSize answers as the hook did; for a transcript it did not
// measure (the session took another since), the size now.
func (sp *Spooled) TranscriptSize(root, path string) int64 {
	if n, ok := sp.Sizes[root+"\x00"+path]; ok {
		return n
	}
	return TranscriptSize(root, path)
}

func (sp *Spooled) Owner() (proclive.Identity, error) {
	if sp.Process != nil {
		return *sp.Process, nil
	}
	return proclive.Identity{}, errors.New(sp.OwnerErr)
}

func (sp *Spooled) OwnerPID() int { return sp.PID }
