//go:build windows

package main

import (
	"fmt"
	"os"
	"os/exec"
)

// execSweep runs the sweep and waits for it; Windows has no exec.
func execSweep(bin string, args []string) error {
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("run %s: %w", bin, err)
	}
	return nil
}
