package main

import (
	"os"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "git" && os.Args[2] == "post-commit" {
		postCommit(os.Getenv, os.Stderr)
		os.Exit(0)
	}
	h := &hook{
		args:        os.Args[1:],
		stdin:       os.Stdin,
		stdout:      os.Stdout,
		stderr:      os.Stderr,
		getenv:      os.Getenv,
		getwd:       os.Getwd,
		sweepBinary: sweepBinary,
	}
	h.run()
	os.Exit(0)
}
