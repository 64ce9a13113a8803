package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

func session(id, branch string, link *state.GitHubLink) *state.Session {
	return &state.Session{
		Version: state.SchemaVersion, ID: id, Agent: "claude-code", Phase: state.PhaseIdle,
		Branch: branch, StartedAt: t0, UpdatedAt: t0, GitHub: link,
	}
}

const (
	listOf   = "/repos/acme/widgets/pulls?head=acme:"
	issueN   = "/repos/acme/widgets/issues/"
	pullN    = "/repos/acme/widgets/pulls/"
	repoPath = "/repos/acme/widgets"
)

// TestObserveRows runs every mapping row end to end through the fake
// GitHub, and checks exactly which calls each one needs.
func TestObserveRows(t *testing.T) {
	cases := []struct {
		name      string
		setup     func(f *fakeGitHub)
		s         *state.Session
		wantEnd   bool
		wantState string
		wantNote  string
		wantErr   bool
		wantCalls []string
		wantLink  state.GitHubLink // PR and Issue numbers only
	}{
		{
			name:      "GitHub down: no change, error recorded",
			setup:     func(f *fakeGitHub) { f.fail = serverError },
			s:         session("s1", "feature/login", nil),
			wantErr:   true,
			wantCalls: []string{listOf + "feature/login"},
		},
		{
			name: "PR merged",
			setup: func(f *fakeGitHub) {
				f.pulls = []fakePR{{Number: 12, Branch: "feature/login", State: "closed", Merged: true, Updated: t0}}
			},
			s:       session("s1", "feature/login", nil),
			wantEnd: true, wantState: StatePRMerged, wantNote: "PR #12 merged",
			wantCalls: []string{listOf + "feature/login"},
			wantLink:  state.GitHubLink{PR: 12},
		},
		{
			name: "PR open",
			setup: func(f *fakeGitHub) {
				f.pulls = []fakePR{{Number: 13, Branch: "feature/login", State: "open", Updated: t0}}
			},
			s:       session("s1", "feature/login", nil),
			wantEnd: true, wantState: StatePROpen, wantNote: "PR #13 open",
			wantCalls: []string{listOf + "feature/login"},
			wantLink:  state.GitHubLink{PR: 13},
		},
		{
			name: "PR closed unmerged, issue open",
			setup: func(f *fakeGitHub) {
				f.pulls = []fakePR{{Number: 14, Branch: "issue-7-login", State: "closed", Updated: t0}}
				f.issues[7] = fakeIssue{State: "open"}
			},
			s:       session("s1", "issue-7-login", nil),
			wantEnd: true, wantState: StatePRClosed, wantNote: "PR #14 closed unmerged, issue #7 open",
			wantCalls: []string{listOf + "issue-7-login", issueN + "7"},
			wantLink:  state.GitHubLink{PR: 14, Issue: 7},
		},
		{
			name:    "issue closed as completed, no PR",
			setup:   func(f *fakeGitHub) { f.issues[7] = fakeIssue{State: "closed", Reason: "completed"} },
			s:       session("s1", "7-login", nil),
			wantEnd: true, wantState: StateIssueDone, wantNote: "issue #7 closed as completed",
			wantCalls: []string{listOf + "7-login", issueN + "7"},
			wantLink:  state.GitHubLink{Issue: 7},
		},
		{
			name:    "issue open with a done label",
			setup:   func(f *fakeGitHub) { f.issues[7] = fakeIssue{State: "open", Labels: []string{"bug", "Status: Done"}} },
			s:       session("s1", "gh-7", nil),
			wantEnd: true, wantState: StateIssueDone, wantNote: `issue #7 labelled "Status: Done"`,
			wantCalls: []string{listOf + "gh-7", issueN + "7"},
			wantLink:  state.GitHubLink{Issue: 7},
		},
		{
			name: "PR closed unmerged, issue closed: falls through to the issue",
			setup: func(f *fakeGitHub) {
				f.pulls = []fakePR{{Number: 14, Branch: "issue-7", State: "closed", Updated: t0}}
				f.issues[7] = fakeIssue{State: "closed", Reason: "completed"}
			},
			s:       session("s1", "issue-7", nil),
			wantEnd: true, wantState: StateIssueDone, wantNote: "issue #7 closed as completed",
			wantCalls: []string{listOf + "issue-7", issueN + "7"},
			wantLink:  state.GitHubLink{PR: 14, Issue: 7},
		},
		{
			name: "issue from the closed PR's closing keyword, closed as not planned",
			setup: func(f *fakeGitHub) {
				f.pulls = []fakePR{{Number: 15, Branch: "feature/login", State: "closed", Body: "Login flow.\n\nFixes acme/other#3\nCloses #9", Updated: t0}}
				f.issues[9] = fakeIssue{State: "closed", Reason: "not_planned"}
			},
			s:       session("s1", "feature/login", nil),
			wantEnd: true, wantState: StateIssueCancelled, wantNote: "issue #9 closed as not planned",
			wantCalls: []string{listOf + "feature/login", issueN + "9"},
			wantLink:  state.GitHubLink{PR: 15, Issue: 9},
		},
		{
			name:    "issue closed as not planned",
			setup:   func(f *fakeGitHub) { f.issues[8] = fakeIssue{State: "closed", Reason: "not_planned"} },
			s:       session("s1", "fix/8", nil),
			wantEnd: true, wantState: StateIssueCancelled, wantNote: "issue #8 closed as not planned",
			wantCalls: []string{listOf + "fix/8", issueN + "8"},
			wantLink:  state.GitHubLink{Issue: 8},
		},
		{
			name:    "issue 410",
			setup:   func(f *fakeGitHub) { f.issues[8] = fakeIssue{Gone: "This issue was deleted"} },
			s:       session("s1", "issue-8", nil),
			wantEnd: true, wantState: StateIssueDeleted, wantNote: "issue #8 deleted",
			wantCalls: []string{listOf + "issue-8", issueN + "8"},
			wantLink:  state.GitHubLink{Issue: 8},
		},
		{
			name:      "issue 410 because issues are disabled: not a deletion",
			setup:     func(f *fakeGitHub) { f.issues[8] = fakeIssue{Gone: "Issues are disabled for this repo"} },
			s:         session("s1", "issue-8", nil),
			wantNote:  "issue #8: issues are disabled in acme/widgets",
			wantCalls: []string{listOf + "issue-8", issueN + "8"},
			wantLink:  state.GitHubLink{Issue: 8},
		},
		{
			name:    "issue 404, repository readable",
			s:       session("s1", "issue-99", nil),
			wantEnd: true, wantState: StateIssueUnavailable, wantNote: "issue #99 not found",
			wantCalls: []string{listOf + "issue-99", issueN + "99", repoPath},
			wantLink:  state.GitHubLink{Issue: 99},
		},
		{
			name:      "issue 404, repository not readable",
			setup:     func(f *fakeGitHub) { f.repoMissing = true },
			s:         session("s1", "issue-99", nil),
			wantNote:  "issue #99 not readable: repository acme/widgets not readable with this token",
			wantCalls: []string{listOf + "issue-99", issueN + "99", repoPath},
			wantLink:  state.GitHubLink{Issue: 99},
		},
		{
			name:      "no PR, issue open",
			setup:     func(f *fakeGitHub) { f.issues[7] = fakeIssue{State: "open"} },
			s:         session("s1", "issue-7", nil),
			wantNote:  "issue #7 open",
			wantCalls: []string{listOf + "issue-7", issueN + "7"},
			wantLink:  state.GitHubLink{Issue: 7},
		},
		{
			name:      "no link",
			s:         session("s1", "main", nil),
			wantCalls: []string{listOf + "main"},
		},
		{
			name:      "detached HEAD and no link: no call at all",
			s:         session("s1", "HEAD", nil),
			wantCalls: nil,
		},
		{
			name: "PR closed unmerged, no issue",
			setup: func(f *fakeGitHub) {
				f.pulls = []fakePR{{Number: 16, Branch: "feature/login", State: "closed", Updated: t0}}
			},
			s:         session("s1", "feature/login", nil),
			wantNote:  "PR #16 closed unmerged",
			wantCalls: []string{listOf + "feature/login"},
			wantLink:  state.GitHubLink{PR: 16},
		},
		{
			name: "recorded PR number is fetched directly",
			setup: func(f *fakeGitHub) {
				f.pulls = []fakePR{{Number: 12, Branch: "elsewhere", State: "closed", Merged: true, Updated: t0}}
			},
			s:       session("s1", "feature/login", &state.GitHubLink{PR: 12}),
			wantEnd: true, wantState: StatePRMerged, wantNote: "PR #12 merged",
			wantCalls: []string{pullN + "12"},
			wantLink:  state.GitHubLink{PR: 12},
		},
		{
			name: "linked issue wins over the branch name",
			setup: func(f *fakeGitHub) {
				f.issues[5] = fakeIssue{State: "closed", Reason: "completed"}
				f.issues[7] = fakeIssue{State: "open"}
			},
			s:       session("s1", "issue-7", &state.GitHubLink{Issue: 5}),
			wantEnd: true, wantState: StateIssueDone, wantNote: "issue #5 closed as completed",
			wantCalls: []string{listOf + "issue-7", issueN + "5"},
			wantLink:  state.GitHubLink{Issue: 5},
		},
		{
			name:      "branch number names a pull request, not an issue",
			setup:     func(f *fakeGitHub) { f.issues[12] = fakeIssue{State: "closed", IsPR: true} },
			s:         session("s1", "issue-12", nil),
			wantCalls: []string{listOf + "issue-12", issueN + "12"},
		},
		{
			name: "open PR preferred over a newer merged one",
			setup: func(f *fakeGitHub) {
				f.pulls = []fakePR{
					{Number: 20, Branch: "feature/login", State: "closed", Merged: true, Updated: t0.Add(time.Hour)},
					{Number: 21, Branch: "feature/login", State: "open", Updated: t0},
					{Number: 22, Branch: "feature/other", State: "open", Updated: t0},
				}
			},
			s:       session("s1", "feature/login", nil),
			wantEnd: true, wantState: StatePROpen, wantNote: "PR #21 open",
			wantCalls: []string{listOf + "feature/login"},
			wantLink:  state.GitHubLink{PR: 21},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			if tc.setup != nil {
				tc.setup(f)
			}
			o := f.reconciler(nil).Observe(context.Background(), tc.s)
			d := Map(o)
			if d.End != tc.wantEnd || d.State != tc.wantState || d.Note != tc.wantNote {
				t.Errorf("decision = end %v %q %q, want end %v %q %q", d.End, d.State, d.Note, tc.wantEnd, tc.wantState, tc.wantNote)
			}
			if (d.Err != nil) != tc.wantErr {
				t.Errorf("err = %v, want error %v", d.Err, tc.wantErr)
			}
			if tc.wantErr && (d.Link.LastError == "" || !d.RetryAt.IsZero()) {
				t.Errorf("error recorded as %q, retry at %v; want recorded, no retry time", d.Link.LastError, d.RetryAt)
			}
			if got := f.calls(); !slices.Equal(got, tc.wantCalls) {
				t.Errorf("calls = %q, want %q", got, tc.wantCalls)
			}
			if d.Link.PR != tc.wantLink.PR || d.Link.Issue != tc.wantLink.Issue {
				t.Errorf("link PR %d issue %d, want PR %d issue %d", d.Link.PR, d.Link.Issue, tc.wantLink.PR, tc.wantLink.Issue)
			}
			if d.Link.Repo != "acme/widgets" || d.Link.Host != testHost || d.Link.CheckedAt.IsZero() {
				t.Errorf("link repo %q host %q checked %v", d.Link.Repo, d.Link.Host, d.Link.CheckedAt)
			}
			if d.Link.State != d.State || (!tc.wantErr && d.Link.Note != d.Note) {
				t.Errorf("link state %q note %q disagree with the decision", d.Link.State, d.Link.Note)
			}
		})
	}
}

