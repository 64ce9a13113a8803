//go:build !windows

package main

import (
	"fmt"
	"os"
	"syscall"
)

// execSweep replaces this process with the sweep: git waits for one
// process, not two.
func execSweep(bin string, args []string) error {
	if err := syscall.Exec(bin, append([]string{bin}, args...), os.Environ()); err != nil {
		return fmt.Errorf("exec %s: %w", bin, err)
	}
	return nil
}
