package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	gh "github.com/google/go-github/v92/github"

	"github.com/tetherdev/tether/state"
)

// ErrRateLimited marks an Observation error caused by GitHub's rate limits
// (primary, secondary, or a bare 429).
var ErrRateLimited = errors.New("GitHub rate limit")

// defaultBackoff applies when GitHub limits without saying until when; its
// documentation asks for at least a minute.
const defaultBackoff = time.Minute

// Reconciler observes sessions of one repository against GitHub during one
// sweep. It caches every answer (the repository, the PR list per branch,
// each PR and each issue), so sessions sharing a branch or an issue cost
// one call, and after the first failure that is not a 404/410 (GitHub down,
// bad token, rate limit) it makes no further call: every later Observe
// returns that error. Make a new Reconciler for each sweep. It is safe for
// concurrent use.
type Reconciler struct {
	c           *Client
	owner, repo string
	done        []string

	mu        sync.Mutex
	halt      error
	retryAt   time.Time
	readable  *bool
	prs       map[int]prEntry
	branchPRs map[string]prEntry
	issues    map[int]*Issue // nil value: the number is a pull request
}

// prEntry caches one PR lookup; a nil pr means none was found.
type prEntry struct {
	pr   *PullRequest
	body string
}

// ReconcilerOption configures NewReconciler.
type ReconcilerOption func(*Reconciler)

// WithDoneLabels replaces DefaultDoneLabels.
func WithDoneLabels(labels ...string) ReconcilerOption {
	return func(r *Reconciler) { r.done = labels }
}

