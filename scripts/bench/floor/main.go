// Command floor is the benchmark floor for tether-hook: a Go binary that
// reads its stdin and exits, as the cheapest possible hook would.
package main

import (
	"io"
	"os"
)

func main() {
	_, _ = io.Copy(io.Discard, os.Stdin)
}
