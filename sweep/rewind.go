package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/tetherdev/tether/capture"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/snapshot"
	"github.com/tetherdev/tether/state"
)

// Rewound is what Rewind did, or with DryRun would do.
type Rewound struct {
	Session string            `json:"session"`
	Turn    int               `json:"turn"`
	Undo    bool              `json:"undo,omitempty"`
	Actions []snapshot.Action `json:"actions"`
	// Kept is the capture holding what the rewind overwrote, on the
	// session's capture ref: `rewind --undo` puts it back.
	Kept   string `json:"kept,omitempty"`
	DryRun bool   `json:"dry_run,omitempty"`
	// LeftAlone are the secret files (capture.Worktree.SecretPatterns)
	// rewind did not touch: those the captures hold (made before the file
	// counted as secret), and those of the worktree changed since the
	// turn started, which the captures never hold.
	LeftAlone []string `json:"left_alone,omitempty"`
	// Committed names, for each path whose change HEAD already holds, the
	// commit that made it: a rewind undoes it in the worktree only.
	Committed map[string]string `json:"committed,omitempty"`
}

// ChangedSinceError is a rewind refused because paths it would put back
// were changed after the turn, by someone else.
type ChangedSinceError struct {
	Turn  int
	Paths []string
}

func (e *ChangedSinceError) Error() string {
	return fmt.Sprintf("turn %d: refusing to rewind: changed since the turn, by someone else: %s", e.Turn, strings.Join(e.Paths, ", "))
}

// ErrTurnRunning refuses a rewind under an agent that is still at work.
var ErrTurnRunning = errors.New("the session is running a turn: rewind it once the turn is over, or end the session first")

// Rewind puts back the paths that turn (0: the last) of session id changed,
// as they were at the turn's start: from the captures of its start and end
// (an interrupted turn that has no capture after it: the worktree now).
// It touches no other path, refuses when one of those paths no longer
// holds what the turn left there, and keeps what it overwrites as a
// capture (capture.Rewind) that undo puts back. With undo, it reverses
// the session's last rewind instead, under the same rules.
func Rewind(repo gitdir.Repo, st *state.Store, id string, turn int, undo, dryRun bool) (*Rewound, error) {
	s, err := st.Load(id)
	if err != nil {
		return nil, err
	}
	if s.TurnRunning() && state.OwnerVerdict(s).Liveness != proclive.Dead {
		return nil, ErrTurnRunning
	}
	if s.Worktree != "" && s.Worktree != repo.WorkTree {
		if repo, err = gitdir.Find(s.Worktree); err != nil {
			return nil, fmt.Errorf("the session's worktree %s: %w", s.Worktree, err)
		}
	}
	reader, err := snapshot.OpenReader(repo.CommonDir)
	if err != nil {
		return nil, err
	}
	entries, err := reader.List(id)
	if err != nil {
		return nil, err
	}
	snaps := capture.New(repo, st)
	out := &Rewound{Session: id, Undo: undo, DryRun: dryRun, Actions: []snapshot.Action{}}

	// from: what the paths hold after the turn; to: what they go back to.
	var from, to string
	if undo {
		last := -1
		for i, e := range entries {
			if e.At == capture.Rewind || e.At == capture.Undo {
				last = i
			}
		}
		if last < 0 {
			return nil, errors.New("nothing to undo: it was never rewound")
		}
		e := entries[last]
		if e.At == capture.Undo {
			return nil, fmt.Errorf("nothing to undo: its last rewind (turn %d) is undone already", e.Turn)
		}
		out.Turn, from, to = e.Turn, e.Restored, e.Tree
	} else {
		if turn == 0 {
			turn = s.Turns
		}
		out.Turn = turn
		start, end, ok := snapshot.Pick(entries, turn)
		if !ok && !snapshot.Has(entries, turn, capture.Start) {
			return nil, fmt.Errorf("turn %d of session %s has no capture of its start (captures off, or they failed: see the log)", turn, id)
		}
		from, to = end.Tree, start.Tree
		if !ok {
			from = "" // interrupted, never looked at since: the worktree now
		}
		if out.LeftAlone, err = secretsChangedSince(snaps, start.Time); err != nil {
			return nil, err
		}
	}
	now, err := snaps.Capture()
	if err != nil {
		return nil, err
	}
	if from == "" {
		from = now
	}
	changes, err := reader.Diff(to, from)
	if err != nil {
		return nil, err
	}
	secret, err := secretMatcher(snaps)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range changes.Paths() {
		if secret(p) {
			out.LeftAlone = append(out.LeftAlone, p)
		} else {
			paths = append(paths, p)
		}
	}
	slices.Sort(out.LeftAlone)
	out.LeftAlone = slices.Compact(out.LeftAlone)
	files := make([]map[string]snapshot.File, 3)
	for i, tree := range []string{from, to, now} {
		if files[i], err = reader.Files(tree, paths); err != nil {
			return nil, err
		}
	}
	actions, conflicts := snapshot.Plan(paths, files[0], files[1], files[2])
	if len(conflicts) > 0 {
		return out, &ChangedSinceError{Turn: out.Turn, Paths: conflicts}
	}
	out.Actions = append(out.Actions, actions...)
	if !undo && len(actions) > 0 {
		if out.Committed, err = committed(repo, reader, actions, files[0]); err != nil {
			return nil, err
		}
	}
	if dryRun || len(actions) == 0 {
		return out, nil
	}
	// Kept before anything is written: from holds, on these paths, what
	// the worktree holds now.
	at := capture.Rewind
	if undo {
		at = capture.Undo
	}
	kept, err := snaps.Record(id, capture.Entry{Turn: out.Turn, At: at, Tree: from, Restored: to})
	if err != nil {
		return out, err
	}
	out.Kept = kept.Commit
	if err := snapshot.Apply(snaps, to, actions); err != nil {
		return out, err
	}
	st.Logger().Info("rewound", state.LogKeySession, id, "turn", out.Turn, "undo", undo, "paths", len(actions))
	return out, nil
}

