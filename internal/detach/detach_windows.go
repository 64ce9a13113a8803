//go:build windows

package detach

import (
	"os/exec"
	"syscall"
)

// Start starts cmd without a console and in its own process group,
// so closing the agent's console does not take the sweep with it. Go passes
// a child only the handles it is given, so nothing else is inherited.
func Start(cmd *exec.Cmd) error {
	const detachedProcess = 0x00000008
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess,
		HideWindow:    true,
	}
	return cmd.Start()
}
