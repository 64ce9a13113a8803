//go:build !unix

package agent

// openNonblock: opening a file does not block here; pipes live outside
// the file system.
const openNonblock = 0
