// Command tether-hook is called by coding agents from their own hooks at
// session start, turn start, turn end and session end. It records the
// session, its phase and its owner process under the repository's git
// common dir, and gets out of the way: every failure of its own exits 0
// with one line on stderr and one in the log, and it never writes to stdout
// unless the agent's protocol asks for it.
//
// Usage: tether-hook <agent> [event] < payload
package main

import (
	"os"
)

func main() {
	h := &hook{
		args:   os.Args[1:],
		stdin:  os.Stdin,
		stdout: os.Stdout,
		stderr: os.Stderr,
		getenv: os.Getenv,
	}
	h.run()
	os.Exit(0)
}
