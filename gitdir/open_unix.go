//go:build unix

package gitdir

import (
	"os"
	"syscall"
)

// readFlags opens without blocking, so a FIFO planted where git keeps a
// small file (a .git in a shared directory above the work tree) cannot
// hang the hook; readSmall then refuses anything but a regular file.
const readFlags = os.O_RDONLY | syscall.O_NONBLOCK
