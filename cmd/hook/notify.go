package main

import (
	"os"
	"os/exec"
	"strings"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/internal/detach"
	"github.com/tetherdev/tether/state"
)

// The changes the hook tells the user of, when git config tether.notify
// asks (the words of status --watch --json: a session began to wait,
// finished a turn, or ended with its turn cut short).
const (
	notifyWaiting = "waiting"
	notifyTurn    = "turn"
	notifyEnded   = "ended"
)

// notifyOf is the change a transition is worth telling the user of, or "":
// a wait that begins (not a signal of one under way), a turn that ends,
// a session that ends mid-turn. Pure.
func notifyOf(act state.Actions, newWait bool) string {
	switch {
	case act.BeginWait && newWait:
		return notifyWaiting
	case act.Finalize && act.Interrupted:
		return notifyEnded
	case act.AppendTurnEnd:
		return notifyTurn
	}
	return ""
}

// notify starts `tether-sweep notify CHANGE SESSION` detached in the
// worktree, the session as it is now on its stdin, which runs what
// tether.notify says, when it says anything: the agent waits neither for
// it nor for the command. Reading the setting costs the events that may
// notify a few small file reads.
func (h *hook) notify(st *state.Store, repo gitdir.Repo, change string, s *state.Session) {
	if change == "" || s == nil {
		return
	}
	session := s.ID
	if v, ok := gitdir.ConfigValue(repo, h.getenv, "tether", "notify"); !ok || strings.TrimSpace(v) == "" {
		return
	}
	bin := h.sweepBinary()
	if bin == "" {
		st.Logger().Warn("notify: tether-sweep not found next to tether-hook or on PATH", state.LogKeySession, session)
		return
	}
	data, err := s.MarshalJSON()
	if err != nil {
		st.Logger().Warn("notify: encode the session", state.LogKeySession, session, state.LogKeyError, err.Error())
		return
	}
	// A pipe written whole before the start: a session is a few KiB, far
	// below what a pipe holds, and nothing is left to copy once the hook
	// exits.
	r, w, err := os.Pipe()
	if err != nil {
		st.Logger().Warn("notify: pipe", state.LogKeySession, session, state.LogKeyError, err.Error())
		return
	}
	defer r.Close()
	_, err = w.Write(data)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	cmd := exec.Command(bin, "notify", change, session)
	cmd.Dir, cmd.Stdin = repo.WorkTree, r
	if cmd.Dir == "" {
		cmd.Dir = repo.CommonDir
	}
	if err == nil {
		err = detach.Start(cmd)
	}
	if err != nil {
		st.Logger().Warn("notify: start", state.LogKeySession, session, state.LogKeyError, err.Error())
		return
	}
	st.Logger().Info("notify started", state.LogKeySession, session, "change", change, "pid", cmd.Process.Pid)
	_ = cmd.Process.Release()
}
