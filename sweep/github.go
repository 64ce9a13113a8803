package sweep

// Reconciliation with GitHub (run --github, status --github).
//
// Principle 7 of DESIGN.md orders the evidence: remote facts decide only
// when local evidence is absent. So, per live session:
//   - owner Alive, or Unknown within the stale-after threshold: GitHub's view
//     is stored as an annotation ("PR #12 merged"); the session keeps running;
//   - owner Unknown past the threshold: a GitHub End decision ends it with
//     end_reason github (instead of stale), the deciding state in
//     github.state; without one the stale policy applies as before;
//   - owner Dead: that is local evidence, so the sweep finalizes it as
//     owner-exited or interrupted as always, and GitHub's view is kept on the
//     ended session as an annotation.
// A GitHub failure changes nothing but the rate-limit retry time, and ended
// sessions are never observed, so GitHub never revives one.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/github"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// GitHubOptions turn on reconciliation with GitHub for one sweep. The
// repository is the origin remote's, on github.com or a GitHub Enterprise
// host.
type GitHubOptions struct {
	// Token finds the token for a host; nil means github.LookupToken
	// (GH_TOKEN, GITHUB_TOKEN, then `gh auth token`). An error (typically
	// wrapping github.ErrNoToken) becomes one warning and no call is made.
	Token func(ctx context.Context, host string) (string, error)
	// BaseURL overrides the REST API URL derived from the remote's host: a
	// GitHub Enterprise server behind an unusual path, or a test server.
	BaseURL string

	// beforeApply runs between a session's observation and taking its lock;
	// tests use it to change the session in that window.
	beforeApply func(id string)
}

// GitHubUpdate is a session whose GitHub view this sweep changed (or, with
// DryRun, would change).
type GitHubUpdate struct {
	ID    string `json:"id"`
	Repo  string `json:"repo"`
	Issue int    `json:"issue,omitempty"`
	PR    int    `json:"pr,omitempty"`
	State string `json:"state,omitempty"` // set when GitHub shows the work finished
	Note  string `json:"note,omitempty"`
	Ended bool   `json:"ended"` // ended by this sweep with end_reason github
}

// ghPlan is what one GitHub decision does to a session.
type ghPlan struct {
	end   bool // end it now with end_reason github
	write bool // store link (always true when end is)
	link  state.GitHubLink
}

// planGitHub decides, purely, what decision d does to session s whose owner
// has verdict v. Only a live session is touched. A failure records nothing
// but a rate limit's retry time. GitHub ends the session only where the
// local policy would end it as stale: owner Unknown past staleAfter.
// (github.Allowed admits a Dead owner too, but a dead owner is local
// evidence and ends the session as owner-exited; see the top of this file.)
// Nothing is written when the view is unchanged; CheckedAt alone is no
// change.
func planGitHub(s *state.Session, v proclive.Verdict, d github.Decision, now time.Time, staleAfter time.Duration) ghPlan {
	if !s.Phase.Live() {
		return ghPlan{}
	}
	link := d.Link
	link.RetryAt = time.Time{} // an answer lifts an earlier limit
	if d.Err != nil {
		if d.RetryAt.IsZero() {
			return ghPlan{}
		}
		link.RetryAt = d.RetryAt
	}
	ev, local := state.Decide(s, v, now, staleAfter)
	end := d.Err == nil && d.End && local && ev == state.EventStale
	return ghPlan{end: end, write: end || !sameView(s.GitHub, link), link: link}
}

// sameView says whether storing b over a would change what the session
// records, ignoring when it was checked. A link that names nothing but the
// repository equals no link: observing a session GitHub knows nothing about
// writes nothing.
func sameView(a *state.GitHubLink, b state.GitHubLink) bool {
	if a == nil {
		return b.Issue == 0 && b.PR == 0 && b.State == "" && b.Note == "" && b.LastError == "" && b.RetryAt.IsZero()
	}
	return a.Repo == b.Repo && a.Host == b.Host && a.Issue == b.Issue && a.PR == b.PR &&
		a.State == b.State && a.Note == b.Note && a.LastError == b.LastError && a.RetryAt.Equal(b.RetryAt)
}

