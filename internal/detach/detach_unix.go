//go:build !windows

package detach

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
)

// Start starts cmd in its own session, so the agent's terminal and
// process group never reach it, holding none of the descriptors the hook
// inherited: an agent waits for its hook's pipes to close, and a sweep
// holding one would keep it waiting.
func Start(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	closeInheritedOnExec()
	return cmd.Start()
}

// fallbackMaxFD bounds the descriptors marked where they cannot be listed.
const fallbackMaxFD = 1024

// closeInheritedOnExec marks every descriptor above stderr close-on-exec.
// Go opens its own that way, but whatever the agent leaked to the hook
// would otherwise pass on to the child.
func closeInheritedOnExec() {
	if runtime.GOOS == "linux" {
		if names, err := readDirNames("/proc/self/fd"); err == nil {
			for _, name := range names {
				if fd, err := strconv.Atoi(name); err == nil && fd > 2 {
					syscall.CloseOnExec(fd)
				}
			}
			return
		}
	}
	for fd := 3; fd < fallbackMaxFD; fd++ {
		syscall.CloseOnExec(fd) // EBADF for the unused ones: nothing to do
	}
}

func readDirNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}
