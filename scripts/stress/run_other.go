//go:build !linux

package main

import (
	"fmt"
	"os"
	"runtime"
)

// run explains why there is nothing to do: the driver finds and kills
// hooks and sweeps through /proc, and freezes agents with SIGSTOP.
func run(config) int {
	fmt.Fprintf(os.Stderr, "stress: needs Linux (/proc); this is %s\n", runtime.GOOS)
	return 1
}
