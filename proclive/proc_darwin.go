package proclive

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// sZomb is P_stat of a process that has exited but not been reaped.
const sZomb = 5

// reader reads processes through sysctl.
type reader struct{}

func newReader() (reader, error) { return reader{}, nil }

func (reader) proc(pid int) (procInfo, error) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	switch {
	case errors.Is(err, unix.EIO) || errors.Is(err, unix.ESRCH):
		// An empty answer (EIO from x/sys) means no such pid; kill confirms.
		return procInfo{}, absent(pid)
	case err != nil:
		return procInfo{}, fmt.Errorf("sysctl kern.proc.pid.%d: %w", pid, err)
	case int(k.Proc.P_pid) != pid:
		return procInfo{}, fmt.Errorf("sysctl kern.proc.pid.%d: names pid %d", pid, k.Proc.P_pid)
	}
	st := k.Proc.P_starttime
	if st.Sec < 0 || st.Usec < 0 {
		return procInfo{}, fmt.Errorf("sysctl kern.proc.pid.%d: bad start time", pid)
	}
	return procInfo{
		pid:    pid,
		ppid:   int(k.Eproc.Ppid),
		start:  uint64(st.Sec)*1e6 + uint64(st.Usec),
		name:   cString(k.Proc.P_comm[:]),
		zombie: k.Proc.P_stat == sZomb,
	}, nil
}

func (reader) argv(pid int) ([]string, error) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		// EINVAL covers both a vanished process and another user's: the walk
		// then judges by name.
		return nil, fmt.Errorf("sysctl kern.procargs2.%d: %w", pid, err)
	}
	return parseProcArgs2(b)
}

// verifyLeader: sysctl kern.proc.pid only knows processes, not threads.
func (reader) verifyLeader(procInfo) error { return nil }

// machine returns the boot session UUID; macOS has no PID namespaces.
func machine() (boot, pidns string) {
	boot, _ = unix.Sysctl("kern.bootsessionuuid") // empty when unreadable
	return boot, ""
}
