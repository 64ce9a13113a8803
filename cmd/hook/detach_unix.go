//go:build !windows

package main

import (
	"os/exec"
	"syscall"
)

// detach starts the child in its own session so the agent's terminal and
// process group never reach it; Go already closes every other descriptor.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
