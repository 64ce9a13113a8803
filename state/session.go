package state

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tetherdev/tether/proclive"
)

// SchemaVersion is the session file version this build reads and writes.
// A file with a higher version is read but never written back.
const SchemaVersion = 1

// Phase is where a session is in its life.
type Phase string

const (
	PhaseNone   Phase = ""       // no state recorded yet
	PhaseIdle   Phase = "idle"   // between turns
	PhaseActive Phase = "active" // a turn is running
	// PhaseWaiting: the agent waits for its user, as it said itself
	// (Session.Waiting says what for): inside a running turn (a permission
	// dialog, a question), or idle at its prompt.
	PhaseWaiting Phase = "waiting"
	PhaseEnded   Phase = "ended" // finalized; lives under ended/

	// PhaseAtPrompt is the row of the transition table for a session that
	// waits at its prompt (Waiting.Kind WaitInput): no turn runs, so it
	// ends as an idle session does. It is never stored: such a session's
	// Phase is PhaseWaiting (see TablePhase).
	PhaseAtPrompt Phase = "waiting-at-prompt"
)

// Live reports whether a session in this phase has not ended.
func (p Phase) Live() bool {
	return p == PhaseIdle || p == PhaseActive || p == PhaseWaiting
}

// Event is what happened to a session, from an agent hook or from the sweep.
type Event string

const (
	EventSessionStart Event = "session-start"
	EventTurnStart    Event = "turn-start"
	EventTurnEnd      Event = "turn-end"
	EventSessionEnd   Event = "session-end"
	EventError        Event = "error" // the agent reported a failed turn (e.g. Claude Code StopFailure)
	// EventWait: the agent shows its user a dialog in a running turn (a
	// permission to grant, a question to answer) and waits for the answer.
	EventWait Event = "wait"
	// EventWaitInput: the agent says it is idle at its prompt, waiting for
	// its user's input.
	EventWaitInput Event = "wait-input"
	// EventWaitOver: a signal that a wait is over (the tool ran, the answer
	// came).
	EventWaitOver    Event = "wait-over"
	EventOwnerExited Event = "owner-exited"
	EventStale       Event = "stale"
	EventGitHub      Event = "github"
	EventManual      Event = "manual"
)

// End reasons recorded in Session.EndReason.
const (
	EndSessionEnd  = "session-end"
	EndOwnerExited = "owner-exited"
	EndInterrupted = "interrupted"
	EndStale       = "stale"
	EndGitHub      = "github"
	EndManual      = "manual"
)

// Session is the state of one agent session, stored as JSON in
// sessions/<id>.json while it lives and ended/<id>.json once finalized.
// Fields this build does not know are kept in extra and written back
// unchanged, so an older tether never drops a newer one's data.
type Session struct {
	Version     int    `json:"version"`
	ID          string `json:"id"`
	Incarnation string `json:"incarnation,omitempty"` // see NewIncarnation
	Agent       string `json:"agent"`
	Phase       Phase  `json:"phase"`
	// Waiting is what the agent waits for, while Phase is PhaseWaiting.
	Waiting  *Wait  `json:"waiting,omitempty"`
	Worktree string `json:"worktree,omitempty"`
	// Cwd is the agent's working directory, as its hooks last said:
	// where the relative paths its tools name start.
	Cwd               string    `json:"cwd,omitempty"`
	Branch            string    `json:"branch,omitempty"`
	StartedAt         time.Time `json:"started_at"`
	UpdatedAt         time.Time `json:"updated_at"`
	LastTurnStartedAt time.Time `json:"last_turn_started_at,omitzero"`
	LastTurnEndedAt   time.Time `json:"last_turn_ended_at,omitzero"`
	LastHookAt        time.Time `json:"last_hook_at,omitzero"` // last event from the agent's own hooks
	Turns             int       `json:"turns"`                 // turn-starts seen
	LastPrompt        string    `json:"last_prompt,omitempty"`
	// LastTurnKey is the agent's name for the event that started the last
	// turn (agent.Event.Key): the same event delivered again is recognised.
	LastTurnKey string `json:"last_turn_key,omitempty"`
	// TurnTranscriptFrom is the transcript's size when the last turn
	// started: what the agent wrote since is that turn's.
	TurnTranscriptFrom int64              `json:"turn_transcript_from,omitempty"`
	Owner              *proclive.Identity `json:"owner,omitempty"`
	TranscriptPath     string             `json:"transcript_path,omitempty"`
	TranscriptRoot     string             `json:"transcript_root,omitempty"` // where the agent keeps transcripts: read only inside it
	// AgentDB: the agent keeps the conversation in its own database, not a
	// transcript file (OpenCode). The session is resumable while the agent
	// has it, and its conversation is read by asking the agent.
	AgentDB         bool      `json:"agent_db,omitempty"`
	Resumable       bool      `json:"resumable"`
	ResumableReason string    `json:"resumable_reason,omitempty"` // why resumable went false
	EndedAt         time.Time `json:"ended_at,omitzero"`
	EndReason       string    `json:"end_reason,omitempty"`
	EndNote         string    `json:"end_note,omitempty"` // the agent's own reason, or a person's (end --reason)
	Interrupted     bool      `json:"interrupted,omitempty"`
	// EndedBy is the event that ended the session (session-end: its agent
	// said so; owner-exited, stale, github, manual: the sweep or a person).
	EndedBy        Event           `json:"ended_by,omitempty"`
	TurnLogSize    int64           `json:"turn_log_size"`   // turn-log size after our last append
	Condensed      int64           `json:"condensed"`       // turn-log byte offset already condensed
	CondensedTurns int             `json:"condensed_turns"` // turn-starts already condensed
	Checkpoints    []CheckpointRef `json:"checkpoints,omitempty"`
	LastError      string          `json:"last_error,omitempty"`
	GitHub         *GitHubLink     `json:"github,omitempty"`
	// SpoolApplied names the spooled events (Store.Spool) applied to the
	// session whose files may not be deleted yet: an event is applied once.
	SpoolApplied []string `json:"spool_applied,omitempty"`

	extra map[string]json.RawMessage // unknown fields, preserved across rewrites
}

