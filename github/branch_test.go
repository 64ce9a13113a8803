package github

import (
	"strconv"
	"strings"
	"testing"
)

func TestIssueFromBranch(t *testing.T) {
	cases := []struct {
		branch string
		want   int // 0: no issue
	}{
		{"issue-123", 123},
		{"issue_123", 123},
		{"issue123", 123},
		{"issue#123", 123},
		{"Issue-123-Fix-Login", 123},
		{"issues-123", 123},
		{"issues/123", 123},
		{"issue/123-fix", 123},
		{"gh-123", 123},
		{"GH-123", 123},
		{"gh123", 123},
		{"123-fix-x", 123},
		{"123_fix_x", 123},
		{"feature/issue-45-x", 45},
		{"feature/45-x", 45},
		{"fix/45", 45},
		{"hotfix/45", 45},
		{"users/alice/gh-9-cleanup", 9},
		{"refs/heads/issue-7", 7},
		{"42-answer/issue-7", 7}, // an explicit word wins over a leading number
		{"fix-issue-8-and-issue-9", 8},
		{"issue-9999999", 9999999},

		{"", 0},
		{"main", 0},
		{"HEAD", 0},
		{"v1.2.3", 0},
		{"release-2024", 0},
		{"release/2024", 0},
		{"release/1.2", 0},
		{"2024-01-31", 0},
		{"2024-01-31-cleanup", 0},
		{"20240131-cleanup", 0}, // a date, beyond any issue number
		{"issue-10000000", 0},
		{"1.2-fix", 0},
		{"hotfix/1.2.3", 0},
		{"gh-pages", 0},
		{"issue-0", 0},
		{"issue-007", 0},
		{"issue-12.5", 0},
		{"issues", 0},
		{"ghost-12", 0},
		{"dependabot/npm_and_yarn/lodash-4.17.21", 0},
		{"renovate/node-18.x", 0},
		{"renovate/actions-checkout-4", 0},
		{"JIRA-123", 0},
		{"feature/login", 0},
		{"2fa-support", 0},
		{"123", 0}, // a bare number could be anything
	}
	for _, tc := range cases {
		n, ok := IssueFromBranch(tc.branch)
		if n != tc.want || ok != (tc.want != 0) {
			t.Errorf("IssueFromBranch(%q) = %d, %v; want %d", tc.branch, n, ok, tc.want)
		}
	}
}

// FuzzIssueFromBranch: a found issue number is in range and written in the
// branch name as such.
func FuzzIssueFromBranch(f *testing.F) {
	for _, s := range []string{"issue-123", "feature/issue-45-x", "123-fix", "v1.2.3", "release-2024", "fix/9", "gh#1", "issues/issue-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, branch string) {
		n, ok := IssueFromBranch(branch)
		if !ok {
			if n != 0 {
				t.Fatalf("IssueFromBranch(%q) = %d without ok", branch, n)
			}
			return
		}
		if n < 1 || n > maxIssueNumber || !strings.Contains(branch, strconv.Itoa(n)) {
			t.Fatalf("IssueFromBranch(%q) = %d", branch, n)
		}
	})
}
