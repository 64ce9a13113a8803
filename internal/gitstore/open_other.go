//go:build !unix

package gitstore

// noPoll: Go's poller question is a Unix matter (see open_unix.go).
const noPoll = 0