// TestRealWorldMergedAndDone is the case seen in practice: a session still
// "running" locally, its agent gone, while on GitHub its issue was closed
// with a done label and its PR merged. The first row wins: pr-merged, and
// the issue is not even fetched.
func TestRealWorldMergedAndDone(t *testing.T) {
	f := newFake(t)
	f.pulls = []fakePR{{Number: 31, Branch: "issue-42-fix-sweep", State: "closed", Merged: true, Body: "Fixes #42", Updated: t0}}
	f.issues[42] = fakeIssue{State: "closed", Reason: "completed", Labels: []string{"done"}}
	s := session("a1b2c3", "issue-42-fix-sweep", nil)
	s.Phase = state.PhaseActive
	s.Owner = &proclive.Identity{OS: "linux", PID: 4242, Start: 777, Host: "devbox"}

	ctx := context.Background()
	r := f.reconciler(nil)
	d := Map(r.Observe(ctx, s))
	if !d.End || d.State != StatePRMerged || d.Err != nil {
		t.Fatalf("decision = %+v, want end pr-merged", d)
	}
	for _, l := range []struct {
		liveness proclive.Liveness
		stale    bool
		want     bool
	}{{proclive.Dead, false, true}, {proclive.Unknown, true, true}, {proclive.Unknown, false, false}, {proclive.Alive, true, false}} {
		if got := Allowed(l.liveness, l.stale); got != l.want {
			t.Errorf("Allowed(%v, stale %v) = %v, want %v", l.liveness, l.stale, got, l.want)
		}
	}
	if want := []string{listOf + "issue-42-fix-sweep"}; !slices.Equal(f.calls(), want) {
		t.Fatalf("calls = %q, want only the PR list %q", f.calls(), want)
	}

	// A second session on the same branch in the same sweep costs nothing.
	d2 := Map(r.Observe(ctx, session("d4e5f6", "issue-42-fix-sweep", nil)))
	if d2.State != StatePRMerged || len(f.calls()) != 1 {
		t.Fatalf("second session: state %q after %d calls, want pr-merged from the cache", d2.State, len(f.calls()))
	}

	// The caller records the link. Were the session still asked about in a
	// later sweep (an Alive owner that was only annotated), the recorded PR
	// is fetched by number, once per sweep.
	s.GitHub = &d.Link
	r2 := f.reconciler(nil)
	for range 2 {
		if d := Map(r2.Observe(ctx, s)); d.State != StatePRMerged {
			t.Fatalf("next sweep: %+v, want pr-merged", d)
		}
	}
	if want := []string{listOf + "issue-42-fix-sweep", pullN + "31"}; !slices.Equal(f.calls(), want) {
		t.Fatalf("calls = %q, want %q", f.calls(), want)
	}
}

