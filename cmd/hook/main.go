package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// An agent may close the pipes it reads our answer and messages from.
	// Go dies of the SIGPIPE a write there raises (exit 141); ignored, the
	// write fails with EPIPE, which is one more failure of our own: logged,
	// and exit 0.
	signal.Ignore(syscall.SIGPIPE)
	if len(os.Args) == 3 && os.Args[1] == "git" && os.Args[2] == "post-commit" {
		postCommit(os.Getenv, os.Stderr)
		os.Exit(0)
	}
	if len(os.Args) >= 2 && os.Args[1] == "capture" {
		os.Exit(captureMain(os.Args[2:], os.Stderr))
	}
	h := &hook{
		args:        os.Args[1:],
		stdin:       os.Stdin,
		stdout:      os.Stdout,
		stderr:      os.Stderr,
		getenv:      os.Getenv,
		getwd:       os.Getwd,
		sweepBinary: sweepBinary,
		self:        selfBinary,
	}
	h.run()
	os.Exit(0)
}