// sameTarget says whether two links name the same issue and pull request,
// so an observation made for one still applies to the other.
func sameTarget(a, b *state.GitHubLink) bool {
	var x, y state.GitHubLink
	if a != nil {
		x = *a
	}
	if b != nil {
		y = *b
	}
	return x.Issue == y.Issue && x.PR == y.PR && strings.EqualFold(x.Repo, y.Repo)
}

// unreadable says whether GitHub's answer was a 404 from a repository this
// token cannot read: that says nothing about the work, so nothing is
// recorded.
func unreadable(o github.Observation) bool {
	return o.Issue != nil && o.Issue.Status == github.IssueNotFound && !o.Issue.RepoReadable
}

// githubBudget bounds the GitHub part of a sweep, however many sessions
// answer slowly: past it, the calls fail and the rest waits for the next
// sweep.
const githubBudget = 30 * time.Second

// ghPass is the GitHub part of one sweep.
type ghPass struct {
	ctx    context.Context
	repo   gitdir.Repo
	st     *state.Store
	opts   Options
	now    func() time.Time
	rep    *Report
	r      *github.Reconciler // nil until the first session needs it
	name   string             // owner/repo
	warned []error
}

// reconcileGitHub observes the live sessions on GitHub before the local
// decisions are taken, stores what changed and ends the sessions GitHub
// settles (see the top of this file). It returns the sessions still live,
// as stored now, and the IDs it ended, to be condensed. One Reconciler
// serves the whole sweep, so a branch, issue or PR is looked up once.
func reconcileGitHub(repo gitdir.Repo, st *state.Store, live []*state.Session, opts Options, now func() time.Time, rep *Report) ([]*state.Session, []string) {
	ctx, cancel := context.WithTimeout(context.Background(), githubBudget)
	defer cancel()
	p := &ghPass{ctx: ctx, repo: repo, st: st, opts: opts, now: now, rep: rep}
	remaining := make([]*state.Session, 0, len(live))
	var ended []string
	for i, s := range live {
		if s.GitHub != nil && s.GitHub.RetryAt.After(now()) {
			remaining = append(remaining, s) // rate limited earlier: no call before then
			continue
		}
		if p.r == nil {
			if err := p.connect(); err != nil {
				rep.Warnings = append(rep.Warnings, "github: not reconciling: "+err.Error())
				return append(remaining, live[i:]...), ended
			}
		}
		fresh, end := p.session(s)
		switch {
		case end:
			ended = append(ended, s.ID)
		case fresh != nil:
			remaining = append(remaining, fresh)
		}
	}
	return remaining, ended
}

// connect finds the repository and the token and makes the sweep's
// Reconciler. The token lives only in the client.
func (p *ghPass) connect() error {
	c, owner, name, err := connectGitHub(p.ctx, p.repo, p.opts.GitHub)
	if err != nil {
		return err
	}
	p.r, p.name = github.NewReconciler(c, owner, name), owner+"/"+name
	return nil
}

// connectGitHub finds the origin's GitHub repository and the token, and
// makes a client for it.
func connectGitHub(ctx context.Context, repo gitdir.Repo, opts *GitHubOptions) (c *github.Client, owner, name string, err error) {
	url, err := originURL(ctx, repo)
	if err != nil {
		return nil, "", "", err
	}
	host, owner, name, ok := github.ParseRemote(url)
	if !ok {
		return nil, "", "", errors.New("the origin remote is not a GitHub repository") // the URL may hold credentials: not shown
	}
	lookup := opts.Token
	if lookup == nil {
		lookup = github.LookupToken
	}
	tok, err := lookup(ctx, host)
	if err != nil {
		return nil, "", "", err
	}
	var copts []github.Option
	if opts.BaseURL != "" {
		copts = append(copts, github.WithBaseURL(opts.BaseURL))
	}
	if c, err = github.NewClient(host, tok, copts...); err != nil {
		return nil, "", "", err
	}
	return c, owner, name, nil
}

