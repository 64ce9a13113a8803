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
	PhaseEnded  Phase = "ended"  // finalized; lives under ended/
)

// Event is what happened to a session, from an agent hook or from the sweep.
type Event string

const (
	EventSessionStart Event = "session-start"
	EventTurnStart    Event = "turn-start"
	EventTurnEnd      Event = "turn-end"
	EventSessionEnd   Event = "session-end"
	EventError        Event = "error" // the agent reported a failed turn (e.g. Claude Code StopFailure)
	EventOwnerExited  Event = "owner-exited"
	EventStale        Event = "stale"
	EventGitHub       Event = "github"
	EventManual       Event = "manual"
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
	Version           int       `json:"version"`
	ID                string    `json:"id"`
	Incarnation       string    `json:"incarnation,omitempty"` // see NewIncarnation
	Agent             string    `json:"agent"`
	Phase             Phase     `json:"phase"`
	Worktree          string    `json:"worktree,omitempty"`
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
	AgentDB         bool            `json:"agent_db,omitempty"`
	Resumable       bool            `json:"resumable"`
	ResumableReason string          `json:"resumable_reason,omitempty"` // why resumable went false
	EndedAt         time.Time       `json:"ended_at,omitzero"`
	EndReason       string          `json:"end_reason,omitempty"`
	EndNote         string          `json:"end_note,omitempty"` // the agent's own reason, or a person's (end --reason)
	Interrupted     bool            `json:"interrupted,omitempty"`
	TurnLogSize     int64           `json:"turn_log_size"`   // turn-log size after our last append
	Condensed       int64           `json:"condensed"`       // turn-log byte offset already condensed
	CondensedTurns  int             `json:"condensed_turns"` // turn-starts already condensed
	Checkpoints     []CheckpointRef `json:"checkpoints,omitempty"`
	LastError       string          `json:"last_error,omitempty"`
	GitHub          *GitHubLink     `json:"github,omitempty"`

	extra map[string]json.RawMessage // unknown fields, preserved across rewrites
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
	for _, u := range []time.Time{s.LastHookAt, s.LastTurnStartedAt, s.LastTurnEndedAt} {
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
}