// What a waiting agent waits for (Wait.Kind).
const (
	WaitPermission = "permission" // a tool call to approve
	WaitQuestion   = "question"   // a question the agent (or a tool of its) asked
	WaitInput      = "input"      // idle at its prompt, where the agent says so
)

// Wait is what a session waits for, from the agent's own signal.
type Wait struct {
	Since  time.Time `json:"since"`            // the first signal of this wait
	Kind   string    `json:"kind"`             // WaitPermission, WaitQuestion or WaitInput
	Detail string    `json:"detail,omitempty"` // the tool and its argument, or the question, briefly
	// Key names what the wait is about as the agent names it (a tool,
	// OpenCode's request ID): a signal that a wait on something else is
	// over does not end this one.
	Key string `json:"key,omitempty"`
}

// TablePhase is the row of the transition table for s: its phase, or
// PhaseAtPrompt for a session waiting at its prompt.
func TablePhase(s *Session) Phase {
	if s.Phase == PhaseWaiting && s.Waiting != nil && s.Waiting.Kind == WaitInput {
		return PhaseAtPrompt
	}
	return s.Phase
}

// TurnRunning reports whether a turn is running: the session is active, or
// waits for its user inside a turn.
func (s *Session) TurnRunning() bool {
	p := TablePhase(s)
	return p == PhaseActive || p == PhaseWaiting
}

// SetPhase moves the session to phase p; leaving PhaseWaiting ends its wait.
func (s *Session) SetPhase(p Phase) {
	s.Phase = p
	if p != PhaseWaiting {
		s.Waiting = nil
	}
}

// BeginWait records that the session waits for w, and reports whether it
// changed anything. A signal of a wait already recorded keeps the first
// signal's time, and fills in what the first lacked: one that says no
// more than that the agent waits (no detail, no key: Claude Code's
// reminder of its open dialog, whatever the dialog asks), or one of the
// same kind whose detail and key, where both have one, agree. A signal from before the running turn started is a late one of
// an earlier turn (OpenCode's plugin runs its hooks detached, so they may
// run out of order): it changes nothing.
func (s *Session) BeginWait(w Wait) bool {
	if w.Since.Before(s.LastTurnStartedAt) {
		return false
	}
	old := s.Waiting
	if old != nil && w.Detail == "" && w.Key == "" {
		return false // says no more than that the agent waits: for what it waits already
	}
	if old != nil && old.Kind == w.Kind && (w.Detail == "" || old.Detail == "" || w.Detail == old.Detail) &&
		(w.Key == "" || old.Key == "" || w.Key == old.Key) {
		merged := *old
		merged.Detail = firstOf(old.Detail, w.Detail)
		merged.Key = firstOf(old.Key, w.Key)
		if merged == *old {
			return false
		}
		s.Waiting = &merged
		return true
	}
	s.Waiting = &w
	return true
}

