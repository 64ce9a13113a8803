package github

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	gh "github.com/google/go-github/v92/github"

	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

func TestMap(t *testing.T) {
	merged := &PullRequest{Number: 12, Merged: true}
	open := &PullRequest{Number: 12, Open: true}
	closed := &PullRequest{Number: 12}
	issue := func(st IssueStatus, reason, label string) *Issue {
		return &Issue{Number: 7, Status: st, StateReason: reason, DoneLabel: label}
	}
	boom := errors.New("GET /repos/acme/widgets/pulls: 502 Bad Gateway")
	cases := []struct {
		name      string
		o         Observation
		wantEnd   bool
		wantState string
		wantNote  string
		wantErr   error
	}{
		{"error wins over a merged PR", Observation{PR: merged, Err: boom}, false, "", "", boom},
		{"PR merged", Observation{PR: merged}, true, StatePRMerged, "PR #12 merged", nil},
		{"PR merged wins over a done issue", Observation{PR: merged, Issue: issue(IssueClosed, "completed", "done")}, true, StatePRMerged, "PR #12 merged", nil},
		{"PR open", Observation{PR: open}, true, StatePROpen, "PR #12 open", nil},
		{"PR open wins over a cancelled issue", Observation{PR: open, Issue: issue(IssueClosed, "not_planned", "")}, true, StatePROpen, "PR #12 open", nil},
		{"PR closed unmerged, issue open", Observation{PR: closed, Issue: issue(IssueOpen, "", "")}, true, StatePRClosed, "PR #12 closed unmerged, issue #7 open", nil},
		{"PR closed unmerged, issue open with done label", Observation{PR: closed, Issue: issue(IssueOpen, "", "done")}, true, StatePRClosed, "PR #12 closed unmerged, issue #7 open", nil},
		{"PR closed unmerged, issue reopened", Observation{PR: closed, Issue: issue(IssueOpen, "reopened", "")}, true, StatePRClosed, "PR #12 closed unmerged, issue #7 open", nil},
		{"PR closed unmerged, issue closed completed", Observation{PR: closed, Issue: issue(IssueClosed, "completed", "")}, true, StateIssueDone, "issue #7 closed as completed", nil},
		{"PR closed unmerged, issue not planned", Observation{PR: closed, Issue: issue(IssueClosed, "not_planned", "")}, true, StateIssueCancelled, "issue #7 closed as not planned", nil},
		{"PR closed unmerged, issue deleted", Observation{PR: closed, Issue: issue(IssueDeleted, "", "")}, true, StateIssueDeleted, "issue #7 deleted", nil},
		{"PR closed unmerged, no issue", Observation{PR: closed}, false, "", "PR #12 closed unmerged", nil},
		{"issue closed completed", Observation{Issue: issue(IssueClosed, "completed", "")}, true, StateIssueDone, "issue #7 closed as completed", nil},
		{"issue closed without a reason", Observation{Issue: issue(IssueClosed, "", "")}, true, StateIssueDone, "issue #7 closed", nil},
		{"issue open with done label", Observation{Issue: issue(IssueOpen, "", "Resolved")}, true, StateIssueDone, `issue #7 labelled "Resolved"`, nil},
		{"issue not planned but labelled done", Observation{Issue: issue(IssueClosed, "not_planned", "done")}, true, StateIssueDone, `issue #7 labelled "done"`, nil},
		{"issue closed not planned", Observation{Issue: issue(IssueClosed, "not_planned", "")}, true, StateIssueCancelled, "issue #7 closed as not planned", nil},
		{"issue closed duplicate", Observation{Issue: issue(IssueClosed, "duplicate", "")}, true, StateIssueCancelled, "issue #7 closed as duplicate", nil},
		{"issue closed, unknown reason", Observation{Issue: issue(IssueClosed, "archived", "")}, false, "", "issue #7 closed (archived)", nil},
		{"issue 410", Observation{Issue: issue(IssueDeleted, "", "")}, true, StateIssueDeleted, "issue #7 deleted", nil},
		{"issue 410, issues disabled", Observation{Link: state.GitHubLink{Repo: "acme/widgets"}, Issue: issue(IssueDisabled, "", "")}, false, "", "issue #7: issues are disabled in acme/widgets", nil},
		{"issue 404, repository readable", Observation{Issue: &Issue{Number: 7, Status: IssueNotFound, RepoReadable: true}}, true, StateIssueUnavailable, "issue #7 not found", nil},
		{"issue 404, repository not readable", Observation{Link: state.GitHubLink{Repo: "acme/widgets"}, Issue: &Issue{Number: 7, Status: IssueNotFound}}, false, "", "issue #7 not readable: repository acme/widgets not readable with this token", nil},
		{"no PR, issue open", Observation{Issue: issue(IssueOpen, "", "")}, false, "", "issue #7 open", nil},
		{"no link", Observation{}, false, "", "", nil},
	}
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.At = at
			d := Map(tc.o)
			if d.End != tc.wantEnd || d.State != tc.wantState || d.Note != tc.wantNote || d.Err != tc.wantErr {
				t.Fatalf("Map = end %v %q %q err %v; want end %v %q %q err %v",
					d.End, d.State, d.Note, d.Err, tc.wantEnd, tc.wantState, tc.wantNote, tc.wantErr)
			}
			if !d.Link.CheckedAt.Equal(at) {
				t.Errorf("CheckedAt = %v, want %v", d.Link.CheckedAt, at)
			}
		})
	}
}