// TestCacheSharedAcrossSessions checks one call per branch list, issue and
// repository within a sweep, and fresh calls in the next sweep.
func TestCacheSharedAcrossSessions(t *testing.T) {
	f := newFake(t)
	f.pulls = []fakePR{{Number: 3, Branch: "issue-7", State: "closed", Updated: t0}}
	f.issues[7] = fakeIssue{State: "open"}
	ctx := context.Background()
	r := f.reconciler(nil)
	sessions := []*state.Session{
		session("a", "issue-7", nil),
		session("b", "issue-7", nil),
		session("c", "feature/x", &state.GitHubLink{Issue: 7}),
		session("d", "issue-404", nil),
		session("e", "issue-405", nil),
	}
	for _, s := range sessions {
		if d := Map(r.Observe(ctx, s)); d.Err != nil {
			t.Fatalf("session %s: %v", s.ID, d.Err)
		}
	}
	want := []string{
		listOf + "issue-7", issueN + "7",
		listOf + "feature/x",
		listOf + "issue-404", issueN + "404", repoPath,
		listOf + "issue-405", issueN + "405",
	}
	if got := f.calls(); !slices.Equal(got, want) {
		t.Fatalf("calls = %q\nwant %q", got, want)
	}
	Map(f.reconciler(nil).Observe(ctx, sessions[0]))
	if got := len(f.calls()); got != len(want)+2 {
		t.Fatalf("a new sweep made %d calls, want 2 fresh ones", got-len(want))
	}
}

