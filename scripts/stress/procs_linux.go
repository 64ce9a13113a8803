package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// proc is a process seen in /proc.
type proc struct {
	pid  int
	argv []string
}

// boringAfter: a process whose command line was of no interest this long
// is not read again. The processes the driver hunts exec their binary
// within a millisecond of being forked, so nothing older can become one.
const boringAfter = 50 * time.Millisecond

// scanner finds processes by their executable path in /proc, reading only
// the command lines of processes it has not already dismissed, so it can
// run every few milliseconds.
type scanner struct {
	boring map[int]time.Time // PID -> when it was first seen of no interest
}

func newScanner() *scanner { return &scanner{boring: map[int]time.Time{}} }

// scan returns the processes whose argv[0] is one of bins.
func (s *scanner) scan(bins ...string) []proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	now := time.Now()
	present := make(map[int]bool, len(ents))
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		present[pid] = true
		if since, ok := s.boring[pid]; ok && now.Sub(since) > boringAfter {
			continue
		}
		argv := cmdline(pid)
		if len(argv) > 0 && slices.Contains(bins, argv[0]) {
			out = append(out, proc{pid: pid, argv: argv})
			delete(s.boring, pid)
			continue
		}
		if _, ok := s.boring[pid]; !ok {
			s.boring[pid] = now
		}
	}
	for pid := range s.boring {
		if !present[pid] {
			delete(s.boring, pid) // gone: the PID may come back as anything
		}
	}
	return out
}

func cmdline(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil
	}
	return parseCmdline(b)
}

// target pins a process found by a scan: a pidfd keeps referring to that
// process even if it exits and its PID is reused before the kill.
type target struct {
	fd int
}

// pin opens a pidfd for pid and checks that it still runs bin (the PID
// could have been reused between the scan and the open).
func pin(pid int, bin string) (*target, bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, false
	}
	if argv := cmdline(pid); len(argv) == 0 || argv[0] != bin {
		unix.Close(fd)
		return nil, false
	}
	return &target{fd: fd}, true
}

// kill sends SIGKILL; false when the process had already exited.
func (t *target) kill() bool {
	err := unix.PidfdSendSignal(t.fd, unix.SIGKILL, nil, 0)
	unix.Close(t.fd)
	return err == nil
}

// checkPidfd fails early on kernels without pidfds (before Linux 5.3),
// where the driver could not kill safely.
func checkPidfd() error {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return fmt.Errorf("pidfd_open: %w (the stress driver needs Linux 5.3 or later)", err)
	}
	return unix.Close(fd)
}

// lockHolders returns the PIDs holding a flock on path, from /proc/locks.
func lockHolders(path string) []int {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nil
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return nil
	}
	return flockHolders(b, st.Ino)
}

// busy lists the processes that keep the scratch directory busy: hooks,
// sweeps (wherever they were started from, detached ones included) and
// git or shells working under it.
func busy(work string, bins ...string) []string {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return []string{"/proc: " + err.Error()}
	}
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		argv := cmdline(pid)
		if len(argv) == 0 || stopped(pid) {
			continue
		}
		mine := slices.Contains(bins, argv[0])
		if !mine {
			cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
			mine = err == nil && (cwd == work || strings.HasPrefix(cwd, work+string(filepath.Separator)))
		}
		if mine {
			out = append(out, fmt.Sprintf("%d %s", pid, strings.Join(argv, " ")))
		}
	}
	return out
}

// stopped reports whether pid is stopped (state T), as the frozen agents
// are.
func stopped(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't')
}

// sessionBusy reports whether a process still works for the session:
// hooks and commits of an earlier agent process of it, orphaned by a kill,
// carry the stand-in's CLAUDE_CODE_SESSION_ID in their environment. A new
// agent process of the session must wait for them, or a late SessionEnd of
// the dead one could rightly end the session under the live one.
func sessionBusy(session string) bool {
	want := []byte("\x00CLAUDE_CODE_SESSION_ID=" + session + "\x00")
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(append([]byte{0}, env...), want) {
			return true
		}
	}
	return false
}