// originURL asks git for the origin remote's URL, so that includes and
// url.<base>.insteadOf apply as they do for the user's own git commands.
func originURL(ctx context.Context, repo gitdir.Repo) (string, error) {
	cmd := exec.CommandContext(ctx, "git", "--git-dir="+repo.GitDir, "remote", "get-url", "origin")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("read the origin remote: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// session observes one live session and applies the outcome. It returns
// the session as it is now when it is still live (nil when it is not), and
// whether this sweep ended it.
func (p *ghPass) session(s *state.Session) (*state.Session, bool) {
	o := p.r.Observe(p.ctx, s)
	d := github.Map(o)
	if d.Err != nil {
		p.warn(d)
	}
	if unreadable(o) {
		p.warnOnce(errUnreadable, fmt.Sprintf("github: %s is not readable with this token (issue #%d answered 404); nothing recorded", p.name, o.Issue.Number))
		return s, false
	}
	if p.opts.DryRun {
		v := state.OwnerVerdict(s)
		plan := planGitHub(s, v, d, p.now(), p.opts.StaleAfter)
		p.report(s.ID, plan, d)
		if plan.end {
			p.rep.Finalized = append(p.rep.Finalized, Transition{ID: s.ID, Agent: s.Agent, From: s.Phase, Reason: endReason(state.TablePhase(s), state.EventGitHub), Owner: v.Reason})
			return nil, true
		}
		return s, false
	}
	if hook := p.opts.GitHub.beforeApply; hook != nil {
		hook(s.ID)
	}
	var plan ghPlan
	var tr Transition
	var before state.GitHubLink
	fresh, err := p.st.Mutate(s.ID, func(cur *state.Session) error {
		// An observation made for another target says nothing about this
		// one: the next sweep asks about the new link.
		if !sameTarget(cur.GitHub, s.GitHub) {
			return state.ErrNoChange
		}
		v := state.OwnerVerdict(cur) // afresh: a turn may have revived it since the scan
		plan = planGitHub(cur, v, d, p.now(), p.opts.StaleAfter)
		if !plan.write {
			return state.ErrNoChange
		}
		if cur.GitHub != nil {
			before = *cur.GitHub
		}
		if plan.end {
			tr, _ = endSession(cur, state.EventGitHub, p.now(), v.Reason)
		}
		link := plan.link
		cur.GitHub = &link
		return nil
	})
	if err != nil {
		p.rep.Warnings = append(p.rep.Warnings, fmt.Sprintf("github: record the view of session %s: %v", s.ID, err))
		return s, false
	}
	if plan.write {
		p.log(fresh, before, plan, tr)
		p.report(s.ID, plan, d)
	}
	if plan.end {
		p.rep.Finalized = append(p.rep.Finalized, tr)
		return nil, true
	}
	if !fresh.Phase.Live() {
		return nil, false // ended (or removed) by someone else meanwhile
	}
	return fresh, false
}

// errUnreadable keys the unreadable-repository warning, given once.
var errUnreadable = errors.New("repository not readable")

// warn reports a GitHub failure once: the Reconciler makes no call after
// the first one, and every later observation wraps it.
func (p *ghPass) warn(d github.Decision) {
	msg := "github: " + d.Err.Error() + "; nothing changed"
	if !d.RetryAt.IsZero() {
		msg = fmt.Sprintf("github: %v; no GitHub calls for these sessions before %s", d.Err, d.RetryAt.Local().Format(time.DateTime))
	}
	p.warnOnce(d.Err, msg)
}

func (p *ghPass) warnOnce(err error, msg string) {
	for _, w := range p.warned {
		if errors.Is(err, w) {
			return
		}
	}
	p.warned = append(p.warned, err)
	p.rep.Warnings = append(p.rep.Warnings, msg)
	p.st.Logger().Info("github unavailable", "repo", p.name, state.LogKeyError, err)
}

// report lists a changed view; a stored retry time alone is not one.
func (p *ghPass) report(id string, plan ghPlan, d github.Decision) {
	if !plan.write || d.Err != nil {
		return
	}
	l := plan.link
	p.rep.GitHub = append(p.rep.GitHub, GitHubUpdate{ID: id, Repo: l.Repo, Issue: l.Issue, PR: l.PR, State: d.State, Note: l.Note, Ended: plan.end})
}

// log records an ending or a changed view with the repository, issue, PR,
// and what it was before.
func (p *ghPass) log(s *state.Session, before state.GitHubLink, plan ghPlan, tr Transition) {
	l := plan.link
	attrs := []any{state.LogKeySession, s.ID, "repo", l.Repo, "issue", l.Issue, "pr", l.PR}
	if plan.end {
		p.st.Logger().Info("transition", append(attrs, "agent", tr.Agent, "from", string(tr.From),
			"to", string(state.PhaseEnded), "reason", tr.Reason, "github_state", l.State, "note", l.Note, "owner", tr.Owner)...)
		return
	}
	if !l.RetryAt.IsZero() {
		p.st.Logger().Info("github retry", append(attrs, "retry_at", l.RetryAt)...)
		return
	}
	p.st.Logger().Info("github view", append(attrs, "from", before.Note, "to", l.Note, "from_state", before.State, "to_state", l.State)...)
}

// ErrNoTarget is returned by Link when neither an issue nor a PR is given.
var ErrNoTarget = errors.New("nothing to link: give an issue or a pull request number")

// Link records, under the session's lock, that session id works on issue
// and/or pull request pr (zero keeps that number as it is). A changed number
// drops the view reconciled for the old one. It returns the link now stored
// and whether it changed. Ended sessions can be linked too: the link says
// what the work was for.
func Link(st *state.Store, id string, issue, pr int) (state.GitHubLink, bool, error) {
	if issue < 0 || pr < 0 {
		return state.GitHubLink{}, false, fmt.Errorf("link session %s: issue and PR numbers must be positive", id)
	}
	if issue == 0 && pr == 0 {
		return state.GitHubLink{}, false, fmt.Errorf("link session %s: %w", id, ErrNoTarget)
	}
	var link state.GitHubLink
	changed := false
	_, err := st.MutateTx(id, func(tx *state.Tx) error {
		if !tx.Exists {
			return state.ErrNotFound
		}
		link, changed = relink(tx.Session.GitHub, issue, pr)
		if !changed {
			return state.ErrNoChange
		}
		tx.Session.GitHub = &link
		return nil
	})
	if err != nil {
		return link, false, fmt.Errorf("link session %s: %w", id, err)
	}
	if changed {
		st.Logger().Info("github link", state.LogKeySession, id, "issue", link.Issue, "pr", link.PR)
	}
	return link, changed, nil
}

// relink sets the issue and PR numbers of a link (zero keeps one). When a
// number changes, the state, note, error and check time observed for the
// old target go; a rate-limit retry time stays, it is about the token.
func relink(old *state.GitHubLink, issue, pr int) (state.GitHubLink, bool) {
	var l state.GitHubLink
	if old != nil {
		l = *old
	}
	if (issue == 0 || issue == l.Issue) && (pr == 0 || pr == l.PR) {
		return l, false
	}
	if issue != 0 {
		l.Issue = issue
	}
	if pr != 0 {
		l.PR = pr
	}
	l.State, l.Note, l.LastError, l.CheckedAt = "", "", "", time.Time{}
	return l, true
}
