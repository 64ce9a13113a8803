package main

import (
	"os/exec"
	"strconv"
	"strings"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/state"
)

// captureOn reads git config tether.snapshots: captures are on unless it
// says false (or no, off, 0).
func captureOn(repo gitdir.Repo, getenv func(string) string) bool {
	v, ok := gitdir.ConfigValue(repo, getenv, "tether", "snapshots")
	if !ok {
		return true
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "0":
		return false
	}
	return true
}

// captureStartedMsg is the log line of a capture started (tests wait for
// the pid it names before cleaning up, see internal/bgsweep).
const captureStartedMsg = "capture started"

// startCapture launches `tether-sweep snapshot` detached, to record the
// worktree at a turn's boundary (at: "start" or "end"), and returns at
// once: the agent never waits for the capture, which runs while the model
// thinks about the prompt, well before its first tool call.
func (h *hook) startCapture(st *state.Store, repo gitdir.Repo, session string, turn int, at string) {
	if repo.WorkTree == "" || !captureOn(repo, h.getenv) {
		return
	}
	bin := h.sweepBinary()
	if bin == "" {
		// Info: self-heal already warns of a missing tether-sweep.
		st.Logger().Info("capture: tether-sweep not found next to tether-hook or on PATH", state.LogKeySession, session)
		return
	}
	cmd := exec.Command(bin, "snapshot", "--session", session, "--turn", strconv.Itoa(turn), "--at", at)
	cmd.Dir = repo.WorkTree
	if err := startDetached(cmd); err != nil {
		st.Logger().Warn("capture: start", state.LogKeySession, session, state.LogKeyError, err.Error())
		return
	}
	st.Logger().Info(captureStartedMsg, state.LogKeySession, session, "turn", turn, "at", at, "pid", cmd.Process.Pid)
	_ = cmd.Process.Release()
}
