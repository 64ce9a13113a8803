//go:build !unix

package state

// noPoll: Go's poller question is a Unix matter (see open_unix.go).
const noPoll = 0
