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
	GitHub         string    `json:"github,omitempty"`   // annotation, e.g. "PR #12 merged"
	EndNote        string    `json:"end_note,omitempty"` // the agent's or a person's words (end --reason)
	Owner          *RowOwner `json:"owner,omitempty"`
	Link           *RowLink  `json:"link,omitempty"`
	// Waiting: what the agent waits for, while Phase is "waiting".
	Waiting *RowWaiting `json:"waiting,omitempty"`
	// Repo is the session's repository (its main work tree, or its git
	// dir), in a listing of every repository (status --all-repos).
	Repo string `json:"repo,omitempty"`
}

// RowWaiting is what a waiting session waits for (state.Wait): since the
// agent's first signal, of which kind (permission, question, input), and
// what it is about, briefly.
type RowWaiting struct {
	Since  time.Time `json:"since"`
	Kind   string    `json:"kind"`
	Detail string    `json:"detail,omitempty"`
}

// RowOwner is the process a session belongs to, as status shows it.
type RowOwner struct {
	PID  int    `json:"pid"`
	Name string `json:"name,omitempty"`
	Host string `json:"host,omitempty"`
}

// RowLink is the GitHub issue and pull request a session is linked to, and
// their state when last reconciled.
type RowLink struct {
	Repo  string `json:"repo,omitempty"` // owner/name
	Issue int    `json:"issue,omitempty"`
	PR    int    `json:"pr,omitempty"`
	State string `json:"state,omitempty"` // e.g. pr-merged
}

// MakeRow renders a session and its owner's verdict.
func MakeRow(s *state.Session, v proclive.Verdict) Row {
	r := Row{
		ID: s.ID, Agent: s.Agent, Phase: string(s.Phase),
		Liveness: v.Liveness.String(), LivenessReason: v.Reason,
		Turns: s.Turns, StartedAt: s.StartedAt, LastActivityAt: s.LastActivity(), EndedAt: s.EndedAt,
		Worktree: s.Worktree, Branch: s.Branch, LastPrompt: s.LastPrompt,
		PendingTurns: s.PendingTurns(), EndReason: s.EndReason, Interrupted: s.Interrupted,
		Resumable: s.Resumable, Checkpoints: []string{}, LastError: s.LastError, EndNote: s.EndNote,
	}
	if o := s.Owner; o != nil {
		r.Owner = &RowOwner{PID: o.PID, Name: o.Name, Host: o.Host}
	}
	if w := s.Waiting; w != nil && s.Phase == state.PhaseWaiting {
		r.Waiting = &RowWaiting{Since: w.Since, Kind: w.Kind, Detail: w.Detail}
	}
	for _, c := range s.Checkpoints {
		r.Checkpoints = append(r.Checkpoints, c.ID)
	}
	if g := s.GitHub; g != nil {
		r.GitHub = g.Note
		if g.Issue > 0 || g.PR > 0 {
			r.Link = &RowLink{Repo: g.Repo, Issue: g.Issue, PR: g.PR, State: g.State}
		}
	}
	return r
}
