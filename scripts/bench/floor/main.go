// Command floor is the benchmark floor for tether-hook: a Go binary that
// reads its stdin and exits, as the cheapest possible hook would. With
// -append FILE it also appends what it read to FILE and fsyncs it, as the
// cheapest hook that keeps a durable record would.
package main

import (
	"flag"
	"io"
	"os"
)

func main() {
	appendTo := flag.String("append", "", "append stdin to this file and fsync it")
	flag.Parse()
	data, _ := io.ReadAll(os.Stdin)
	if *appendTo == "" {
		return
	}
	f, err := os.OpenFile(*appendTo, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		os.Exit(1)
	}
	if _, err := f.Write(append(data, '\n')); err != nil || f.Sync() != nil || f.Close() != nil {
		os.Exit(1)
	}
}
