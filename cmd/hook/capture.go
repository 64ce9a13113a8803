package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/tetherdev/tether/agent"
	"github.com/tetherdev/tether/capture"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/internal/detach"
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

// startCapture starts `tether-hook capture` detached, to record the
// worktree at a turn's boundary (at: "start" or "end", reached at
// boundary), and returns at once: the agent never waits for the capture,
// which runs while the model thinks about the prompt, well before its
// first tool call. What changes in between is told apart by its time.
func (h *hook) startCapture(st *state.Store, repo gitdir.Repo, session string, turn int, at string, boundary time.Time) {
	if repo.WorkTree == "" || !captureOn(repo, h.getenv) {
		return
	}
	bin := h.self()
	if bin == "" {
		st.Logger().Info("capture: cannot find tether-hook's own binary", state.LogKeySession, session)
		return
	}
	cmd := exec.Command(bin, "capture", session, strconv.Itoa(turn), at, boundary.Format(time.RFC3339Nano))
	cmd.Dir = repo.WorkTree
	if err := detach.Start(cmd); err != nil {
		st.Logger().Warn("capture: start", state.LogKeySession, session, state.LogKeyError, err.Error())
		return
	}
	st.Logger().Info(captureStartedMsg, state.LogKeySession, session, "turn", turn, "at", at, "pid", cmd.Process.Pid)
	_ = cmd.Process.Release()
}

// selfBinary is this binary, "" when the system cannot say.
func selfBinary() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}

// captureMain is `tether-hook capture SESSION TURN start|end TIME`, which
// startCapture runs in the worktree to capture: it records the worktree
// for that boundary, reached at TIME (RFC 3339). It is the hook's own binary, not tether-sweep, for
// the capture to cost little more than git's own work: this one starts
// in a millisecond, with no git library to load.
func captureMain(args []string, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "tether-hook capture: "+format+"\n", a...)
		return 1
	}
	if len(args) != 4 {
		return fail("usage: tether-hook capture SESSION TURN start|end TIME")
	}
	session, at := args[0], args[2]
	turn, err := strconv.Atoi(args[1])
	boundary, terr := time.Parse(time.RFC3339Nano, args[3])
	switch {
	case terr != nil:
		return fail("time %q: want RFC 3339", args[3])
	case state.ValidateID(session) != nil:
		return fail("session: %v", state.ValidateID(session))
	case err != nil || turn < 1:
		return fail("turn %q: want 1 or more", args[1])
	case at != capture.Start && at != capture.End:
		return fail("%q: want start or end", at)
	}
	dir, err := os.Getwd()
	if err != nil {
		return fail("%v", err)
	}
	repo, err := gitdir.Find(dir)
	if err != nil {
		return fail("%v", err)
	}
	st, err := state.Open(repo.CommonDir, state.Options{Apply: agent.ApplySpooled})
	if err != nil {
		return fail("open store: %v", err)
	}
	defer st.Close()
	e, err := capture.New(repo, st).CaptureTurn(session, turn, at, boundary)
	if err != nil {
		st.Logger().Warn("capture failed", state.LogKeySession, session, "turn", turn, "at", at, state.LogKeyError, err.Error())
		return fail("turn %d %s: %v", turn, at, err)
	}
	st.Logger().Info("captured", state.LogKeySession, session, "turn", turn, "at", at, "tree", e.Tree, "late", len(e.Late))
	return 0
}
