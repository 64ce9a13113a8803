//go:build freebsd && (amd64 || arm64)

package proclive

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// reader reads processes through sysctl.
type reader struct{}

func newReader() (reader, error) { return reader{}, nil }

func (reader) proc(pid int) (procInfo, error) {
	// The kernel reports ki_start as the start's uptime plus the current
	// kern.boottime, which moves when the clock is stepped. Reading boottime
	// around the record and retrying until it held still recovers the
	// uptime-based start exactly.
	for range 3 {
		before, err := unix.SysctlTimeval("kern.boottime")
		if err != nil {
			return procInfo{}, fmt.Errorf("sysctl kern.boottime: %w", err)
		}
		b, err := unix.SysctlRaw("kern.proc.pid", pid)
		switch {
		case errors.Is(err, unix.ESRCH) || (err == nil && len(b) == 0):
			return procInfo{}, absent(pid)
		case err != nil:
			return procInfo{}, fmt.Errorf("sysctl kern.proc.pid.%d: %w", pid, err)
		}
		after, err := unix.SysctlTimeval("kern.boottime")
		if err != nil {
			return procInfo{}, fmt.Errorf("sysctl kern.boottime: %w", err)
		}
		if *before != *after {
			continue
		}
		k, err := decodeKinfoProc(b)
		if err != nil {
			return procInfo{}, fmt.Errorf("sysctl kern.proc.pid.%d: %w", pid, err)
		}
		if k.pid != pid {
			return procInfo{}, fmt.Errorf("sysctl kern.proc.pid.%d: names pid %d", pid, k.pid)
		}
		start := k.startUsec - (int64(before.Sec)*1e6 + int64(before.Usec))
		if start < 0 {
			return procInfo{}, fmt.Errorf("sysctl kern.proc.pid.%d: started before boot", pid)
		}
		return procInfo{
			pid:    pid,
			ppid:   k.ppid,
			start:  uint64(start),
			name:   k.comm,
			zombie: k.stat == kiStatZombie,
		}, nil
	}
	return procInfo{}, fmt.Errorf("read pid %d: kern.boottime kept moving", pid)
}

func (reader) argv(pid int) ([]string, error) {
	b, err := unix.SysctlRaw("kern.proc.args", pid)
	if errors.Is(err, unix.ESRCH) {
		return nil, fmt.Errorf("pid %d: %w", pid, errGone)
	}
	if err != nil {
		return nil, fmt.Errorf("sysctl kern.proc.args.%d: %w", pid, err)
	}
	return splitNUL(b), nil
}

// verifyLeader: sysctl kern.proc.pid only knows processes, not threads.
func (reader) verifyLeader(procInfo) error { return nil }

// machine: no boot ID (see the package doc) and no PID namespaces.
func machine() (boot, pidns string) { return "", "" }
