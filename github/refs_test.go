package github

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestClosingIssues(t *testing.T) {
	cases := []struct {
		body string
		want []int
	}{
		{"Fixes #12", []int{12}},
		{"fixes #12", []int{12}},
		{"This PR closes #3.", []int{3}},
		{"Closed #3, resolved #4 and fixed #5", []int{3, 4, 5}},
		{"close #1\nfix #2\nresolve #3\nresolves #4\nCLOSES #5", []int{1, 2, 3, 4, 5}},
		{"Fixes: #8", []int{8}},
		{"Fixes #8\nAlso fixes #8", []int{8}},
		{"Resolves acme/widgets#21", []int{21}},
		{"Resolves ACME/Widgets#21", []int{21}},
		{"Fixes acme/other#21", nil},
		{"Fixes https://github.com/acme/widgets/issues/34", []int{34}},
		{"Fixes https://github.com/acme/other/issues/34", nil},
		{"Fixes https://github.com/acme/widgets/pull/34", nil},
		{"Fixes #1 and #2", []int{1}}, // each reference needs its own keyword
		{"Related to #12", nil},
		{"See #12; this prefixes #13", nil},
		{"Fixes#12", nil},
		{"Fixes #0", nil},
		{"Fixes #12abc", nil},
		{"", nil},
	}
	for _, tc := range cases {
		if got := ClosingIssues(tc.body, "acme", "widgets"); !slices.Equal(got, tc.want) {
			t.Errorf("ClosingIssues(%q) = %v, want %v", tc.body, got, tc.want)
		}
	}
}

// FuzzClosingIssues: every number returned is a distinct valid issue number
// written in the body.
func FuzzClosingIssues(f *testing.F) {
	for _, s := range []string{"Fixes #12", "Closes acme/widgets#3, fixes https://github.com/acme/widgets/issues/4", "resolve: #9 fix #9", "fixes #"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got := ClosingIssues(body, "acme", "widgets")
		for i, n := range got {
			if n < 1 || n > maxIssueNumber || !strings.Contains(body, strconv.Itoa(n)) || slices.Contains(got[:i], n) {
				t.Fatalf("ClosingIssues(%q) = %v", body, got)
			}
		}
	})
}
