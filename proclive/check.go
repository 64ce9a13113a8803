package proclive

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// errGone marks a process confirmed absent (ESRCH or the OS equivalent), as
// opposed to one that could not be looked at.
var errGone = errors.New("no such process")

// ErrUnsupported is returned where this platform cannot inspect processes.
var ErrUnsupported = errors.New("process inspection is not supported on this platform")

// procInfo is what the per-OS code reads about one process.
type procInfo struct {
	pid, ppid int
	start     uint64 // per-OS start fingerprint, ordered within one boot
	name      string
	zombie    bool // exited but not yet reaped (Windows: exited, handle still open)
	threads   int  // live threads of the thread group (Linux), 0 where unknown
}

// presence is whether a process was found at the recorded PID.
type presence int

const (
	presenceUnknown presence = iota // could not look: permission, hidepid, unreadable /proc, unsupported
	presenceGone                    // confirmed: no process has this PID
	presenceFound                   // a process (perhaps a zombie) has this PID
)

// observation is everything Check saw: the checker's own machine and what
// now lives at the recorded PID.
type observation struct {
	OS, Host, Boot, PIDNS string // the checker's; Host, Boot, PIDNS empty when unreadable or not applicable
	Presence              presence
	Detail                string // why Presence is unknown
	Start                 uint64 // fingerprint of the process found
	Zombie                bool
	Threads               int
}

// decide is the liveness verdict for a recorded identity given what the
// checker observed. It returns Dead only on proof; anything it cannot
// decide is Unknown.
func decide(rec Identity, obs observation) Verdict {
	unknown := func(format string, args ...any) Verdict {
		return Verdict{Unknown, fmt.Sprintf(format, args...)}
	}
	dead := func(format string, args ...any) Verdict {
		return Verdict{Dead, fmt.Sprintf(format, args...)}
	}
	switch {
	case rec.OS != obs.OS:
		return unknown("captured on %q, checked on %q", rec.OS, obs.OS)
	case rec.Host == "" || obs.Host == "":
		return unknown("host name unknown")
	case rec.Host != obs.Host:
		return unknown("other host %s", rec.Host)
	case rec.Boot != obs.Boot && rec.Boot != "" && obs.Boot != "":
		// Same host, new kernel: every process of the old boot is gone.
		return dead("host rebooted since the capture")
	case rec.Boot != "" && obs.Boot == "":
		return unknown("boot id unreadable")
	case rec.Boot == "" && obs.Boot != "":
		return unknown("no boot id recorded")
	case rec.PIDNS != obs.PIDNS:
		// The PID means another process, or nothing, in another namespace.
		return unknown("other pid namespace %s", rec.PIDNS)
	case rec.PID <= 0:
		return unknown("no valid pid recorded")
	}
	switch obs.Presence {
	case presenceGone:
		return dead("pid %d no longer exists", rec.PID)
	case presenceUnknown:
		return unknown("%s", obs.Detail)
	}
	if obs.Start != rec.Start {
		return dead("pid %d was reused by another process", rec.PID)
	}
	// A zombie leader whose other threads still run is a live program.
	if obs.Zombie && obs.Threads <= 1 {
		return dead("pid %d exited (zombie, not yet reaped)", rec.PID)
	}
	return Verdict{Alive, fmt.Sprintf("pid %d running", rec.PID)}
}

// Check reports whether the process id names is still running.
func Check(id Identity) Verdict {
	return decide(id, observe(id.PID))
}

// observe gathers the facts decide needs about this machine and pid.
func observe(pid int) observation {
	boot, pidns := machine()
	host, _ := os.Hostname() // unreadable host name: decide says Unknown
	obs := observation{OS: runtime.GOOS, Host: host, Boot: boot, PIDNS: pidns}
	if pid <= 0 {
		obs.Detail = "no valid pid recorded"
		return obs
	}
	r, err := newReader()
	if err != nil {
		obs.Detail = err.Error()
		return obs
	}
	p, err := r.proc(pid)
	switch {
	case errors.Is(err, errGone):
		obs.Presence = presenceGone
	case err != nil:
		obs.Detail = err.Error()
	default:
		obs.Presence = presenceFound
		obs.Start, obs.Zombie, obs.Threads = p.start, p.zombie, p.threads
	}
	return obs
}

// Capture records the identity of the running process pid.
func Capture(pid int) (Identity, error) {
	if pid <= 0 {
		return Identity{}, fmt.Errorf("capture pid %d: not a valid pid", pid)
	}
	r, err := newReader()
	if err != nil {
		return Identity{}, fmt.Errorf("capture pid %d: %w", pid, err)
	}
	p, err := r.proc(pid)
	if err != nil {
		return Identity{}, fmt.Errorf("capture pid %d: %w", pid, err)
	}
	if p.zombie && p.threads <= 1 {
		return Identity{}, fmt.Errorf("capture pid %d: process has exited", pid)
	}
	if err := r.verifyLeader(p); err != nil {
		return Identity{}, fmt.Errorf("capture pid %d: %w", pid, err)
	}
	return identify(p), nil
}

// Args is the command line of the running process pid (on Windows, as
// the C runtime splits it); [ErrUnsupported] where it cannot be read.
func Args(pid int) ([]string, error) {
	r, err := newReader()
	if err != nil {
		return nil, fmt.Errorf("args of pid %d: %w", pid, err)
	}
	args, err := r.argv(pid)
	if err != nil {
		return nil, fmt.Errorf("args of pid %d: %w", pid, err)
	}
	return args, nil
}

// Self captures the calling process.
func Self() (Identity, error) {
	return Capture(os.Getpid())
}

// identify completes what was read about p with this machine's identity.
func identify(p procInfo) Identity {
	boot, pidns := machine()
	host, _ := os.Hostname() // recorded empty; Check then says Unknown rather than guess
	return Identity{
		OS:    runtime.GOOS,
		PID:   p.pid,
		Start: p.start,
		Boot:  boot,
		Host:  host,
		PIDNS: pidns,
		Name:  p.name,
	}
}
