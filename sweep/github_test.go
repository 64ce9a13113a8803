package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/github"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// ghFake is a small GitHub REST API for the repository o/r over real HTTP,
// answering with the shapes github.com sends (trimmed to what is read). It
// counts the requests it receives.
type ghFake struct {
	t   *testing.T
	srv *httptest.Server

	mu          sync.Mutex
	calls       []string
	repoMissing bool
	pulls       []ghPR
	issues      map[int]ghIssue
	// merged are the merged pull requests by their merge commit.
	merged map[string]ghMerged
	// fail, when set, answers every request instead of the data.
	fail func(w http.ResponseWriter)
}

// ghMerged is a merged pull request and its commits.
type ghMerged struct {
	Number  int
	Commits []string
}

type ghPR struct {
	Number int
	Branch string
	State  string // open or closed
	Merged bool
}

type ghIssue struct {
	State  string // open or closed
	Reason string // state_reason
	Labels []string
	Gone   string // answer 410 with this message
}

const ghTestToken = "ghp_sweepTestToken0123456789"

func newGHFake(t *testing.T) *ghFake {
	f := &ghFake{t: t, issues: map[int]ghIssue{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/o/r", f.repo)
	mux.HandleFunc("GET /repos/o/r/pulls", f.listPulls)
	mux.HandleFunc("GET /repos/o/r/pulls/{n}", f.pull)
	mux.HandleFunc("GET /repos/o/r/issues/{n}", f.issue)
	mux.HandleFunc("GET /repos/o/r/commits/{sha}/pulls", f.pullsOfCommit)
	mux.HandleFunc("GET /repos/o/r/pulls/{n}/commits", f.pullCommits)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.calls = append(f.calls, r.URL.Path)
		fail := f.fail
		f.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+ghTestToken {
			ghError(w, http.StatusUnauthorized, "Bad credentials")
			return
		}
		if fail != nil {
			fail(w)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// options points a sweep at the fake, with a token that needs no lookup.
func (f *ghFake) options() *GitHubOptions {
	return &GitHubOptions{
		BaseURL: f.srv.URL + "/",
		Token:   func(context.Context, string) (string, error) { return ghTestToken, nil },
	}
}

func (f *ghFake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func (f *ghFake) set(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

func (f *ghFake) repo(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.repoMissing {
		ghError(w, http.StatusNotFound, "Not Found")
		return
	}
	ghJSON(w, map[string]any{"id": 1296269, "name": "r", "full_name": "o/r", "private": true,
		"owner": map[string]any{"login": "o", "id": 1}, "default_branch": "main", "has_issues": true})
}

func (f *ghFake) listPulls(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.repoMissing {
		ghError(w, http.StatusNotFound, "Not Found")
		return
	}
	out := []any{}
	for _, p := range f.pulls {
		if r.URL.Query().Get("head") == "o:"+p.Branch {
			out = append(out, prJSON(p, false))
		}
	}
	ghJSON(w, out)
}

func (f *ghFake) pull(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, _ := strconv.Atoi(r.PathValue("n"))
	for _, p := range f.pulls {
		if p.Number == n && !f.repoMissing {
			ghJSON(w, prJSON(p, true))
			return
		}
	}
	ghError(w, http.StatusNotFound, "Not Found")
}

func (f *ghFake) issue(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, _ := strconv.Atoi(r.PathValue("n"))
	is, ok := f.issues[n]
	switch {
	case !ok || f.repoMissing:
		ghError(w, http.StatusNotFound, "Not Found")
		return
	case is.Gone != "":
		ghError(w, http.StatusGone, is.Gone)
		return
	}
	labels := []any{}
	for _, l := range is.Labels {
		labels = append(labels, map[string]any{"id": 208045946, "name": l, "color": "0e8a16"})
	}
	body := map[string]any{"id": 1000 + n, "number": n, "title": "Issue " + strconv.Itoa(n),
		"state": is.State, "state_reason": nil, "labels": labels, "user": map[string]any{"login": "octocat", "id": 2}}
	if is.Reason != "" {
		body["state_reason"] = is.Reason
	}
	ghJSON(w, body)
}

// prJSON renders a pull request as the list (detail false) or get endpoint
// does: only the latter carries "merged".
func prJSON(p ghPR, detail bool) map[string]any {
	m := map[string]any{"id": 5000 + p.Number, "number": p.Number, "state": p.State, "title": "Work on " + p.Branch,
		"updated_at": "2026-02-20T10:00:00Z", "merged_at": nil, "body": "",
		"head": map[string]any{"label": "o:" + p.Branch, "ref": p.Branch}, "base": map[string]any{"label": "o:main", "ref": "main"}}
	if p.Merged {
		m["merged_at"] = "2026-02-20T10:00:00Z"
	}
	if detail {
		m["merged"] = p.Merged
	}
	return m
}

// pullsOfCommit answers "list pull requests associated with a commit":
// the merged pull request whose merge commit it is, as GitHub sends it.
func (f *ghFake) pullsOfCommit(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sha := r.PathValue("sha")
	out := []any{}
	if m, ok := f.merged[sha]; ok {
		pr := prJSON(ghPR{Number: m.Number, Branch: "feature", State: "closed", Merged: true}, false)
		pr["merge_commit_sha"] = sha
		pr["merged_at"] = "2026-03-01T12:00:00Z"
		out = append(out, pr)
	}
	ghJSON(w, out)
}

// pullCommits answers "list commits on a pull request" in GitHub's shape.
func (f *ghFake) pullCommits(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, _ := strconv.Atoi(r.PathValue("n"))
	for _, m := range f.merged {
		if m.Number != n {
			continue
		}
		out := []any{}
		for _, c := range m.Commits {
			out = append(out, map[string]any{
				"sha": c, "node_id": "C_kwDOABCD" + c[:8],
				"url":      "https://api.github.com/repos/o/r/commits/" + c,
				"html_url": "https://github.com/o/r/commit/" + c,
				"commit": map[string]any{
					"author":        map[string]any{"name": "t", "email": "t@example.invalid", "date": "2026-03-01T11:00:00Z"},
					"committer":     map[string]any{"name": "t", "email": "t@example.invalid", "date": "2026-03-01T11:00:00Z"},
					"message":       "a commit of the pull request",
					"tree":          map[string]any{"sha": "9c2f4a1b0c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f", "url": "https://api.github.com/repos/o/r/git/trees/9c2f4a1b0c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f"},
					"comment_count": 0,
					"verification":  map[string]any{"verified": false, "reason": "unsigned", "signature": nil, "payload": nil},
				},
				"author": map[string]any{"login": "o", "id": 1}, "committer": map[string]any{"login": "o", "id": 1},
				"parents": []any{},
			})
		}
		ghJSON(w, out)
		return
	}
	ghError(w, http.StatusNotFound, "Not Found")
}

func ghJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

func ghError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest", "status": strconv.Itoa(status)})
}

func serverError500(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write([]byte(`{"message":"Server Error"}`))
}

// rateLimited answers as GitHub does when the primary limit is spent.
func rateLimited(reset time.Time) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		h := w.Header()
		h.Set("X-RateLimit-Limit", "5000")
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Used", "5000")
		h.Set("X-RateLimit-Resource", "core")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
		ghError(w, http.StatusForbidden, "API rate limit exceeded for user ID 583231.")
	}
}

// ghRepo is newRepo with its origin on github.com.
func ghRepo(t *testing.T, origin string) (gitdir.Repo, *state.Store) {
	t.Helper()
	repo, st := newRepo(t)
	if out, err := exec.Command("git", "-C", repo.WorkTree, "remote", "add", "origin", origin).CombinedOutput(); err != nil {
		t.Fatalf("git remote add: %v\n%s", err, out)
	}
	return repo, st
}

// otherHostOwner is a live identity recorded on another machine: Unknown.
func otherHostOwner(t testing.TB) *proclive.Identity {
	t.Helper()
	id := aliveOwner(t)
	id.Host = "build-7.elsewhere.invalid"
	if v := proclive.Check(*id); v.Liveness != proclive.Unknown {
		t.Fatalf("other host's owner is %v (%s), want unknown", v.Liveness, v.Reason)
	}
	return id
}

// ghSession records a running session on branch whose last sign of life
// was at lastActive, optionally linked.
func ghSession(t *testing.T, st *state.Store, repo gitdir.Repo, id string, owner *proclive.Identity, branch string, lastActive time.Time, link *state.GitHubLink) {
	t.Helper()
	startTurn(t, st, repo, id, owner)
	_, err := st.Mutate(id, func(s *state.Session) error {
		s.Branch, s.GitHub = branch, link
		s.StartedAt, s.LastHookAt, s.LastTurnStartedAt = lastActive, lastActive, lastActive
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// storeFiles reads every session file of the store, live and ended.
func storeFiles(t *testing.T, st *state.Store) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, dir := range []string{"sessions", "ended"} {
		entries, err := os.ReadDir(filepath.Join(st.Dir(), dir))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(st.Dir(), dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[dir+"/"+e.Name()] = string(data)
		}
	}
	return files
}

func sameFiles(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("store files: %d before, %d after", len(before), len(after))
	}
	for name, data := range before {
		if after[name] != data {
			t.Fatalf("%s changed:\nbefore %s\nafter  %s", name, data, after[name])
		}
	}
}

func load(t *testing.T, st *state.Store, id string) *state.Session {
	t.Helper()
	s, err := st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func warningsWith(rep *Report, sub string) int {
	n := 0
	for _, w := range rep.Warnings {
		if strings.Contains(w, sub) {
			n++
		}
	}
	return n
}

const (
	origin     = "https://github.com/o/r.git"
	staleAfter = time.Hour
)

// past is long enough ago to be past staleAfter.
func past() time.Time { return time.Now().UTC().Add(-3 * time.Hour) }

// TestPlanGitHub covers the pure decision of what one GitHub answer does.
func TestPlanGitHub(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	old, recent := now.Add(-2*time.Hour), now.Add(-time.Minute)
	alive := proclive.Verdict{Liveness: proclive.Alive}
	dead := proclive.Verdict{Liveness: proclive.Dead}
	unknown := proclive.Verdict{Liveness: proclive.Unknown}
	merged := state.GitHubLink{Repo: "o/r", Host: "github.com", PR: 3, State: github.StatePRMerged, Note: "PR #3 merged"}
	endMerged := github.Decision{End: true, State: github.StatePRMerged, Note: merged.Note, Link: merged}
	retry := now.Add(time.Hour)
	limited := github.Decision{Err: github.ErrRateLimited, RetryAt: retry, Link: state.GitHubLink{Repo: "o/r", Host: "github.com", LastError: "limited"}}
	tests := []struct {
		name       string
		phase      state.Phase
		last       time.Time
		link       *state.GitHubLink
		v          proclive.Verdict
		d          github.Decision
		end, write bool
	}{
		{"unknown past stale ends", state.PhaseIdle, old, nil, unknown, endMerged, true, true},
		{"unknown active past stale ends", state.PhaseActive, old, nil, unknown, endMerged, true, true},
		{"unknown within stale annotates", state.PhaseIdle, recent, nil, unknown, endMerged, false, true},
		{"alive annotates only", state.PhaseActive, old, nil, alive, endMerged, false, true},
		{"dead annotates: local evidence ends it", state.PhaseIdle, old, nil, dead, endMerged, false, true},
		{"same view writes nothing", state.PhaseIdle, recent, &merged, alive, endMerged, false, false},
		{"same view past stale still ends", state.PhaseIdle, old, &merged, unknown, endMerged, true, true},
		{"ended is never touched", state.PhaseEnded, old, nil, unknown, endMerged, false, false},
		{"failure writes nothing", state.PhaseIdle, old, nil, unknown, github.Decision{Err: errors.New("500"), Link: state.GitHubLink{LastError: "500"}}, false, false},
		{"rate limit stores the retry time", state.PhaseIdle, old, &merged, unknown, limited, false, true},
		{"nothing known writes nothing", state.PhaseIdle, recent, nil, alive, github.Decision{Link: state.GitHubLink{Repo: "o/r", Host: "github.com"}}, false, false},
		{"no end decision past stale: stale applies", state.PhaseIdle, old, nil, unknown, github.Decision{Note: "issue #4 open", Link: state.GitHubLink{Repo: "o/r", Issue: 4, Note: "issue #4 open"}}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &state.Session{Phase: tt.phase, StartedAt: tt.last, LastHookAt: tt.last, GitHub: tt.link}
			p := planGitHub(s, tt.v, tt.d, now, time.Hour)
			if p.end != tt.end || p.write != tt.write {
				t.Fatalf("plan = end %v write %v, want end %v write %v", p.end, p.write, tt.end, tt.write)
			}
			if p.write && tt.d.Err != nil && !p.link.RetryAt.Equal(retry) {
				t.Fatalf("retry at %v, want %v", p.link.RetryAt, retry)
			}
			if p.write && tt.d.Err == nil && !p.link.RetryAt.IsZero() {
				t.Fatalf("an answer kept retry time %v", p.link.RetryAt)
			}
		})
	}
}

func TestRelink(t *testing.T) {
	seen := &state.GitHubLink{Repo: "o/r", Issue: 4, PR: 9, State: "pr-open", Note: "PR #9 open", LastError: "x", CheckedAt: time.Unix(1, 0), RetryAt: time.Unix(2, 0)}
	tests := []struct {
		name      string
		old       *state.GitHubLink
		issue, pr int
		want      state.GitHubLink
		changed   bool
	}{
		{"first link", nil, 12, 0, state.GitHubLink{Issue: 12}, true},
		{"same numbers", seen, 4, 9, *seen, false},
		{"pr kept when only the issue is given", seen, 4, 0, *seen, false},
		{"new issue drops the old view", seen, 5, 0, state.GitHubLink{Repo: "o/r", Issue: 5, PR: 9, RetryAt: time.Unix(2, 0)}, true},
		{"new pr", seen, 0, 10, state.GitHubLink{Repo: "o/r", Issue: 4, PR: 10, RetryAt: time.Unix(2, 0)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := relink(tt.old, tt.issue, tt.pr)
			if changed != tt.changed || got != tt.want {
				t.Fatalf("relink = %+v, %v; want %+v, %v", got, changed, tt.want, tt.changed)
			}
		})
	}
}

// TestGitHubMappingRowsEndToEnd drives every row of github.Map through a
// sweep, for a session whose owner is Unknown past the stale threshold:
// what ends up on disk.
func TestGitHubMappingRowsEndToEnd(t *testing.T) {
	tests := []struct {
		name       string
		branch     string
		link       *state.GitHubLink
		pulls      []ghPR
		issues     map[int]ghIssue
		wantReason string
		wantState  string
		wantNote   string
	}{
		{"PR merged", "feat-a", nil, []ghPR{{1, "feat-a", "closed", true}}, nil, state.EndGitHub, github.StatePRMerged, "PR #1 merged"},
		{"PR open", "feat-b", nil, []ghPR{{2, "feat-b", "open", false}}, nil, state.EndGitHub, github.StatePROpen, "PR #2 open"},
		{"PR closed unmerged, issue open", "issue-3-x", nil, []ghPR{{4, "issue-3-x", "closed", false}}, map[int]ghIssue{3: {State: "open"}}, state.EndGitHub, github.StatePRClosed, "PR #4 closed unmerged, issue #3 open"},
		{"issue closed as completed", "issue-5", nil, nil, map[int]ghIssue{5: {State: "closed", Reason: "completed"}}, state.EndGitHub, github.StateIssueDone, "issue #5 closed as completed"},
		{"open issue with a done label", "issue-6", nil, nil, map[int]ghIssue{6: {State: "open", Labels: []string{"Done"}}}, state.EndGitHub, github.StateIssueDone, `issue #6 labelled "Done"`},
		{"issue closed without a reason", "main", &state.GitHubLink{Issue: 7}, nil, map[int]ghIssue{7: {State: "closed"}}, state.EndGitHub, github.StateIssueDone, "issue #7 closed"},
		{"issue closed as not planned", "issue-8", nil, nil, map[int]ghIssue{8: {State: "closed", Reason: "not_planned"}}, state.EndGitHub, github.StateIssueCancelled, "issue #8 closed as not planned"},
		{"issue closed as duplicate", "issue-9", nil, nil, map[int]ghIssue{9: {State: "closed", Reason: "duplicate"}}, state.EndGitHub, github.StateIssueCancelled, "issue #9 closed as duplicate"},
		{"issue deleted (410)", "issue-10", nil, nil, map[int]ghIssue{10: {Gone: "This issue was deleted"}}, state.EndGitHub, github.StateIssueDeleted, "issue #10 deleted"},
		{"issue missing (404), repository readable", "issue-11", nil, nil, nil, state.EndGitHub, github.StateIssueUnavailable, "issue #11 not found"},
		{"issue open: stale applies", "issue-12", nil, nil, map[int]ghIssue{12: {State: "open"}}, state.EndStale, "", "issue #12 open"},
		{"issues disabled (410): stale applies", "issue-13", nil, nil, map[int]ghIssue{13: {Gone: "Issues are disabled for this repo"}}, state.EndStale, "", "issue #13: issues are disabled in o/r"},
		{"PR closed unmerged, no issue: stale applies", "feat-c", nil, []ghPR{{14, "feat-c", "closed", false}}, nil, state.EndStale, "", "PR #14 closed unmerged"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newGHFake(t)
			f.pulls = tt.pulls
			for n, is := range tt.issues {
				f.issues[n] = is
			}
			repo, st := ghRepo(t, origin)
			ghSession(t, st, repo, "row", otherHostOwner(t), tt.branch, past(), tt.link)

			rep, err := Run(repo, st, Options{StaleAfter: staleAfter, GitHub: f.options()})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Finalized) != 1 || rep.Finalized[0].Reason != tt.wantReason {
				t.Fatalf("finalized %+v, want one with reason %s; warnings %q", rep.Finalized, tt.wantReason, rep.Warnings)
			}
			s := load(t, st, "row")
			if s.Phase != state.PhaseEnded || s.EndReason != tt.wantReason || !s.Interrupted {
				t.Fatalf("on disk: phase %s, end_reason %q, interrupted %v", s.Phase, s.EndReason, s.Interrupted)
			}
			if s.GitHub == nil || s.GitHub.State != tt.wantState || s.GitHub.Note != tt.wantNote || s.GitHub.Repo != "o/r" || s.GitHub.Host != "github.com" {
				t.Fatalf("github on disk = %+v, want state %q note %q", s.GitHub, tt.wantState, tt.wantNote)
			}
			if len(s.Checkpoints) != 1 {
				t.Fatalf("checkpoints %v: the ended session's turn was not condensed", s.Checkpoints)
			}
		})
	}
}

// TestGitHubLivenessDecides: one merged PR, four owners. Only the session
// without local evidence past the threshold ends by GitHub; the dead one
// ends by its owner's death; the live ones are annotated. The shared branch
// is looked up once.
func TestGitHubLivenessDecides(t *testing.T) {
	f := newGHFake(t)
	f.pulls = []ghPR{{9, "issue-5-x", "closed", true}}
	repo, st := ghRepo(t, origin)
	ghSession(t, st, repo, "alive", aliveOwner(t), "issue-5-x", past(), nil)
	ghSession(t, st, repo, "dead", deadOwner(t), "issue-5-x", past(), nil)
	ghSession(t, st, repo, "unknown-fresh", otherHostOwner(t), "issue-5-x", time.Now().UTC(), nil)
	ghSession(t, st, repo, "unknown-stale", otherHostOwner(t), "issue-5-x", past(), nil)

	rep, err := Run(repo, st, Options{StaleAfter: staleAfter, GitHub: f.options()})
	if err != nil {
		t.Fatal(err)
	}
	if n := f.count(); n != 1 {
		t.Fatalf("%d GitHub calls, want 1 (the branch's PR list, cached)", n)
	}
	want := map[string]struct {
		phase  state.Phase
		reason string
	}{
		"alive":         {state.PhaseActive, ""},
		"unknown-fresh": {state.PhaseActive, ""},
		"unknown-stale": {state.PhaseEnded, state.EndGitHub},
		"dead":          {state.PhaseEnded, state.EndInterrupted},
	}
	for id, w := range want {
		s := load(t, st, id)
		if s.Phase != w.phase || s.EndReason != w.reason {
			t.Errorf("%s: phase %s end_reason %q, want %s %q", id, s.Phase, s.EndReason, w.phase, w.reason)
		}
		if s.GitHub == nil || s.GitHub.Note != "PR #9 merged" || s.GitHub.PR != 9 || s.GitHub.State != github.StatePRMerged {
			t.Errorf("%s: github %+v, want the merged PR recorded", id, s.GitHub)
		}
	}
	if len(rep.Finalized) != 2 || len(rep.Sessions) != 2 || len(rep.GitHub) != 4 {
		t.Fatalf("report: finalized %+v, %d live, %d github updates", rep.Finalized, len(rep.Sessions), len(rep.GitHub))
	}
	for _, c := range rep.Sessions {
		if r := MakeRow(c.Session, c.Verdict); r.GitHub != "PR #9 merged" {
			t.Errorf("status row of %s shows %q, want the annotation", c.Session.ID, r.GitHub)
		}
	}

	// The next sweep asks again about the live ones (one PR by number) and
	// writes nothing: the view did not change.
	before := storeFiles(t, st)
	rep, err = Run(repo, st, Options{StaleAfter: staleAfter, GitHub: f.options()})
	if err != nil || len(rep.Finalized) != 0 || len(rep.GitHub) != 0 {
		t.Fatalf("second sweep: %+v, %v", rep, err)
	}
	if n := f.count(); n != 2 {
		t.Fatalf("%d GitHub calls after the second sweep, want 2", n)
	}
	sameFiles(t, before, storeFiles(t, st))
}

// TestGitHubRealWorldCase is the case that prompted issue 8: a session
// still "running" locally, its owner gone or unknown, its issue closed with
// a done label and its PR merged. It ends, is no longer listed as running,
// and the next sweep neither reports it nor asks GitHub about it.
func TestGitHubRealWorldCase(t *testing.T) {
	for _, tt := range []struct {
		name       string
		owner      func(testing.TB) *proclive.Identity
		wantReason string
	}{
		{"owner gone", deadOwner, state.EndInterrupted},
		{"owner unknown", otherHostOwner, state.EndGitHub},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newGHFake(t)
			f.pulls = []ghPR{{43, "issue-42-fix-sweep", "closed", true}}
			f.issues[42] = ghIssue{State: "closed", Reason: "completed", Labels: []string{"status: done"}}
			repo, st := ghRepo(t, "git@github.com:o/r.git")
			ghSession(t, st, repo, "real", tt.owner(t), "issue-42-fix-sweep", past(), nil)
			if s := load(t, st, "real"); s.Phase != state.PhaseActive {
				t.Fatalf("set-up: phase %s, want active (running)", s.Phase)
			}

			rep, err := Run(repo, st, Options{StaleAfter: staleAfter, GitHub: f.options()})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Finalized) != 1 || rep.Finalized[0].Reason != tt.wantReason || len(rep.Sessions) != 0 {
				t.Fatalf("finalized %+v, %d still listed; want it ended (%s)", rep.Finalized, len(rep.Sessions), tt.wantReason)
			}
			s := load(t, st, "real")
			if s.EndReason != tt.wantReason || s.GitHub == nil || s.GitHub.State != github.StatePRMerged || s.GitHub.PR != 43 {
				t.Fatalf("on disk: end_reason %q github %+v", s.EndReason, s.GitHub)
			}
			if live, _, err := st.List(); err != nil || len(live) != 0 {
				t.Fatalf("still listed as running: %d, %v", len(live), err)
			}
			logged, err := os.ReadFile(filepath.Join(st.Dir(), "log", "tether.log"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{`"repo":"o/r"`, `"pr":43`, `"to":"ended"`, `"reason":"` + tt.wantReason + `"`} {
				if !strings.Contains(string(logged), want) {
					t.Errorf("log lacks %s:\n%s", want, logged)
				}
			}
			if strings.Contains(string(logged), ghTestToken) {
				t.Fatal("the token reached the log")
			}

			calls := f.count()
			rep, err = Run(repo, st, Options{StaleAfter: staleAfter, GitHub: f.options()})
			if err != nil || len(rep.Finalized) != 0 || len(rep.GitHub) != 0 || len(rep.Sessions) != 0 {
				t.Fatalf("next sweep reported it again: %+v, %v", rep, err)
			}
			if f.count() != calls {
				t.Fatalf("next sweep made %d GitHub calls for an ended session", f.count()-calls)
			}
		})
	}
}

// TestGitHubDownChangesNothing: 500s leave every file byte-identical, warn
// once, and stop the calls after the first.
func TestGitHubDownChangesNothing(t *testing.T) {
	f := newGHFake(t)
	f.pulls = []ghPR{{1, "feat-a", "closed", true}, {2, "feat-b", "closed", true}}
	f.fail = serverError500
	repo, st := ghRepo(t, origin)
	ghSession(t, st, repo, "alive", aliveOwner(t), "feat-a", past(), nil)
	ghSession(t, st, repo, "unknown", otherHostOwner(t), "feat-b", time.Now().UTC(), &state.GitHubLink{Issue: 3, Note: "issue #3 open"})
	before := storeFiles(t, st)

	rep, err := Run(repo, st, Options{StaleAfter: staleAfter, GitHub: f.options()})
	if err != nil {
		t.Fatal(err)
	}
	sameFiles(t, before, storeFiles(t, st))
	if len(rep.Finalized) != 0 || len(rep.GitHub) != 0 || len(rep.Sessions) != 2 {
		t.Fatalf("report: %+v", rep)
	}
	if n := warningsWith(rep, "github:"); n != 1 || warningsWith(rep, "500") != 1 {
		t.Fatalf("warnings %q, want one about the 500", rep.Warnings)
	}
	if n := f.count(); n != 1 {
		t.Fatalf("%d calls, want 1: no call after the first failure", n)
	}
}

// TestGitHubRateLimited: nothing ends, no call follows the limited one, the
// reset time is stored, and no call is made before it.
func TestGitHubRateLimited(t *testing.T) {
	f := newGHFake(t)
	f.pulls = []ghPR{{1, "feat-a", "closed", true}, {2, "feat-b", "open", false}, {3, "feat-c", "closed", true}}
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	f.fail = rateLimited(reset)
	repo, st := ghRepo(t, origin)
	ghSession(t, st, repo, "a", aliveOwner(t), "feat-a", past(), nil)
	ghSession(t, st, repo, "b", otherHostOwner(t), "feat-b", time.Now().UTC(), nil)
	ghSession(t, st, repo, "c", otherHostOwner(t), "feat-c", time.Now().UTC(), nil)

	rep, err := Run(repo, st, Options{StaleAfter: staleAfter, GitHub: f.options()})
	if err != nil {
		t.Fatal(err)
	}
	if n := f.count(); n != 1 {
		t.Fatalf("%d calls, want 1: none after the rate limit", n)
	}
	if len(rep.Finalized) != 0 || len(rep.GitHub) != 0 || warningsWith(rep, "rate limit") != 1 {
		t.Fatalf("report: finalized %+v github %+v warnings %q", rep.Finalized, rep.GitHub, rep.Warnings)
	}
	for _, id := range []string{"a", "b", "c"} {
		s := load(t, st, id)
		if s.Phase != state.PhaseActive || s.EndReason != "" || s.GitHub == nil || !s.GitHub.RetryAt.Equal(reset) || s.GitHub.State != "" || s.GitHub.Note != "" {
			t.Fatalf("%s: phase %s end %q github %+v, want unchanged with retry at %v", id, s.Phase, s.EndReason, s.GitHub, reset)
		}
	}

	// Before the reset: no call at all, nothing written.
	before := storeFiles(t, st)
	if _, err := Run(repo, st, Options{StaleAfter: staleAfter, GitHub: f.options()}); err != nil {
		t.Fatal(err)
	}
	if n := f.count(); n != 1 {
		t.Fatalf("%d calls before the reset, want none", n-1)
	}
	sameFiles(t, before, storeFiles(t, st))

	// After it, GitHub answers again and the retry time goes.
	f.set(func() { f.fail = nil })
	later := func() time.Time { return reset.Add(time.Minute) }
	rep, err = Run(repo, st, Options{GitHub: f.options(), Now: later})
	if err != nil || f.count() == 1 || len(rep.GitHub) != 3 {
		t.Fatalf("after the reset: %d calls, report %+v, %v", f.count()-1, rep, err)
	}
	if s := load(t, st, "b"); s.GitHub.RetryAt.IsZero() == false || s.GitHub.Note != "PR #2 open" {
		t.Fatalf("b after the reset: %+v", s.GitHub)
	}
}

// TestGitHubUnreadableRepository: a 404 from a repository this token
// cannot read says nothing about the work: nothing changes.
func TestGitHubUnreadableRepository(t *testing.T) {
	f := newGHFake(t)
	f.repoMissing = true
	repo, st := ghRepo(t, origin)
	ghSession(t, st, repo, "alive", aliveOwner(t), "issue-7", past(), nil)
	ghSession(t, st, repo, "unknown", otherHostOwner(t), "fix/8", time.Now().UTC(), nil)
	before := storeFiles(t, st)

	rep, err := Run(repo, st, Options{StaleAfter: staleAfter, GitHub: f.options()})
	if err != nil {
		t.Fatal(err)
	}
	sameFiles(t, before, storeFiles(t, st))
	if len(rep.Finalized) != 0 || len(rep.GitHub) != 0 || warningsWith(rep, "not readable") != 1 {
		t.Fatalf("report: finalized %+v github %+v warnings %q", rep.Finalized, rep.GitHub, rep.Warnings)
	}
}

// TestGitHubWithoutTokenMakesNoCalls: one clear warning, no call, no change.
func TestGitHubWithoutTokenMakesNoCalls(t *testing.T) {
	f := newGHFake(t)
	f.pulls = []ghPR{{1, "feat-a", "closed", true}}
	repo, st := ghRepo(t, origin)
	ghSession(t, st, repo, "a", aliveOwner(t), "feat-a", past(), nil)
	ghSession(t, st, repo, "b", otherHostOwner(t), "feat-a", time.Now().UTC(), nil)
	before := storeFiles(t, st)
	opts := f.options()
	opts.Token = func(ctx context.Context, host string) (string, error) {
		return github.Token(ctx, host, func(string) string { return "" }, func(context.Context, string) (string, error) {
			return "", errors.New("gh is not installed")
		})
	}

	rep, err := Run(repo, st, Options{StaleAfter: staleAfter, GitHub: opts})
	if err != nil {
		t.Fatal(err)
	}
	if warningsWith(rep, "no GitHub token for github.com") != 1 || len(rep.Warnings) != 1 {
		t.Fatalf("warnings %q, want one about the missing token", rep.Warnings)
	}
	if f.count() != 0 || len(rep.Sessions) != 2 {
		t.Fatalf("%d calls, %d sessions", f.count(), len(rep.Sessions))
	}
	sameFiles(t, before, storeFiles(t, st))
}

// TestGitHubNeedsAGitHubOrigin: no origin, or one elsewhere: a warning, no
// token lookup, no call.
func TestGitHubNeedsAGitHubOrigin(t *testing.T) {
	for _, tt := range []struct{ origin, warning string }{
		{"", "No such remote"},
		{"https://gitlab.com/o/r.git", "not a GitHub repository"},
	} {
		f := newGHFake(t)
		var repo gitdir.Repo
		var st *state.Store
		if tt.origin == "" {
			repo, st = newRepo(t)
		} else {
			repo, st = ghRepo(t, tt.origin)
		}
		ghSession(t, st, repo, "a", otherHostOwner(t), "feat-a", past(), nil)
		opts := f.options()
		opts.Token = func(context.Context, string) (string, error) {
			t.Error("token looked up for a remote that is not on GitHub")
			return "", nil
		}
		rep, err := Run(repo, st, Options{GitHub: opts})
		if err != nil || warningsWith(rep, tt.warning) != 1 || f.count() != 0 {
			t.Fatalf("origin %q: warnings %q, %d calls, %v", tt.origin, rep.Warnings, f.count(), err)
		}
	}
}

// TestGitHubRechecksUnderTheLock: what happens between the observation and
// the lock wins. A session ended by hand meanwhile is not touched (GitHub
// never revives nor re-ends); one revived by a live owner is annotated
// only; one relinked waits for the next sweep.
func TestGitHubRechecksUnderTheLock(t *testing.T) {
	for _, tt := range []struct {
		name     string
		meantime func(t *testing.T, st *state.Store, repo gitdir.Repo, id string)
		check    func(t *testing.T, s *state.Session)
	}{
		{"ended by hand", func(t *testing.T, st *state.Store, repo gitdir.Repo, id string) {
			if _, _, err := End(repo, st, id, "done", time.Now()); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, s *state.Session) {
			if s.EndReason != state.EndManual || s.GitHub != nil {
				t.Fatalf("end_reason %q github %+v, want manual and untouched", s.EndReason, s.GitHub)
			}
		}},
		{"revived by a live owner", func(t *testing.T, st *state.Store, repo gitdir.Repo, id string) {
			startTurn(t, st, repo, id, aliveOwner(t))
		}, func(t *testing.T, s *state.Session) {
			if s.Phase != state.PhaseActive || s.GitHub == nil || s.GitHub.State != github.StatePRMerged {
				t.Fatalf("phase %s github %+v, want active and annotated", s.Phase, s.GitHub)
			}
		}},
		{"relinked", func(t *testing.T, st *state.Store, _ gitdir.Repo, id string) {
			if _, _, err := Link(st, id, 77, 0); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, s *state.Session) {
			if s.Phase != state.PhaseEnded || s.EndReason != state.EndStale || s.GitHub.Issue != 77 || s.GitHub.State != "" {
				t.Fatalf("phase %s end %q github %+v, want stale with the new link unobserved", s.Phase, s.EndReason, s.GitHub)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newGHFake(t)
			f.pulls = []ghPR{{1, "feat-a", "closed", true}}
			repo, st := ghRepo(t, origin)
			ghSession(t, st, repo, "race", otherHostOwner(t), "feat-a", past(), nil)
			opts := f.options()
			reached := false
			opts.beforeApply = func(id string) {
				tt.meantime(t, st, repo, id)
				reached = true
			}
			rep, err := Run(repo, st, Options{StaleAfter: staleAfter, GitHub: opts})
			if err != nil || !reached {
				t.Fatalf("sweep: %v (window reached: %v)", err, reached)
			}
			for _, tr := range rep.Finalized {
				if tr.Reason == state.EndGitHub {
					t.Fatalf("finalized by github: %+v", tr)
				}
			}
			tt.check(t, load(t, st, "race"))
		})
	}
}

func TestGitHubDryRunChangesNothing(t *testing.T) {
	f := newGHFake(t)
	f.pulls = []ghPR{{1, "feat-a", "closed", true}}
	repo, st := ghRepo(t, origin)
	ghSession(t, st, repo, "stale", otherHostOwner(t), "feat-a", past(), nil)
	ghSession(t, st, repo, "alive", aliveOwner(t), "feat-a", past(), nil)
	before := storeFiles(t, st)
	rep, err := Run(repo, st, Options{StaleAfter: staleAfter, DryRun: true, GitHub: f.options()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Finalized) != 1 || rep.Finalized[0].ID != "stale" || rep.Finalized[0].Reason != state.EndGitHub || len(rep.GitHub) != 2 {
		t.Fatalf("dry run: finalized %+v github %+v", rep.Finalized, rep.GitHub)
	}
	sameFiles(t, before, storeFiles(t, st))
}

// TestLink records links under the lock, and the sweep uses them.
func TestLink(t *testing.T) {
	f := newGHFake(t)
	f.issues[21] = ghIssue{State: "closed", Reason: "completed"}
	repo, st := ghRepo(t, origin)
	ghSession(t, st, repo, "linked", otherHostOwner(t), "main", past(), nil)

	if _, _, err := Link(st, "nope", 1, 0); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("unknown session: %v, want ErrNotFound", err)
	}
	if _, err := st.Load("nope"); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("linking an unknown session created it: %v", err)
	}
	if _, _, err := Link(st, "linked", 0, 0); !errors.Is(err, ErrNoTarget) {
		t.Fatalf("no numbers: %v", err)
	}
	if _, _, err := Link(st, "linked", -1, 0); err == nil {
		t.Fatal("negative issue accepted")
	}
	l, changed, err := Link(st, "linked", 21, 0)
	if err != nil || !changed || l.Issue != 21 {
		t.Fatalf("link: %+v %v %v", l, changed, err)
	}
	before := storeFiles(t, st)
	if _, changed, err := Link(st, "linked", 21, 0); err != nil || changed {
		t.Fatalf("relink to the same issue: changed %v, %v", changed, err)
	}
	sameFiles(t, before, storeFiles(t, st))

	rep, err := Run(repo, st, Options{StaleAfter: staleAfter, GitHub: f.options()})
	if err != nil || len(rep.Finalized) != 1 {
		t.Fatalf("sweep: %+v, %v", rep, err)
	}
	if s := load(t, st, "linked"); s.EndReason != state.EndGitHub || s.GitHub.State != github.StateIssueDone {
		t.Fatalf("linked session: end %q github %+v", s.EndReason, s.GitHub)
	}
	f.set(func() {
		if got := fmt.Sprint(f.calls); got != "[/repos/o/r/pulls /repos/o/r/issues/21]" {
			t.Errorf("calls %s, want the branch's PR list and the linked issue", got)
		}
	})
}