// TestFailureStopsTheSweep: after GitHub fails (5xx, network, bad token),
// no further call is made in that sweep and nothing ends.
func TestFailureStopsTheSweep(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(f *fakeGitHub)
		wantMsg string
	}{
		{"500", func(f *fakeGitHub) { f.fail = serverError }, "500 Server Error"},
		{"401", func(f *fakeGitHub) { f.token = "another-token" }, "401 Bad credentials"},
		{"network", func(f *fakeGitHub) { f.srv.Close() }, "connect"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.pulls = []fakePR{{Number: 1, Branch: "b2", State: "closed", Merged: true, Updated: t0}}
			r := f.reconciler(nil)
			tc.setup(f)
			ctx := context.Background()
			d := Map(r.Observe(ctx, session("s1", "issue-1", nil)))
			if d.End || d.Err == nil || !strings.Contains(d.Err.Error(), tc.wantMsg) || !d.RetryAt.IsZero() {
				t.Fatalf("decision = end %v err %v retry %v; want no change with a %q error", d.End, d.Err, d.RetryAt, tc.wantMsg)
			}
			if errors.Is(d.Err, ErrRateLimited) {
				t.Errorf("%v is not a rate limit", d.Err)
			}
			n := len(f.calls())
			d2 := Map(r.Observe(ctx, session("s2", "b2", nil)))
			if d2.End || d2.Err == nil || len(f.calls()) != n {
				t.Fatalf("after a failure: end %v err %v, %d more calls; want no change and no call", d2.End, d2.Err, len(f.calls())-n)
			}
		})
	}
}

