package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/internal/detach"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// healEvery bounds how often a session start may launch a background sweep
// for one repository.
const healEvery = time.Minute

// throttleFile's mtime records when a hook last launched a sweep.
const throttleFile = "sweep.throttle"

// healLock serializes the throttle check of concurrent session starts, so
// two of them never both launch a sweep.
const healLock = "self-heal"

// healScan bounds what a session start looks at itself: sessions/ files
// (a state file and a turn log per session), so about 32 sessions. A
// repository with more hands the whole check to the background sweep,
// once a minute, so that a session start costs the same whatever the
// number of sessions (with 10,000 it took 0.65-1.4 s).
const healScan = 64

// selfHeal launches `tether-sweep run --quiet` in the background when a
// live session's owner is dead, or an ended session waits to be condensed,
// or there are more live sessions than healScan to look at, so stale state
// converges without anyone running the sweep by hand. It never waits for
// the sweep and never fails the hook.
func (h *hook) selfHeal(st *state.Store, repo gitdir.Repo) {
	// Through os.Root, as everything in the store: no symlink planted there
	// leads the stamp outside it.
	root, err := os.OpenRoot(st.Dir())
	if err != nil {
		st.Logger().Warn("self-heal: open store", state.LogKeyError, err.Error())
		return
	}
	defer root.Close()
	if throttled(root) {
		return // the cheap check first: most session starts end here
	}
	sessions, many, err := st.ListUpTo(healScan)
	if err != nil {
		st.Logger().Warn("self-heal: list sessions", state.LogKeyError, err.Error())
		return
	}
	if !many && !anyDead(sessions) {
		// Sessions ended by their agent still need their turns condensed.
		if ended, err := st.AnyMarked(state.MarkCondense); err != nil || !ended {
			return
		}
	}
	unlock, err := st.Lock(healLock)
	if err != nil {
		st.Logger().Warn("self-heal: throttle", state.LogKeyError, err.Error())
		return
	}
	defer unlock()
	if throttled(root) {
		return // another session start launched one meanwhile
	}
	// Stamped before looking for the binary: a missing tether-sweep is
	// reported once a minute, not at every session start.
	if err := stamp(root, time.Now()); err != nil {
		st.Logger().Warn("self-heal: throttle", state.LogKeyError, err.Error())
		return
	}
	bin := h.sweepBinary()
	if bin == "" {
		st.Logger().Warn("self-heal: tether-sweep not found next to tether-hook or on PATH")
		return
	}
	cmd := exec.Command(bin, "run", "--quiet")
	cmd.Dir = repo.WorkTree
	if err := detach.Start(cmd); err != nil {
		st.Logger().Warn("self-heal: start sweep", state.LogKeyError, err.Error())
		return
	}
	st.Logger().Info("self-heal: background sweep started", "pid", cmd.Process.Pid)
	_ = cmd.Process.Release()
}

// throttled reports whether a sweep was launched less than healEvery ago.
// A stamp from the future (the clock was set back) does not count, or it
// would hold healing off until the clock caught up.
func throttled(root *os.Root) bool {
	fi, err := root.Stat(throttleFile)
	if err != nil {
		return false
	}
	age := time.Since(fi.ModTime())
	return age >= 0 && age < healEvery
}

// stamp records that a sweep is launched now.
func stamp(root *os.Root, now time.Time) error {
	f, err := root.OpenFile(throttleFile, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return root.Chtimes(throttleFile, now, now)
}

func anyDead(sessions []*state.Session) bool {
	for _, s := range sessions {
		if state.OwnerVerdict(s).Liveness == proclive.Dead {
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
