package github

import (
	"strconv"
	"strings"
)

// maxIssueNumber bounds what is read as an issue number. The busiest GitHub
// repositories are in the hundreds of thousands; the bound keeps dates such
// as 20240131 from being taken for issues.
const maxIssueNumber = 9_999_999

// issueWords introduce an issue number inside a segment: issue-12, gh_12,
// issue12, issue#12.
var issueWords = []string{"issues", "issue", "gh"}

// issueDirs name a branch directory whose next segment may be a bare issue
// number: issues/12, fix/12.
var issueDirs = map[string]bool{
	"issue": true, "issues": true, "gh": true,
	"fix": true, "bug": true, "bugfix": true, "hotfix": true, "feature": true, "feat": true,
}

// IssueFromBranch reads the issue number a branch name refers to, by
// convention: issue-123, gh-123, issue123, feature/issue-45-x, issues/123,
// fix/123, 123-fix-x. A number alone or followed by more numbers (v1.2.3,
// release-2024, 2024-01-31) is not an issue reference. Explicit words win
// over a leading number; otherwise the leftmost match wins.
func IssueFromBranch(branch string) (int, bool) {
	segs := strings.Split(strings.TrimPrefix(branch, "refs/heads/"), "/")
	for _, seg := range segs {
		toks := splitTokens(seg)
		for i, tok := range toks {
			low := strings.ToLower(tok)
			for _, w := range issueWords {
				rest, found := strings.CutPrefix(low, w)
				if !found {
					continue
				}
				if rest == "" && i+1 < len(toks) {
					if n, ok := issueNumber(toks[i+1]); ok {
						return n, true
					}
				}
				if n, ok := issueNumber(strings.TrimPrefix(rest, "#")); ok {
					return n, true
				}
				break // "issues" matched; do not retry it as "issue"+"s"
			}
		}
	}
	for i := 0; i+1 < len(segs); i++ {
		if issueDirs[strings.ToLower(segs[i])] {
			if n, ok := issueNumber(segs[i+1]); ok {
				return n, true
			}
		}
	}
	for _, seg := range segs {
		toks := splitTokens(seg)
		if len(toks) < 2 || !startsWithLetter(toks[1]) {
			continue
		}
		if n, ok := issueNumber(toks[0]); ok {
			return n, true
		}
	}
	return 0, false
}

// splitTokens splits a branch segment at '-' and '_'.
func splitTokens(seg string) []string {
	return strings.FieldsFunc(seg, func(r rune) bool { return r == '-' || r == '_' })
}

func startsWithLetter(s string) bool {
	return s != "" && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z')
}

// issueNumber parses a plain decimal issue number: digits only, no leading
// zero, within maxIssueNumber.
func issueNumber(s string) (int, bool) {
	if s == "" || len(s) > 7 || s[0] == '0' || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxIssueNumber {
		return 0, false
	}
	return n, true
}