// TestRateLimited: the primary limit (403 or 429 with Remaining 0), the
// secondary limit and a bare 429 all stop the sweep's calls and report when
// to try again.
func TestRateLimited(t *testing.T) {
	reset := time.Now().Add(17 * time.Minute).Truncate(time.Second)
	cases := []struct {
		name  string
		fail  func(http.ResponseWriter, *http.Request) bool
		retry func(at time.Time) time.Time // expected RetryAt given the observation time
	}{
		{"403 primary", primaryRateLimit(http.StatusForbidden, reset), func(time.Time) time.Time { return reset }},
		{"429 primary", primaryRateLimit(http.StatusTooManyRequests, reset), func(time.Time) time.Time { return reset }},
		{"429 secondary", secondaryRateLimit(120), func(at time.Time) time.Time { return at.Add(120 * time.Second) }},
		{"429 bare", bare429, func(at time.Time) time.Time { return at.Add(defaultBackoff) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.fail = tc.fail
			var logBuf bytes.Buffer
			r := f.reconciler(slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})))
			ctx := context.Background()
			d := Map(r.Observe(ctx, session("s1", "issue-3", nil)))
			if d.End || !errors.Is(d.Err, ErrRateLimited) {
				t.Fatalf("decision = end %v err %v, want no change and ErrRateLimited", d.End, d.Err)
			}
			at := d.Link.CheckedAt
			if want := tc.retry(at); !d.RetryAt.Equal(want) {
				t.Errorf("RetryAt = %v, want %v", d.RetryAt, want)
			}
			if !strings.Contains(d.Link.LastError, d.RetryAt.UTC().Format(time.RFC3339)) {
				t.Errorf("LastError %q does not say until when", d.Link.LastError)
			}
			if !strings.Contains(logBuf.String(), "rate limited") {
				t.Errorf("log does not mention the rate limit:\n%s", logBuf.String())
			}
			for _, s := range []*state.Session{session("s2", "issue-4", nil), session("s3", "", &state.GitHubLink{PR: 9})} {
				d2 := Map(r.Observe(ctx, s))
				if d2.End || !errors.Is(d2.Err, ErrRateLimited) || !d2.RetryAt.Equal(d.RetryAt) {
					t.Errorf("%s after the limit: end %v err %v retry %v", s.ID, d2.End, d2.Err, d2.RetryAt)
				}
			}
			if got := f.calls(); len(got) != 1 {
				t.Errorf("server saw %d requests %q, want 1: none after the limit", len(got), got)
			}
		})
	}
}