// TestMapLink: a failure keeps the last known view and records the error;
// a success clears the old error.
func TestMapLink(t *testing.T) {
	prev := state.GitHubLink{Repo: "acme/widgets", PR: 12, State: StatePROpen, Note: "PR #12 open", LastError: "old"}
	retry := time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC)
	d := Map(Observation{Link: prev, Err: errors.New("rate limited"), RetryAt: retry})
	if d.Link.State != StatePROpen || d.Link.Note != "PR #12 open" || d.Link.LastError != "rate limited" || !d.RetryAt.Equal(retry) {
		t.Errorf("on error, link = %+v retry %v", d.Link, d.RetryAt)
	}
	d = Map(Observation{Link: prev, PR: &PullRequest{Number: 12, Merged: true}})
	if d.Link.State != StatePRMerged || d.Link.Note != "PR #12 merged" || d.Link.LastError != "" || d.Link.PR != 12 {
		t.Errorf("on success, link = %+v", d.Link)
	}
}

func TestAllowed(t *testing.T) {
	cases := []struct {
		l     proclive.Liveness
		stale bool
		want  bool
	}{
		{proclive.Dead, false, true},
		{proclive.Dead, true, true},
		{proclive.Unknown, true, true},
		{proclive.Unknown, false, false},
		{proclive.Alive, false, false},
		{proclive.Alive, true, false},
	}
	for _, tc := range cases {
		if got := Allowed(tc.l, tc.stale); got != tc.want {
			t.Errorf("Allowed(%v, %v) = %v, want %v", tc.l, tc.stale, got, tc.want)
		}
	}
}

func TestMatchDoneLabel(t *testing.T) {
	cases := []struct {
		labels, done []string
		want         string
		ok           bool
	}{
		{[]string{"bug", "Done"}, DefaultDoneLabels, "Done", true},
		{[]string{"STATUS: DONE"}, DefaultDoneLabels, "STATUS: DONE", true},
		{[]string{"completed"}, DefaultDoneLabels, "completed", true},
		{[]string{"resolved "}, DefaultDoneLabels, "resolved ", true},
		{[]string{"not done", "status: doing", "undone"}, DefaultDoneLabels, "", false},
		{nil, DefaultDoneLabels, "", false},
		{[]string{"done"}, []string{"shipped"}, "", false},
		{[]string{"Shipped"}, []string{"shipped"}, "Shipped", true},
	}
	for _, tc := range cases {
		got, ok := MatchDoneLabel(tc.labels, tc.done)
		if got != tc.want || ok != tc.ok {
			t.Errorf("MatchDoneLabel(%q, %q) = %q, %v; want %q, %v", tc.labels, tc.done, got, ok, tc.want, tc.ok)
		}
	}
}

