package github

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeGitHub is an httptest GitHub REST API for one repository, answering
// with the JSON shapes github.com sends (trimmed of fields nothing reads).
// It counts every request it receives.
type fakeGitHub struct {
	t           *testing.T
	srv         *httptest.Server
	token       string
	owner, repo string

	mu          sync.Mutex
	reqs        []string
	repoMissing bool
	pulls       []fakePR
	issues      map[int]fakeIssue
	// fail, when set, answers a request instead of the repository data;
	// it returns false to let the request through.
	fail func(w http.ResponseWriter, r *http.Request) bool
}

type fakePR struct {
	Number  int
	Branch  string
	State   string // open or closed
	Merged  bool
	Body    string
	Updated time.Time
}

type fakeIssue struct {
	State  string // open or closed
	Reason string // state_reason
	Labels []string
	IsPR   bool   // the number belongs to a pull request
	Gone   string // answer 410 with this message
}

const (
	testOwner = "acme"
	testRepo  = "widgets"
	testHost  = "github.example.com"
	testToken = "ghp_tetherTestTokenValue0123456789abcdef"
	apiPrefix = "/api/v3"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newFake(t *testing.T) *fakeGitHub {
	f := &fakeGitHub{t: t, token: testToken, owner: testOwner, repo: testRepo, issues: map[int]fakeIssue{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+apiPrefix+"/repos/{owner}/{repo}", f.handleRepo)
	mux.HandleFunc("GET "+apiPrefix+"/repos/{owner}/{repo}/pulls", f.handleListPulls)
	mux.HandleFunc("GET "+apiPrefix+"/repos/{owner}/{repo}/pulls/{number}", f.handlePull)
	mux.HandleFunc("GET "+apiPrefix+"/repos/{owner}/{repo}/issues/{number}", f.handleIssue)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		call := strings.TrimPrefix(r.URL.Path, apiPrefix)
		if h := r.URL.Query().Get("head"); h != "" {
			call += "?head=" + h
		}
		f.reqs = append(f.reqs, call)
		fail := f.fail
		f.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+f.token {
			writeError(w, http.StatusUnauthorized, "Bad credentials", "https://docs.github.com/rest")
			return
		}
		if fail != nil && fail(w, r) {
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// client returns a Client for the fake, logging to log when not nil.
func (f *fakeGitHub) client(log *slog.Logger) *Client {
	f.t.Helper()
	opts := []Option{WithBaseURL(f.srv.URL + apiPrefix + "/")}
	if log != nil {
		opts = append(opts, WithLogger(log))
	}
	c, err := NewClient(testHost, testToken, opts...)
	if err != nil {
		f.t.Fatalf("NewClient: %v", err)
	}
	return c
}

func (f *fakeGitHub) reconciler(log *slog.Logger) *Reconciler {
	return NewReconciler(f.client(log), testOwner, testRepo)
}

// calls returns the requests received so far, as path (plus ?head= for PR lists).
func (f *fakeGitHub) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reqs...)
}

func (f *fakeGitHub) ours(r *http.Request) bool {
	return r.PathValue("owner") == f.owner && r.PathValue("repo") == f.repo && !f.repoMissing
}

func (f *fakeGitHub) handleRepo(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.ours(r) {
		writeError(w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest/repos/repos#get-a-repository")
		return
	}
	writeJSON(w, map[string]any{
		"id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": f.repo,
		"full_name": f.owner + "/" + f.repo, "private": true, "owner": userJSON(f.owner),
		"html_url":       "https://" + testHost + "/" + f.owner + "/" + f.repo,
		"default_branch": "main", "has_issues": true, "visibility": "private",
		"created_at": "2025-01-26T19:01:12Z", "updated_at": "2026-02-28T19:14:43Z", "pushed_at": "2026-02-28T19:06:43Z",
	})
}

func (f *fakeGitHub) handleListPulls(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.ours(r) {
		writeError(w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest/pulls/pulls#list-pull-requests")
		return
	}
	q := r.URL.Query()
	if q.Get("state") != "all" {
		f.t.Errorf("PR list asked with state=%q, want all (closed and merged PRs decide too)", q.Get("state"))
	}
	out := []any{}
	for _, p := range f.pulls {
		if q.Get("head") == f.owner+":"+p.Branch {
			out = append(out, f.prJSON(p, false))
		}
	}
	writeJSON(w, out)
}

func (f *fakeGitHub) handlePull(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, _ := strconv.Atoi(r.PathValue("number"))
	for _, p := range f.pulls {
		if p.Number == n && f.ours(r) {
			writeJSON(w, f.prJSON(p, true))
			return
		}
	}
	writeError(w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest/pulls/pulls#get-a-pull-request")
}

func (f *fakeGitHub) handleIssue(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, _ := strconv.Atoi(r.PathValue("number"))
	is, ok := f.issues[n]
	if !ok || !f.ours(r) {
		writeError(w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest/issues/issues#get-an-issue")
		return
	}
	if is.Gone != "" {
		writeError(w, http.StatusGone, is.Gone, "https://docs.github.com/rest/issues/issues#get-an-issue")
		return
	}
	labels := []any{}
	for i, l := range is.Labels {
		labels = append(labels, map[string]any{
			"id": 208045946 + i, "node_id": "MDU6TGFiZWwyMDgwNDU5NDY=", "name": l, "color": "0e8a16",
			"default": false, "description": "",
			"url": fmt.Sprintf("https://%s/api/v3/repos/%s/%s/labels/%s", testHost, f.owner, f.repo, l),
		})
	}
	body := map[string]any{
		"url":      fmt.Sprintf("https://%s/api/v3/repos/%s/%s/issues/%d", testHost, f.owner, f.repo, n),
		"html_url": fmt.Sprintf("https://%s/%s/%s/issues/%d", testHost, f.owner, f.repo, n),
		"id":       1000 + n, "node_id": "I_kwDOABCD" + strconv.Itoa(n), "number": n,
		"title": "Issue " + strconv.Itoa(n), "user": userJSON("octocat"), "labels": labels,
		"state": is.State, "state_reason": nil, "locked": false, "assignees": []any{}, "comments": 2,
		"created_at": "2026-02-01T10:00:00Z", "updated_at": "2026-02-20T10:00:00Z", "closed_at": nil,
		"author_association": "MEMBER", "body": "The widget sweeps too eagerly.",
	}
	if is.Reason != "" {
		body["state_reason"] = is.Reason
	}
	if is.State == "closed" {
		body["closed_at"] = "2026-02-20T10:00:00Z"
	}
	if is.IsPR {
		body["pull_request"] = map[string]any{
			"url":      fmt.Sprintf("https://%s/api/v3/repos/%s/%s/pulls/%d", testHost, f.owner, f.repo, n),
			"html_url": fmt.Sprintf("https://%s/%s/%s/pull/%d", testHost, f.owner, f.repo, n),
		}
	}
	writeJSON(w, body)
}

// prJSON renders a pull request as the list (detail=false) or get
// (detail=true) endpoint does: only the latter carries "merged".
func (f *fakeGitHub) prJSON(p fakePR, detail bool) map[string]any {
	repo := map[string]any{"id": 1296269, "name": f.repo, "full_name": f.owner + "/" + f.repo, "owner": userJSON(f.owner), "private": true}
	m := map[string]any{
		"url":      fmt.Sprintf("https://%s/api/v3/repos/%s/%s/pulls/%d", testHost, f.owner, f.repo, p.Number),
		"html_url": fmt.Sprintf("https://%s/%s/%s/pull/%d", testHost, f.owner, f.repo, p.Number),
		"id":       5000 + p.Number, "node_id": "PR_kwDOABCD" + strconv.Itoa(p.Number), "number": p.Number,
		"state": p.State, "locked": false, "title": "Work on " + p.Branch, "user": userJSON("octocat"),
		"body": p.Body, "created_at": "2026-02-10T09:00:00Z", "updated_at": p.Updated.Format(time.RFC3339),
		"closed_at": nil, "merged_at": nil, "merge_commit_sha": "e5bd3914e2e596debea16f433f57875b5b90bcd6",
		"draft": false, "author_association": "MEMBER",
		"head": map[string]any{"label": f.owner + ":" + p.Branch, "ref": p.Branch, "sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e", "user": userJSON(f.owner), "repo": repo},
		"base": map[string]any{"label": f.owner + ":main", "ref": "main", "sha": "9a1ec1bd2c2e7e5c1e6e1a6b0c4d2e3f4a5b6c7d", "user": userJSON(f.owner), "repo": repo},
	}
	if p.State == "closed" {
		m["closed_at"] = p.Updated.Format(time.RFC3339)
	}
	if p.Merged {
		m["merged_at"] = p.Updated.Format(time.RFC3339)
	}
	if detail {
		m["merged"] = p.Merged
		m["mergeable"] = nil
		m["comments"] = 1
		m["commits"] = 3
	}
	return m
}

func userJSON(login string) map[string]any {
	return map[string]any{"login": login, "id": 583231, "node_id": "MDQ6VXNlcjU4MzIzMQ==", "type": "User", "site_admin": false}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg, doc string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"message": msg, "documentation_url": doc, "status": strconv.Itoa(status)})
}

// Failure answers, as GitHub sends them.

func serverError(w http.ResponseWriter, _ *http.Request) bool {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write([]byte(`{"message":"Server Error"}`))
	return true
}

func primaryRateLimit(status int, reset time.Time) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, _ *http.Request) bool {
		h := w.Header()
		h.Set("X-RateLimit-Limit", "5000")
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Used", "5000")
		h.Set("X-RateLimit-Resource", "core")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
		writeError(w, status, "API rate limit exceeded for user ID 583231.",
			"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api")
		return true
	}
}

func secondaryRateLimit(retryAfter int) func(http.ResponseWriter, *http.Request) bool {
	return func(w http.ResponseWriter, _ *http.Request) bool {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		writeError(w, http.StatusTooManyRequests,
			"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
			"https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits")
		return true
	}
}

func bare429(w http.ResponseWriter, _ *http.Request) bool {
	writeError(w, http.StatusTooManyRequests, "Too Many Requests", "")
	return true
}
