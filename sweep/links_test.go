package sweep

import (
	"slices"
	"testing"
	"time"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/snapshot"
)

func TestContributed(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	wrote := func(paths ...string) *snapshot.Changes { return &snapshot.Changes{Added: paths} }
	turn := func(start, end int, ch *snapshot.Changes) checkpoint.Turn {
		return checkpoint.Turn{Turn: 1, StartedAt: at(start), EndedAt: at(end), Changes: ch}
	}
	commitOf := func(min int, paths ...string) snapshot.Commit {
		c := snapshot.Commit{Paths: map[string]bool{}, At: at(min)}
		for _, p := range paths {
			c.Paths[p] = true
		}
		return c
	}
	for _, tc := range []struct {
		name     string
		cp       checkpoint.Checkpoint
		commit   snapshot.Commit
		want     bool
		linkable bool
	}{
		{"wrote a path the commit holds", checkpoint.Checkpoint{Turns: []checkpoint.Turn{turn(0, 1, wrote("a.txt"))}}, commitOf(5, "a.txt"), true, true},
		{"wrote another path", checkpoint.Checkpoint{Turns: []checkpoint.Turn{turn(0, 1, wrote("b.txt"))}}, commitOf(5, "a.txt"), false, true},
		{"wrote nothing, commit after", checkpoint.Checkpoint{Turns: []checkpoint.Turn{turn(0, 1, &snapshot.Changes{})}}, commitOf(5, "a.txt"), false, false},
		{"changes unknown, commit after", checkpoint.Checkpoint{Turns: []checkpoint.Turn{turn(0, 1, nil)}}, commitOf(5, "a.txt"), false, false},
		{"commit made during a turn of unknown changes", checkpoint.Checkpoint{Turns: []checkpoint.Turn{turn(0, 10, nil)}}, commitOf(5, "x"), true, false},
		{"commit made during a turn that changed none of its paths (another writer's)", checkpoint.Checkpoint{Turns: []checkpoint.Turn{turn(0, 10, &snapshot.Changes{})}}, commitOf(5, "x"), false, false},
		{"commit made before the turn", checkpoint.Checkpoint{Turns: []checkpoint.Turn{turn(6, 10, nil)}}, commitOf(5, "x"), false, false},
		{"turn running, counted up to the commit: wrote a path it took", checkpoint.Checkpoint{Turns: []checkpoint.Turn{{Turn: 1, StartedAt: at(0), Running: true, Changes: &snapshot.Changes{Added: []string{"x"}, UpTo: "c"}}}}, commitOf(5, "x"), true, true},
		{"turn running, counted up to the commit: wrote none of its paths", checkpoint.Checkpoint{Turns: []checkpoint.Turn{{Turn: 1, StartedAt: at(0), Running: true, Changes: &snapshot.Changes{UpTo: "c"}}}}, commitOf(5, "x"), false, true},
		{"turn still running", checkpoint.Checkpoint{Turns: []checkpoint.Turn{{Turn: 1, StartedAt: at(0), Running: true}}}, commitOf(5, "x"), true, true},
		{"interrupted, session ended after the commit", checkpoint.Checkpoint{EndedAt: at(9), Turns: []checkpoint.Turn{{Turn: 1, StartedAt: at(0), Interrupted: true}}}, commitOf(5, "x"), true, false},
		{"interrupted, session ended before the commit", checkpoint.Checkpoint{EndedAt: at(3), Turns: []checkpoint.Turn{{Turn: 1, StartedAt: at(0), Interrupted: true}}}, commitOf(5, "x"), false, false},
		{"the second turn deleted the path", checkpoint.Checkpoint{Turns: []checkpoint.Turn{turn(0, 1, &snapshot.Changes{}), turn(2, 3, &snapshot.Changes{Deleted: []string{"old.txt"}})}}, commitOf(5, "old.txt"), true, true},
	} {
		if got := contributed(&tc.cp, tc.commit); got != tc.want {
			t.Errorf("%s: contributed = %v, want %v", tc.name, got, tc.want)
		}
		inWorkTree := func([]string) bool { return true }
		if got := linkable(&tc.cp, inWorkTree); got != tc.linkable {
			t.Errorf("%s: linkable = %v, want %v", tc.name, got, tc.linkable)
		}
	}
}

// A checkpoint waits for a commit only while the work tree holds its
// changes, or a turn runs; what the work tree is asked about is the
// paths its turns changed.
func TestLinkableWhileChangesAreInTheWorkTree(t *testing.T) {
	turns := []checkpoint.Turn{
		{Turn: 1, Changes: &snapshot.Changes{Added: []string{"a.txt"}}},
		{Turn: 2, Changes: &snapshot.Changes{Modified: []string{"b.txt"}, Deleted: []string{"c.txt"}}},
	}
	var asked []string
	for _, tc := range []struct {
		name      string
		cp        checkpoint.Checkpoint
		inTree    bool
		want      bool
		wantAsked []string
	}{
		{"changes still there", checkpoint.Checkpoint{Turns: turns}, true, true, []string{"a.txt", "b.txt", "c.txt"}},
		{"changes undone or committed elsewhere", checkpoint.Checkpoint{Turns: turns}, false, false, []string{"a.txt", "b.txt", "c.txt"}},
		{"a turn still running", checkpoint.Checkpoint{Turns: []checkpoint.Turn{{Turn: 1, Running: true}}}, false, true, nil},
		{"nothing changed: nothing to ask", checkpoint.Checkpoint{Turns: []checkpoint.Turn{{Turn: 1, Changes: &snapshot.Changes{}}}}, true, false, nil},
	} {
		asked = nil
		got := linkable(&tc.cp, func(paths []string) bool { asked = append(asked, paths...); return tc.inTree })
		if got != tc.want || !slices.Equal(asked, tc.wantAsked) {
			t.Errorf("%s: linkable = %v asking about %v; want %v asking about %v", tc.name, got, asked, tc.want, tc.wantAsked)
		}
	}
}
