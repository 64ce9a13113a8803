package main

import (
	"strings"
	"testing"

	"github.com/tetherdev/tether/snapshot"
)

// A turn's changes read git-status style; the paths its captures found
// written past a boundary are marked ? and said not to count.
func TestPrintChanges(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changes *snapshot.Changes
		want    string
	}{
		{"unknown", nil, ""},
		{"none", &snapshot.Changes{}, "    changed no files\n"},
		{"some", &snapshot.Changes{Added: []string{"b"}, Modified: []string{"a"}, Deleted: []string{"c"}}, "    M a\n    A b\n    D c\n"},
		{"late only", &snapshot.Changes{Late: []string{"user.txt"}},
			"    ? user.txt\n    (? written as the turn began or ended, before tether looked: not counted as the turn's)\n"},
		{"late among the turn's", &snapshot.Changes{Added: []string{"agent.txt"}, Late: []string{"b.txt"}},
			"    A agent.txt\n    ? b.txt\n    (? written as the turn began or ended, before tether looked: not counted as the turn's)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			printChanges(&b, tc.changes, true)
			if b.String() != tc.want {
				t.Errorf("printChanges:\n%s\nwant:\n%s", b.String(), tc.want)
			}
		})
	}
}