func TestPickPR(t *testing.T) {
	t1, t2 := t0, t0.Add(time.Hour)
	cases := []struct {
		name string
		prs  []PullRequest
		want int // Number, 0 for none
	}{
		{"none", nil, 0},
		{"one", []PullRequest{{Number: 4, Merged: true, UpdatedAt: t1}}, 4},
		{"open over newer merged", []PullRequest{{Number: 5, Merged: true, UpdatedAt: t2}, {Number: 4, Open: true, UpdatedAt: t1}}, 4},
		{"newest when none open", []PullRequest{{Number: 5, UpdatedAt: t1}, {Number: 4, Merged: true, UpdatedAt: t2}}, 4},
		{"newest of two open", []PullRequest{{Number: 5, Open: true, UpdatedAt: t1}, {Number: 4, Open: true, UpdatedAt: t2}}, 4},
		{"highest number on a tie", []PullRequest{{Number: 5, UpdatedAt: t1}, {Number: 9, UpdatedAt: t1}, {Number: 7, UpdatedAt: t1}}, 9},
	}
	for _, tc := range cases {
		i, ok := pickPR(tc.prs)
		got := 0
		if ok {
			got = tc.prs[i].Number
		}
		if got != tc.want {
			t.Errorf("%s: picked #%d, want #%d", tc.name, got, tc.want)
		}
	}
}

func TestRetryAt(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	resp := func(status int, hdr map[string]string) *http.Response {
		r := &http.Response{StatusCode: status, Header: http.Header{},
			Request: &http.Request{Method: "GET", URL: &url.URL{Scheme: "https", Host: "api.github.com", Path: "/repos/a/b"}}}
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		return r
	}
	secs := func(d time.Duration) *time.Duration { return &d }
	reset := now.Add(10 * time.Minute)
	cases := []struct {
		name    string
		err     error
		want    time.Time
		limited bool
	}{
		{"primary", &gh.RateLimitError{Rate: gh.Rate{Reset: gh.Timestamp{Time: reset}}, Response: resp(403, nil)}, reset, true},
		{"primary, reset already past", &gh.RateLimitError{Rate: gh.Rate{Reset: gh.Timestamp{Time: now.Add(-time.Second)}}, Response: resp(403, nil)}, now.Add(defaultBackoff), true},
		{"secondary with retry-after", &gh.AbuseRateLimitError{RetryAfter: secs(90 * time.Second), Response: resp(429, nil)}, now.Add(90 * time.Second), true},
		{"secondary without", &gh.AbuseRateLimitError{Response: resp(403, nil)}, now.Add(defaultBackoff), true},
		{"bare 429 with Retry-After", &gh.ErrorResponse{Response: resp(429, map[string]string{"Retry-After": "30"})}, now.Add(30 * time.Second), true},
		{"bare 429 with reset", &gh.ErrorResponse{Response: resp(429, map[string]string{"X-RateLimit-Reset": strconv.FormatInt(reset.Unix(), 10)})}, reset, true},
		{"bare 429", &gh.ErrorResponse{Response: resp(429, nil)}, now.Add(defaultBackoff), true},
		{"403 with Retry-After", &gh.ErrorResponse{Response: resp(403, map[string]string{"Retry-After": "60"})}, now.Add(time.Minute), true},
		{"wrapped", fmt.Errorf("get issue acme/widgets#1: %w", &gh.ErrorResponse{Response: resp(429, nil)}), now.Add(defaultBackoff), true},
		{"plain 403", &gh.ErrorResponse{Response: resp(403, nil)}, time.Time{}, false},
		{"500", &gh.ErrorResponse{Response: resp(500, nil)}, time.Time{}, false},
		{"network", errors.New("dial tcp: connection refused"), time.Time{}, false},
	}
	for _, tc := range cases {
		got, limited := retryAt(tc.err, now)
		if !got.Equal(tc.want) || limited != tc.limited {
			t.Errorf("%s: retryAt = %v, %v; want %v, %v", tc.name, got, limited, tc.want, tc.limited)
		}
	}
}
