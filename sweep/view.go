package sweep

import (
	"time"

	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// Row is one session as `status --json` shows it. Field names are a
// contract: scripts depend on them (DESIGN.md, "CLI contract").
type Row struct {
	ID             string    `json:"id"`
	Agent          string    `json:"agent"`
	Phase          string    `json:"phase"`
	Liveness       string    `json:"liveness"`
	LivenessReason string    `json:"liveness_reason"`
	Turns          int       `json:"turns"`
	StartedAt      time.Time `json:"started_at"`
	LastActivityAt time.Time `json:"last_activity_at"`
	EndedAt        time.Time `json:"ended_at,omitzero"`
	Worktree       string    `json:"worktree"`
	Branch         string    `json:"branch"`
	LastPrompt     string    `json:"last_prompt"`
	PendingTurns   int       `json:"pending_turns"`
	EndReason      string    `json:"end_reason"`
	Interrupted    bool      `json:"interrupted"`
	Resumable      bool      `json:"resumable"`
	Checkpoints    []string  `json:"checkpoints"`
	LastError      string    `json:"last_error,omitempty"`
	GitHub         string    `json:"github,omitempty"` // annotation, e.g. "PR #12 merged"
}

// MakeRow renders a session and its owner's verdict.
func MakeRow(s *state.Session, v proclive.Verdict) Row {
	r := Row{
		ID: s.ID, Agent: s.Agent, Phase: string(s.Phase),
		Liveness: v.Liveness.String(), LivenessReason: v.Reason,
		Turns: s.Turns, StartedAt: s.StartedAt, LastActivityAt: s.LastActivity(), EndedAt: s.EndedAt,
		Worktree: s.Worktree, Branch: s.Branch, LastPrompt: s.LastPrompt,
		PendingTurns: s.PendingTurns(), EndReason: s.EndReason, Interrupted: s.Interrupted,
		Resumable: s.Resumable, Checkpoints: []string{}, LastError: s.LastError,
	}
	for _, c := range s.Checkpoints {
		r.Checkpoints = append(r.Checkpoints, c.ID)
	}
	if s.GitHub != nil {
		r.GitHub = s.GitHub.Note
	}
	return r
}