func TestObserveOtherRepoLink(t *testing.T) {
	f := newFake(t)
	d := Map(f.reconciler(nil).Observe(context.Background(),
		session("s1", "issue-1", &state.GitHubLink{Repo: "acme/gadgets", Host: testHost, Issue: 1})))
	if d.End || d.Err == nil || !strings.Contains(d.Err.Error(), "acme/gadgets") || len(f.calls()) != 0 {
		t.Fatalf("decision %+v after %d calls; want an error naming the other repo and no call", d, len(f.calls()))
	}
	if d.Link.Repo != "acme/gadgets" {
		t.Errorf("the session's own link was rewritten to %q", d.Link.Repo)
	}
}

func TestWithDoneLabels(t *testing.T) {
	f := newFake(t)
	f.issues[7] = fakeIssue{State: "open", Labels: []string{"done", "Shipped"}}
	r := NewReconciler(f.client(nil), testOwner, testRepo, WithDoneLabels("shipped"))
	d := Map(r.Observe(context.Background(), session("s1", "issue-7", nil)))
	if d.State != StateIssueDone || d.Note != `issue #7 labelled "Shipped"` {
		t.Fatalf("decision %+v, want issue-done through the custom label only", d)
	}
}

// TestTokenNeverLeaks drives every path — answers, errors, rate limits —
// with a debug logger and checks the token appears in no Decision, error,
// stored link or log line, while the server did receive it.
func TestTokenNeverLeaks(t *testing.T) {
	var logBuf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var outputs []string
	record := func(d Decision) {
		link, err := json.Marshal(d.Link)
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, fmt.Sprintf("%+v", d), fmt.Sprintf("%#v", d), string(link))
		if d.Err != nil {
			outputs = append(outputs, d.Err.Error())
		}
	}
	fails := []func(http.ResponseWriter, *http.Request) bool{
		nil, serverError, bare429, secondaryRateLimit(5), primaryRateLimit(http.StatusForbidden, time.Now().Add(time.Hour)),
	}
	for _, fail := range fails {
		f := newFake(t)
		f.pulls = []fakePR{{Number: 2, Branch: "issue-1", State: "closed", Updated: t0}}
		f.issues[1] = fakeIssue{State: "closed", Reason: "completed"}
		f.fail = fail
		r := f.reconciler(log)
		for _, s := range []*state.Session{session("s1", "issue-1", nil), session("s2", "issue-404", nil)} {
			record(Map(r.Observe(context.Background(), s)))
		}
	}
	// Redirects to another host are refused rather than followed with the token.
	f := newFake(t)
	f.fail = func(w http.ResponseWriter, r *http.Request) bool {
		http.Redirect(w, r, "http://elsewhere.invalid/steal", http.StatusMovedPermanently)
		return true
	}
	d := Map(f.reconciler(log).Observe(context.Background(), session("s3", "issue-1", nil)))
	if d.Err == nil || !strings.Contains(d.Err.Error(), "refusing redirect") {
		t.Errorf("cross-host redirect: err %v, want refused", d.Err)
	}
	record(d)

	if !strings.Contains(logBuf.String(), `"path":"/api/v3/repos/acme/widgets/issues/1"`) {
		t.Fatalf("the log shows no request; the check below would prove nothing:\n%s", logBuf.String())
	}
	outputs = append(outputs, logBuf.String())
	for _, out := range outputs {
		if strings.Contains(out, testToken) || strings.Contains(out, testToken[8:]) {
			t.Fatalf("token leaked into output:\n%s", out)
		}
	}
}