// NewReconciler returns a Reconciler for owner/repo (from ParseRemote).
func NewReconciler(c *Client, owner, repo string, opts ...ReconcilerOption) *Reconciler {
	r := &Reconciler{
		c: c, owner: owner, repo: repo,
		done:      DefaultDoneLabels,
		prs:       map[int]prEntry{},
		branchPRs: map[string]prEntry{},
		issues:    map[int]*Issue{},
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Observe fetches what GitHub says about a session's work: its pull request
// (GitHubLink.PR, else the PRs whose head is the session's branch,
// preferring an open one, then the most recently updated) and its issue
// (GitHubLink.Issue, else the branch name, else the PR's closing keywords).
// The issue is fetched only when the PR does not decide alone. Map turns
// the result into a Decision. Observe only reads; the caller decides
// whether to ask at all (see Allowed and the package documentation).
func (r *Reconciler) Observe(ctx context.Context, s *state.Session) Observation {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := Observation{At: time.Now()}
	if s.GitHub != nil {
		o.Link = *s.GitHub
	}
	name := r.owner + "/" + r.repo
	if o.Link.Repo != "" && !strings.EqualFold(o.Link.Repo, name) || o.Link.Host != "" && !strings.EqualFold(o.Link.Host, r.c.host) {
		o.Err = fmt.Errorf("session %s is linked to %s/%s, not %s/%s", s.ID, o.Link.Host, o.Link.Repo, r.c.host, name)
		return o
	}
	o.Link.Repo, o.Link.Host = name, r.c.host
	if r.halt != nil {
		o.Err = fmt.Errorf("not asked: an earlier GitHub call failed in this sweep: %w", r.halt)
		o.RetryAt = r.retryAt
		return o
	}
	branch := strings.TrimPrefix(s.Branch, "refs/heads/")
	if branch == "HEAD" { // detached: no branch to look PRs up by
		branch = ""
	}
	pr, body, err := r.pullRequest(ctx, o.Link.PR, branch)
	if err != nil {
		return r.stop(o, err)
	}
	if pr != nil {
		o.PR, o.Link.PR = pr, pr.Number
		if pr.Merged || pr.Open { // decides alone: spare the issue call
			return o
		}
	}
	n := o.Link.Issue
	if n == 0 && branch != "" {
		n, _ = IssueFromBranch(branch)
	}
	if n == 0 && pr != nil {
		if refs := ClosingIssues(body, r.owner, r.repo); len(refs) > 0 {
			n = refs[0]
		}
	}
	if n == 0 || n == o.Link.PR {
		return o
	}
	is, err := r.issue(ctx, n)
	if err != nil {
		return r.stop(o, err)
	}
	if is != nil { // nil: the number names a pull request, not an issue
		o.Issue, o.Link.Issue = is, n
	}
	return o
}

// stop records a failure: no further call in this sweep.
func (r *Reconciler) stop(o Observation, err error) Observation {
	if at, limited := retryAt(err, o.At); limited {
		err = fmt.Errorf("%w until %s: %w", ErrRateLimited, at.UTC().Format(time.RFC3339), err)
		r.retryAt = at
		r.c.log.Warn("github rate limited: no more calls in this sweep", "repo", r.owner+"/"+r.repo, "retry_at", at)
	}
	r.halt = err
	o.Err, o.RetryAt = err, r.retryAt
	return o
}

func (r *Reconciler) pullRequest(ctx context.Context, number int, branch string) (*PullRequest, string, error) {
	if number > 0 {
		if e, ok := r.prs[number]; ok {
			return e.pr, e.body, nil
		}
		p, _, err := r.c.api.PullRequests.Get(ctx, r.owner, r.repo, number)
		if statusOf(err) == http.StatusNotFound || statusOf(err) == http.StatusGone {
			r.prs[number] = prEntry{}
			return nil, "", nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("get PR %s/%s#%d: %w", r.owner, r.repo, number, err)
		}
		e := prEntry{pr: pullRequestView(p), body: p.GetBody()}
		r.prs[number] = e
		return e.pr, e.body, nil
	}
	if branch == "" {
		return nil, "", nil
	}
	if e, ok := r.branchPRs[branch]; ok {
		return e.pr, e.body, nil
	}
	list, _, err := r.c.api.PullRequests.List(ctx, r.owner, r.repo, &gh.PullRequestListOptions{
		State: "all", Head: r.owner + ":" + branch, Sort: "updated", Direction: "desc",
		ListOptions: gh.ListOptions{PerPage: 100},
	})
	if statusOf(err) == http.StatusNotFound || statusOf(err) == http.StatusGone {
		list, err = nil, nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("list PRs of %s/%s for branch %s: %w", r.owner, r.repo, branch, err)
	}
	var e prEntry
	views := make([]PullRequest, len(list))
	for i, p := range list {
		views[i] = *pullRequestView(p)
	}
	if i, ok := pickPR(views); ok {
		e = prEntry{pr: &views[i], body: list[i].GetBody()}
		r.prs[views[i].Number] = e
	}
	r.branchPRs[branch] = e
	return e.pr, e.body, nil
}

func pullRequestView(p *gh.PullRequest) *PullRequest {
	return &PullRequest{
		Number:    p.GetNumber(),
		Open:      p.GetState() == "open",
		Merged:    p.GetMerged() || !p.GetMergedAt().IsZero(), // list responses carry merged_at only
		UpdatedAt: p.GetUpdatedAt().Time,
	}
}

// pickPR chooses among the pull requests of one branch: an open one first,
// then the most recently updated, then the highest number.
func pickPR(prs []PullRequest) (int, bool) {
	best := -1
	for i, p := range prs {
		if best < 0 || better(p, prs[best]) {
			best = i
		}
	}
	return best, best >= 0
}

func better(a, b PullRequest) bool {
	if a.Open != b.Open {
		return a.Open
	}
	if !a.UpdatedAt.Equal(b.UpdatedAt) {
		return a.UpdatedAt.After(b.UpdatedAt)
	}
	return a.Number > b.Number
}

func (r *Reconciler) issue(ctx context.Context, n int) (*Issue, error) {
	if is, ok := r.issues[n]; ok {
		return is, nil
	}
	i, _, err := r.c.api.Issues.Get(ctx, r.owner, r.repo, n)
	var is *Issue
	switch statusOf(err) {
	case http.StatusGone:
		is = &Issue{Number: n, Status: IssueDeleted}
		if e, ok := errors.AsType[*gh.ErrorResponse](err); ok && strings.Contains(strings.ToLower(e.Message), "disabled") {
			is.Status = IssueDisabled
		}
	case http.StatusNotFound:
		readable, rerr := r.repoReadable(ctx)
		if rerr != nil {
			return nil, rerr
		}
		is = &Issue{Number: n, Status: IssueNotFound, RepoReadable: readable}
	default:
		if err != nil {
			return nil, fmt.Errorf("get issue %s/%s#%d: %w", r.owner, r.repo, n, err)
		}
		if i.PullRequestLinks == nil {
			is = r.issueView(i)
		}
	}
	r.issues[n] = is
	return is, nil
}

func (r *Reconciler) issueView(i *gh.Issue) *Issue {
	is := &Issue{Number: i.GetNumber(), Status: IssueOpen, StateReason: i.GetStateReason()}
	if i.GetState() == "closed" {
		is.Status = IssueClosed
	}
	names := make([]string, len(i.Labels))
	for k, l := range i.Labels {
		names[k] = l.GetName()
	}
	is.DoneLabel, _ = MatchDoneLabel(names, r.done)
	return is
}

// repoReadable asks, once per sweep, whether the repository answers at all:
// a 404 issue in a readable repository is gone, in an unreadable one it
// says nothing.
func (r *Reconciler) repoReadable(ctx context.Context) (bool, error) {
	if r.readable != nil {
		return *r.readable, nil
	}
	_, _, err := r.c.api.Repositories.Get(ctx, r.owner, r.repo)
	readable := true
	switch st := statusOf(err); {
	case st == http.StatusNotFound || st == http.StatusGone:
		readable = false
	case err != nil:
		return false, fmt.Errorf("get repository %s/%s: %w", r.owner, r.repo, err)
	}
	r.readable = &readable
	return readable, nil
}

// statusOf is the HTTP status of a plain GitHub error response, 0 for
// anything else (network errors, rate-limit errors, nil).
func statusOf(err error) int {
	if e, ok := errors.AsType[*gh.ErrorResponse](err); ok && e.Response != nil {
		return e.Response.StatusCode
	}
	return 0
}

// retryAt says whether err is a rate limit and until when to hold off.
func retryAt(err error, now time.Time) (time.Time, bool) {
	if e, ok := errors.AsType[*gh.RateLimitError](err); ok {
		if t := e.Rate.Reset.Time; t.After(now) {
			return t, true
		}
		return now.Add(defaultBackoff), true
	}
	if e, ok := errors.AsType[*gh.AbuseRateLimitError](err); ok {
		if d := e.GetRetryAfter(); d > 0 {
			return now.Add(d), true
		}
		return now.Add(defaultBackoff), true
	}
	e, ok := errors.AsType[*gh.ErrorResponse](err)
	if !ok || e.Response == nil {
		return time.Time{}, false
	}
	h := e.Response.Header
	st := e.Response.StatusCode
	if st != http.StatusTooManyRequests && !(st == http.StatusForbidden && h.Get("Retry-After") != "") {
		return time.Time{}, false
	}
	if secs, err := strconv.Atoi(h.Get("Retry-After")); err == nil && secs > 0 {
		return now.Add(time.Duration(secs) * time.Second), true
	}
	if unix, err := strconv.ParseInt(h.Get(gh.HeaderRateReset), 10, 64); err == nil {
		if t := time.Unix(unix, 0); t.After(now) {
			return t, true
		}
	}
	return now.Add(defaultBackoff), true
}