// EndWait ends the session's wait on a signal that the wait on key is over
// ("" when the signal does not say), and reports whether it did: a signal
// about something else than what the session waits for ends nothing.
func (s *Session) EndWait(key string) bool {
	if s.Waiting == nil || key != "" && s.Waiting.Key != "" && key != s.Waiting.Key {
		return false
	}
	s.Waiting = nil
	return true
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// CheckpointRef records a checkpoint written for this session and the
// commits it has been linked to through notes.
type CheckpointRef struct {
	ID     string   `json:"id"`
	Linked []string `json:"linked,omitempty"`
}

// GitHubLink ties a session to an issue and/or pull request, and keeps the
// last state reconciled from GitHub.
type GitHubLink struct {
	Repo      string    `json:"repo,omitempty"` // owner/name
	Host      string    `json:"host,omitempty"` // github.com or a GHE host
	Issue     int       `json:"issue,omitempty"`
	PR        int       `json:"pr,omitempty"`
	State     string    `json:"state,omitempty"` // e.g. pr-merged, issue-done
	Note      string    `json:"note,omitempty"`  // annotation shown in status, e.g. "PR #12 merged"
	CheckedAt time.Time `json:"checked_at,omitzero"`
	LastError string    `json:"last_error,omitempty"`
	RetryAt   time.Time `json:"retry_at,omitzero"` // no GitHub calls for this session before then (rate limits)
}

// newIncarnation names one record of a session. A state file gets one
// when it is created (or, written by an older tether, at its next write)
// and keeps it as long as it exists. An agent can bring a session ID back
// after `clean` removed its record, after a quarantine, or in another
// clone; the incarnation tells those records apart, so nothing named after
// a record (its checkpoints) is ever named twice. It needs to be unique,
// not secret: math/rand/v2's runtime-seeded generator costs the hook
// nothing at start-up, unlike crypto/rand.
func newIncarnation() string {
	return fmt.Sprintf("%016x%016x", rand.Uint64(), rand.Uint64())
}

// InUse records that the agent is using the session (it started it, or a
// turn): resumable again if there is a transcript to resume from, or the
// agent keeps the session in its database.
func (s *Session) InUse() {
	s.Resumable, s.ResumableReason = s.TranscriptPath != "" || s.AgentDB, ""
}

// PendingTurns is the number of turns started but not yet condensed.
func (s *Session) PendingTurns() int { return s.Turns - s.CondensedTurns }

// HasPending says whether the turn log holds records not yet condensed
// (a turn end can be pending after its turn's start was condensed).
func (s *Session) HasPending() bool { return s.TurnLogSize > s.Condensed }

// LastActivity is the latest moment the agent showed a sign of life. Writes
// by the sweep (annotations, condensing) are not activity.
func (s *Session) LastActivity() time.Time {
	t := s.StartedAt
	var since time.Time
	if s.Waiting != nil {
		since = s.Waiting.Since
	}
	for _, u := range []time.Time{s.LastHookAt, s.LastTurnStartedAt, s.LastTurnEndedAt, since} {
		if u.After(t) {
			t = u
		}
	}
	return t
}

// Turn log record kinds.
const (
	RecTurnStart = "turn-start"
	RecTurnEnd   = "turn-end"
)

// TurnRecord is one line of <id>.turns.jsonl.
type TurnRecord struct {
	T              string    `json:"t"` // RecTurnStart or RecTurnEnd
	Turn           int       `json:"turn"`
	At             time.Time `json:"at"`
	Prompt         string    `json:"prompt,omitempty"`
	Head           string    `json:"head,omitempty"`
	TranscriptSize int64     `json:"transcript_size"`
	// Owner is the agent process captured at a turn start: the record
	// alone then says all a turn changed in the session (see applyTurn).
	Owner *proclive.Identity `json:"owner,omitempty"`
	// Key is the agent's name for the event that started the turn (see
	// Session.LastTurnKey).
	Key string `json:"key,omitempty"`
	// Error is what a turn that ended in an error reported (the session's
	// LastError): in the record, it survives an agent that kills its hook
	// once the record is appended, before the state file is written.
	Error string `json:"error,omitempty"`
	// Spool names the spooled event the record came from, when one did: a
	// writer killed after appending it and before its state counts the
	// event applied all the same.
	Spool string `json:"spool,omitempty"`
}
