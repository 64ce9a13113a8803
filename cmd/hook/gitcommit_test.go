package main

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// gateRepo is a real repository with an open store for the gate tests.
func gateRepo(t *testing.T) (gitdir.Repo, *state.Store) {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	repo, err := gitdir.Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(repo.CommonDir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return repo, st
}

func recordSession(t *testing.T, st *state.Store, id string, fn func(tx *state.Tx)) {
	t.Helper()
	if _, err := st.MutateTx(id, func(tx *state.Tx) error { fn(tx); return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestPostCommitGate(t *testing.T) {
	self, err := proclive.Self()
	if err != nil {
		t.Fatal(err)
	}
	exited := exec.Command("sleep", "60")
	if err := exited.Start(); err != nil {
		t.Fatal(err)
	}
	gone, err := proclive.Capture(exited.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	exited.Process.Kill()
	exited.Wait()
	elsewhere := self
	elsewhere.Host = "another-host"
	noEnv := func(string) string { return "" } // no global config: the test's repository decides
	now := time.Now()

	idle := func(owner proclive.Identity, worktree string) func(tx *state.Tx) {
		return func(tx *state.Tx) {
			s := tx.Session
			s.Agent, s.Phase, s.Owner, s.Worktree = "claude-code", state.PhaseIdle, &owner, worktree
			s.StartedAt, s.LastHookAt = now.Add(-3*time.Hour), now.Add(-3*time.Hour)
		}
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, repo gitdir.Repo, st *state.Store)
		want  bool
	}{
		{"empty store", func(*testing.T, gitdir.Repo, *state.Store) {}, false},
		{"live owner, nothing pending", func(t *testing.T, repo gitdir.Repo, st *state.Store) {
			recordSession(t, st, "a", idle(self, repo.WorkTree))
		}, false},
		{"turn pending in this worktree", func(t *testing.T, repo gitdir.Repo, st *state.Store) {
			recordSession(t, st, "a", func(tx *state.Tx) {
				idle(self, repo.WorkTree)(tx)
				tx.Session.Phase = state.PhaseActive
				tx.AppendTurn(state.TurnRecord{T: state.RecTurnStart, Turn: 1, At: now})
			})
		}, true},
		{"turn pending in another worktree", func(t *testing.T, repo gitdir.Repo, st *state.Store) {
			recordSession(t, st, "a", func(tx *state.Tx) {
				idle(self, "/elsewhere")(tx)
				tx.AppendTurn(state.TurnRecord{T: state.RecTurnStart, Turn: 1, At: now})
			})
		}, false},
		{"dead owner", func(t *testing.T, repo gitdir.Repo, st *state.Store) {
			recordSession(t, st, "a", idle(gone, "/elsewhere"))
		}, true},
		{"unknown owner, no stale policy", func(t *testing.T, repo gitdir.Repo, st *state.Store) {
			recordSession(t, st, "a", idle(elsewhere, repo.WorkTree))
		}, false},
		{"unknown owner past tether.staleAfter", func(t *testing.T, repo gitdir.Repo, st *state.Store) {
			recordSession(t, st, "a", idle(elsewhere, repo.WorkTree))
			if out, err := exec.Command("git", "-C", repo.WorkTree, "config", "tether.staleAfter", "1h").CombinedOutput(); err != nil {
				t.Fatalf("git config: %v\n%s", err, out)
			}
		}, true},
		{"unlinked checkpoint of this worktree", func(t *testing.T, repo gitdir.Repo, st *state.Store) {
			recordSession(t, st, "a", idle(self, repo.WorkTree))
			if err := st.SetMark(state.MarkUnlinked, "a"); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"unlinked checkpoint of another worktree", func(t *testing.T, repo gitdir.Repo, st *state.Store) {
			recordSession(t, st, "a", idle(self, "/elsewhere"))
			if err := st.SetMark(state.MarkUnlinked, "a"); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a corrupt state file", func(t *testing.T, repo gitdir.Repo, st *state.Store) {
			recordSession(t, st, "a", idle(self, repo.WorkTree))
			if err := os.WriteFile(st.Dir()+"/sessions/b.json", []byte("{not json"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo, st := gateRepo(t)
			tt.setup(t, repo, st)
			if got := sweepNeeded(st, repo, noEnv, now); got != tt.want {
				t.Fatalf("sweepNeeded = %v, want %v", got, tt.want)
			}
		})
	}
}
