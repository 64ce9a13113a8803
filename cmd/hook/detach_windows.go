//go:build windows

package main

import (
	"os/exec"
	"syscall"
)

// detach starts the child without a console and in its own process group,
// so closing the agent's console does not take the sweep with it.
func detach(cmd *exec.Cmd) {
	const detachedProcess = 0x00000008
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess,
		HideWindow:    true,
	}
}
