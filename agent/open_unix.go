//go:build unix

package agent

import "syscall"

// openNonblock opens a FIFO without waiting for a writer (and a terminal
// without making it ours), so that OpenTranscript can look at what it
// opened and refuse it.
const openNonblock = syscall.O_NONBLOCK | syscall.O_NOCTTY
