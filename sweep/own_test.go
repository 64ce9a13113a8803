package sweep

import (
	"slices"
	"testing"
	"time"

	"github.com/tetherdev/tether/agent"
	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/snapshot"
	"github.com/tetherdev/tether/state"
)

// A turn keeps what its own agent changed: what its file tools wrote;
// with a shell run, the rest the captures saw too (shared when another
// session worked there); nothing else. A transcript that cannot tell
// leaves the captures to decide. A relative path starts at the agent's
// working directory, the worktree when unknown.
func TestOwnChanges(t *testing.T) {
	const wt = "/repo"
	for _, tc := range []struct {
		name        string
		w           agent.ToolWrites
		told, other bool
		want        []string
		shared      []string
		cwd         string
	}{
		{"its tool wrote a.txt, someone else b.txt", agent.ToolWrites{Paths: []string{"/repo/a.txt"}}, true, true, []string{"a.txt"}, nil, ""},
		{"wrote nothing, ran nothing", agent.ToolWrites{}, true, true, nil, nil, ""},
		{"a relative path", agent.ToolWrites{Paths: []string{"a.txt"}}, true, false, []string{"a.txt"}, nil, ""},
		{"a relative path from the agent's directory", agent.ToolWrites{Paths: []string{"a.txt", "../b.txt"}}, true, false, []string{"b.txt"}, nil, "/repo/sub"},
		{"a relative path from the worktree's root", agent.ToolWrites{Paths: []string{"a.txt"}}, true, false, []string{"a.txt"}, nil, "/repo"},
		{"a relative path out of it", agent.ToolWrites{Paths: []string{"../b.txt"}}, true, false, nil, nil, "/repo"},
		{"a path outside the worktree", agent.ToolWrites{Paths: []string{"/elsewhere/a.txt", "/repo/../a.txt"}}, true, false, nil, nil, ""},
		{"ran a shell, alone", agent.ToolWrites{Shell: true}, true, false, []string{"a.txt", "b.txt"}, nil, ""},
		{"ran a shell, another session there", agent.ToolWrites{Paths: []string{"/repo/a.txt"}, Shell: true}, true, true, []string{"a.txt", "b.txt"}, []string{"b.txt"}, ""},
		{"transcript cannot tell, alone", agent.ToolWrites{}, false, false, []string{"a.txt", "b.txt"}, nil, ""},
		{"transcript cannot tell, another session there", agent.ToolWrites{}, false, true, []string{"a.txt", "b.txt"}, []string{"a.txt", "b.txt"}, ""},
	} {
		ch := &snapshot.Changes{Added: []string{"a.txt"}, Modified: []string{"b.txt"}}
		ownChanges(ch, tc.w, tc.told, tc.other, wt, tc.cwd)
		if got := ch.Paths(); !slices.Equal(got, tc.want) || !slices.Equal(ch.Shared, tc.shared) {
			t.Errorf("%s: paths %q shared %q, want %q shared %q", tc.name, got, ch.Shared, tc.want, tc.shared)
		}
	}
}

// A turn shares its worktree with another session only if that session
// was there while the turn ran: not one that ended before the turn began
// (its record stays until cleaned), nor one that started after it ended.
func TestSharing(t *testing.T) {
	at := func(min int) time.Time { return time.Date(2026, 11, 28, 9, min, 0, 0, time.UTC) }
	s := &state.Session{ID: "s", Worktree: "/repo"}
	turn := &checkpoint.Turn{StartedAt: at(10), EndedAt: at(20)}
	running := &checkpoint.Turn{StartedAt: at(10)}
	for _, tc := range []struct {
		name  string
		other state.Session
		turn  *checkpoint.Turn
		want  bool
	}{
		{"live all along", state.Session{StartedAt: at(0)}, turn, true},
		{"started while it ran", state.Session{StartedAt: at(15)}, turn, true},
		{"ended while it ran", state.Session{StartedAt: at(0), EndedAt: at(15)}, turn, true},
		{"ended before it began", state.Session{StartedAt: at(0), EndedAt: at(5)}, turn, false},
		{"started after it ended", state.Session{StartedAt: at(25)}, turn, false},
		{"started after a running turn began", state.Session{StartedAt: at(25)}, running, true},
		{"start unknown", state.Session{}, turn, true},
		{"another worktree", state.Session{StartedAt: at(0), Worktree: "/other"}, turn, false},
	} {
		o := tc.other
		o.ID = "o"
		if o.Worktree == "" {
			o.Worktree = s.Worktree
		}
		if got := sharing(s, tc.turn, []*state.Session{s, &o}); got != tc.want {
			t.Errorf("%s: sharing = %v, want %v", tc.name, got, tc.want)
		}
	}
}