// secretMatcher tells the paths (slash-separated) of secret files, by the
// patterns captures keep out, in gitignore's syntax: a path is secret
// when it or one of its directories matches.
func secretMatcher(w *capture.Worktree) (func(path string) bool, error) {
	patterns, err := w.SecretPatterns()
	if err != nil {
		return nil, err
	}
	var ps []gitignore.Pattern
	for _, p := range patterns {
		ps = append(ps, gitignore.ParsePattern(p, nil))
	}
	m := gitignore.NewMatcher(ps)
	return func(path string) bool {
		parts := strings.Split(path, "/")
		for i := 1; i <= len(parts); i++ {
			if m.Match(parts[:i], i < len(parts)) {
				return true
			}
		}
		return false
	}, nil
}

// secretsChangedSince lists the secret files of the worktree modified at
// or after since (a capture's time, in whole seconds): those the turn may
// have changed, which no capture holds and rewind leaves as they are.
func secretsChangedSince(w *capture.Worktree, since time.Time) ([]string, error) {
	if since.IsZero() {
		return nil, nil
	}
	files, err := w.SecretFiles()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range files {
		fi, err := os.Lstat(filepath.Join(w.Dir(), filepath.FromSlash(p)))
		if err == nil && !fi.ModTime().Before(since.Truncate(time.Second)) {
			out = append(out, p)
		}
	}
	return out, nil
}

// committed finds the commits that already hold the turn's change to the
// paths a rewind acts on (from: what the turn left at each).
func committed(repo gitdir.Repo, reader *snapshot.Reader, actions []snapshot.Action, from map[string]snapshot.File) (map[string]string, error) {
	head, _, err := gitdir.Head(repo.GitDir, repo.CommonDir)
	if err != nil || head == "" { // an unborn branch has nothing committed
		return nil, err
	}
	want := make(map[string]snapshot.File, len(actions))
	for _, a := range actions {
		want[a.Path] = from[a.Path]
	}
	in, err := reader.CommittedIn(head, want)
	if err != nil || len(in) == 0 {
		return nil, err
	}
	return in, nil
}
