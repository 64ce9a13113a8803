package github

import (
	"regexp"
	"slices"
	"strings"
)

// closingRef matches GitHub's closing keywords followed by one reference:
// #N, owner/repo#N, or an issue URL. Each reference needs its own keyword,
// as on GitHub ("Fixes #1, fixes #2").
var closingRef = regexp.MustCompile(`(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)(?:\s*:\s*|\s+)` +
	`(?:#(\d+)|([A-Za-z0-9][A-Za-z0-9_.-]*)/([A-Za-z0-9_.-]+)#(\d+)|https?://[^/\s]+/([^/\s]+)/([^/\s]+)/issues/(\d+))\b`)

// ClosingIssues lists, in order of appearance and without duplicates, the
// issues of owner/repo that a pull request body closes through GitHub's
// keywords (close, closes, closed, fix, fixes, fixed, resolve, resolves,
// resolved). References to other repositories are left out: this package
// reconciles one repository.
func ClosingIssues(body, owner, repo string) []int {
	var out []int
	for _, m := range closingRef.FindAllStringSubmatch(body, -1) {
		num := m[1]
		switch {
		case m[4] != "":
			if !sameRepo(m[2], m[3], owner, repo) {
				continue
			}
			num = m[4]
		case m[7] != "":
			if !sameRepo(m[5], m[6], owner, repo) {
				continue
			}
			num = m[7]
		}
		n, ok := issueNumber(num)
		if !ok || slices.Contains(out, n) {
			continue
		}
		out = append(out, n)
	}
	return out
}

func sameRepo(o, r, owner, repo string) bool {
	return strings.EqualFold(o, owner) && strings.EqualFold(strings.TrimSuffix(r, ".git"), repo)
}
