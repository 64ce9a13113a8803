package github

import (
	"fmt"
	"strings"
	"time"

	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// States a Decision can end a session with; recorded in GitHubLink.State
// next to end_reason "github".
const (
	StatePRMerged = "pr-merged"
	// StatePROpen: the work waits on review; resume is offered for PR
	// maintenance.
	StatePROpen = "pr-open"
	// StatePRClosed: the PR was closed unmerged while its issue is open. The
	// branch and worktree are never cleaned up automatically.
	StatePRClosed         = "pr-closed"
	StateIssueDone        = "issue-done"
	StateIssueCancelled   = "issue-cancelled"
	StateIssueDeleted     = "issue-deleted"
	StateIssueUnavailable = "issue-unavailable"
)

// DefaultDoneLabels mark an issue as done whatever its state; compared
// case-insensitively.
var DefaultDoneLabels = []string{"done", "status: done", "completed", "resolved"}

// PullRequest is the part of a pull request's state that decides.
type PullRequest struct {
	Number    int
	Open      bool
	Merged    bool
	UpdatedAt time.Time
}

// IssueStatus is what GitHub answered for an issue.
type IssueStatus int

const (
	IssueOpen     IssueStatus = iota + 1
	IssueClosed               // closed; StateReason says how
	IssueDeleted              // 410 Gone
	IssueNotFound             // 404; Issue.RepoReadable says whether the repository answered
	IssueDisabled             // 410 because the repository has issues turned off: not a deletion
)

// Issue is the part of an issue's state that decides.
type Issue struct {
	Number       int
	Status       IssueStatus
	StateReason  string // completed, not_planned, duplicate, reopened, or "" (closed before GitHub recorded reasons)
	DoneLabel    string // the done label it carries, if any
	RepoReadable bool   // for IssueNotFound only
}

// Observation is what one reconciliation saw. PR and Issue are nil when
// there is none, or when they were not needed (a merged or open PR decides
// alone, so its issue is not fetched).
type Observation struct {
	// Link is the session's link, completed with the repository, the host
	// and the PR and issue numbers found.
	Link    state.GitHubLink
	PR      *PullRequest
	Issue   *Issue
	Err     error     // a failure other than 404/410: nothing may be decided
	RetryAt time.Time // when Err is a rate limit: make no call before this
	At      time.Time
}

// Decision is what an Observation means for the session.
type Decision struct {
	// End says GitHub shows the work finished. The caller ends the session
	// (end_reason "github", GitHubLink.State = State) only when Allowed;
	// otherwise it records Link as an annotation.
	End   bool
	State string // one of the State constants when End; "" otherwise
	Note  string // for status, e.g. "PR #12 merged"
	// Err is a GitHub failure: no change, record it (Link.LastError holds
	// it). RetryAt, when set, is the rate-limit reset: persist it and make
	// no call before.
	Err     error
	RetryAt time.Time
	// Link is the session's link to store: numbers found, State, Note,
	// CheckedAt, LastError. On Err it keeps the previous State and Note.
	Link state.GitHubLink
}

// Allowed says whether GitHub may end a session whose owner has this
// liveness: only a Dead owner, or an Unknown one past the stale-after
// threshold. An Alive owner's session is never ended, only annotated.
func Allowed(l proclive.Liveness, staleExceeded bool) bool {
	return l == proclive.Dead || l == proclive.Unknown && staleExceeded
}

// Map turns an Observation into a Decision. It is pure; the rows are tried
// in order and the first that matches wins:
//
//	any error other than 404/410            no change, error recorded
//	PR merged                               pr-merged
//	PR open                                 pr-open
//	PR closed unmerged, issue open          pr-closed
//	issue closed as completed, or done label issue-done
//	issue closed as not planned / duplicate issue-cancelled
//	issue 410                               issue-deleted
//	issue 404, repository readable          issue-unavailable
//	anything else                           no change
//
// Reading of the order: a PR closed unmerged whose issue is closed, gone
// or missing falls through to the issue rows (the issue is what the work
// was for); with no issue at all it is no change. An open issue with a done
// label is done unless a closed PR claimed it first. A closed issue without
// a reason (closed before GitHub recorded reasons) counts as completed; a
// reason this code does not know ends nothing. A 410 because issues are
// disabled in the repository is not a deletion: no change.
func Map(o Observation) Decision {
	d := Decision{Link: o.Link}
	d.Link.CheckedAt = o.At
	if o.Err != nil {
		d.Err, d.RetryAt = o.Err, o.RetryAt
		d.Link.LastError = o.Err.Error()
		return d
	}
	d.Link.LastError = ""
	end := func(st, note string) Decision {
		d.End, d.State, d.Note = true, st, note
		d.Link.State, d.Link.Note = st, note
		return d
	}
	stay := func(note string) Decision {
		d.Note = note
		d.Link.State, d.Link.Note = "", note
		return d
	}
	pr, is := o.PR, o.Issue
	if pr != nil {
		switch {
		case pr.Merged:
			return end(StatePRMerged, fmt.Sprintf("PR #%d merged", pr.Number))
		case pr.Open:
			return end(StatePROpen, fmt.Sprintf("PR #%d open", pr.Number))
		case is != nil && is.Status == IssueOpen:
			return end(StatePRClosed, fmt.Sprintf("PR #%d closed unmerged, issue #%d open", pr.Number, is.Number))
		}
	}
	if is == nil {
		if pr != nil {
			return stay(fmt.Sprintf("PR #%d closed unmerged", pr.Number))
		}
		return stay("")
	}
	n := is.Number
	switch {
	case (is.Status == IssueOpen || is.Status == IssueClosed) && is.DoneLabel != "":
		return end(StateIssueDone, fmt.Sprintf("issue #%d labelled %q", n, is.DoneLabel))
	case is.Status == IssueClosed && is.StateReason == "completed":
		return end(StateIssueDone, fmt.Sprintf("issue #%d closed as completed", n))
	case is.Status == IssueClosed && is.StateReason == "":
		return end(StateIssueDone, fmt.Sprintf("issue #%d closed", n))
	case is.Status == IssueClosed && (is.StateReason == "not_planned" || is.StateReason == "duplicate"):
		return end(StateIssueCancelled, fmt.Sprintf("issue #%d closed as %s", n, strings.ReplaceAll(is.StateReason, "_", " ")))
	case is.Status == IssueClosed:
		return stay(fmt.Sprintf("issue #%d closed (%s)", n, is.StateReason))
	case is.Status == IssueDeleted:
		return end(StateIssueDeleted, fmt.Sprintf("issue #%d deleted", n))
	case is.Status == IssueNotFound && is.RepoReadable:
		return end(StateIssueUnavailable, fmt.Sprintf("issue #%d not found", n))
	case is.Status == IssueNotFound:
		return stay(fmt.Sprintf("issue #%d not readable: repository %s not readable with this token", n, o.Link.Repo))
	case is.Status == IssueDisabled:
		return stay(fmt.Sprintf("issue #%d: issues are disabled in %s", n, o.Link.Repo))
	}
	return stay(fmt.Sprintf("issue #%d open", n))
}

// MatchDoneLabel returns the first of labels that is one of done
// (case-insensitively, ignoring surrounding space).
func MatchDoneLabel(labels, done []string) (string, bool) {
	for _, l := range labels {
		for _, d := range done {
			if strings.EqualFold(strings.TrimSpace(l), strings.TrimSpace(d)) {
				return l, true
			}
		}
	}
	return "", false
}
