package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// healEvery bounds how often a session start may launch a background sweep
// for one repository.
const healEvery = time.Minute

// throttleFile's mtime records when a hook last launched a sweep.
const throttleFile = "sweep.throttle"

// selfHeal launches `tether-sweep run --quiet` in the background when a
// live session's owner is dead, so stale state converges without anyone
// running the sweep by hand. It never waits for the sweep and never fails
// the hook.
func (h *hook) selfHeal(st *state.Store, repo gitdir.Repo) {
	throttle := filepath.Join(st.Dir(), throttleFile)
	if fi, err := os.Stat(throttle); err == nil && time.Since(fi.ModTime()) < healEvery {
		return
	}
	sessions, _, err := st.List()
	if err != nil || !anyDead(sessions) {
		return
	}
	if err := os.WriteFile(throttle, nil, 0o600); err != nil {
		st.Logger().Warn("self-heal throttle", "err", err.Error())
		return
	}
	bin := sweepBinary()
	if bin == "" {
		st.Logger().Warn("self-heal: tether-sweep not found next to tether-hook or on PATH")
		return
	}
	cmd := exec.Command(bin, "run", "--quiet")
	cmd.Dir = repo.WorkTree
	detach(cmd) // own session, no terminal, no inherited descriptors
	if err := cmd.Start(); err != nil {
		st.Logger().Warn("self-heal: start sweep", "err", err.Error())
		return
	}
	st.Logger().Info("self-heal: background sweep started", "pid", cmd.Process.Pid)
	_ = cmd.Process.Release()
}

func anyDead(sessions []*state.Session) bool {
	for _, s := range sessions {
		if s.Owner != nil && proclive.Check(*s.Owner).Liveness == proclive.Dead {
			return true
		}
	}
	return false
}

// sweepBinary finds tether-sweep beside this binary first, so an install
// that never touched PATH still heals, then on PATH.
func sweepBinary() string {
	name := "tether-sweep"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	return p
}
