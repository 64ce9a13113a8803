//go:build linux || darwin || (freebsd && (amd64 || arm64))

package proclive

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// absent explains a process the OS would not describe: kill(pid, 0) tells
// one that is gone (ESRCH) from one hidden from this user (EPERM, as under
// Linux hidepid), which must stay Unknown.
func absent(pid int) error {
	if pid <= 0 {
		// kill(0) and kill(-1) address groups of processes, not one.
		return fmt.Errorf("pid %d: not a process id", pid)
	}
	switch err := unix.Kill(pid, 0); {
	case errors.Is(err, unix.ESRCH):
		return fmt.Errorf("pid %d: %w", pid, errGone)
	case errors.Is(err, unix.EPERM):
		return fmt.Errorf("pid %d exists but is hidden from this user", pid)
	case err == nil:
		return fmt.Errorf("pid %d exists but cannot be inspected", pid)
	default:
		return fmt.Errorf("signal 0 to pid %d: %w", pid, err)
	}
}
