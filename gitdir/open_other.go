//go:build !unix

package gitdir

import "os"

// readFlags: opening a file cannot block on these systems.
const readFlags = os.O_RDONLY
