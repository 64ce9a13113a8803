package snapshot

import (
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/tetherdev/tether/capture"
)

func TestPick(t *testing.T) {
	e := func(turn int, at, tree string) capture.Entry { return capture.Entry{Turn: turn, At: at, Tree: tree} }
	entries := []capture.Entry{
		e(1, capture.Start, "s1"), e(1, capture.End, "e1"), e(1, capture.End, "e1-late"),
		e(2, capture.Start, "s2"), // cut short by turn 3
		e(3, capture.Start, "s3"), e(3, capture.Swept, "w3"),
		e(4, capture.Start, "s4"), // still running, or never looked at
		e(6, capture.End, "e6"),   // its start was never captured
	}
	for _, tc := range []struct {
		turn       int
		start, end string
		ok         bool
	}{
		{1, "s1", "e1", true},
		{2, "s2", "s3", true},
		{3, "s3", "s4", true}, // the next turn's start comes before a later look
		{4, "", "", false},
		{5, "", "", false},
		{6, "", "", false},
	} {
		start, end, ok := Pick(entries, tc.turn)
		if ok != tc.ok || ok && (start.Tree != tc.start || end.Tree != tc.end) {
			t.Errorf("Pick(turn %d) = %q, %q, %v; want %q, %q, %v", tc.turn, start.Tree, end.Tree, ok, tc.start, tc.end, tc.ok)
		}
	}
	// An interrupted last turn ends where the sweep found it.
	if _, end, ok := Pick([]capture.Entry{e(1, capture.Start, "s"), e(1, capture.Swept, "w")}, 1); !ok || end.Tree != "w" {
		t.Errorf("Pick of an interrupted turn = %q, %v; want w", end.Tree, ok)
	}
}

func TestUnsure(t *testing.T) {
	for _, tc := range []struct {
		name          string
		changes       Changes
		before, after []string
		want          Changes
	}{
		{"no capture was late", Changes{Added: []string{"a"}}, nil, nil, Changes{Added: []string{"a"}}},
		{"written after the turn ended: not the turn's", Changes{Added: []string{"a", "other"}, Modified: []string{"m"}, Deleted: []string{"d"}}, nil, []string{"other", "m", "d"},
			Changes{Added: []string{"a"}, Modified: []string{}, Deleted: []string{}, Late: []string{"d", "m", "other"}}},
		{"written after the turn began, and again in it: the turn's", Changes{Modified: []string{"m"}}, []string{"m", "early"}, nil,
			Changes{Modified: []string{"m"}, Late: []string{"early"}}},
		{"late at both ends, listed once", Changes{Modified: []string{"m"}}, []string{"m"}, []string{"m"},
			Changes{Modified: []string{}, Late: []string{"m"}}},
		{"a late path the turn did not change", Changes{}, []string{"x"}, []string{"y"}, Changes{Late: []string{"x", "y"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.changes
			c.Unsure(tc.before, tc.after)
			if !slices.Equal(c.Added, tc.want.Added) || !slices.Equal(c.Modified, tc.want.Modified) ||
				!slices.Equal(c.Deleted, tc.want.Deleted) || !slices.Equal(c.Late, tc.want.Late) {
				t.Errorf("Unsure(%q, %q) = %+v, want %+v", tc.before, tc.after, c, tc.want)
			}
			if slices.ContainsFunc(c.Paths(), func(p string) bool { return slices.Contains(tc.after, p) }) {
				t.Errorf("the turn's paths %q hold one written after it ended", c.Paths())
			}
		})
	}
}

func TestPlan(t *testing.T) {
	h := func(c byte) File { return File{Hash: plumbing.Hash{c}, Mode: filemode.Regular} }
	none := File{}
	// from: after the turn; to: at its start; now: the worktree.
	from := map[string]File{"edited": h(2), "created": h(3), "deleted": none, "back": h(5), "theirs": h(6), "gone-since": h(7)}
	to := map[string]File{"edited": h(1), "created": none, "deleted": h(4), "back": h(5), "theirs": h(1), "gone-since": h(1)}
	now := map[string]File{"edited": h(2), "created": h(3), "deleted": none, "back": h(5), "theirs": h(9), "gone-since": none}
	paths := []string{"back", "created", "deleted", "edited", "gone-since", "theirs"}
	actions, conflicts := Plan(paths, from, to, now)
	want := []Action{{"created", "remove"}, {"deleted", "recreate"}, {"edited", "restore"}}
	if !slices.Equal(actions, want) {
		t.Errorf("actions = %v, want %v", actions, want)
	}
	if !slices.Equal(conflicts, []string{"gone-since", "theirs"}) {
		t.Errorf("conflicts = %v, want gone-since and theirs", conflicts)
	}
	// A mode change alone is a change.
	exec := File{Hash: plumbing.Hash{1}, Mode: filemode.Executable}
	if a, c := Plan([]string{"x"}, map[string]File{"x": exec}, map[string]File{"x": h(1)}, map[string]File{"x": exec}); len(c) != 0 || !slices.Equal(a, []Action{{"x", "restore"}}) {
		t.Errorf("mode change: %v, %v", a, c)
	}
}
