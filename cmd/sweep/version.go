package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

func cmdVersion(a *app, args []string) error {
	if len(args) > 0 {
		return usagef("version takes no arguments")
	}
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	fmt.Fprintf(a.stdout, "tether-sweep %s %s/%s\n", v, runtime.GOOS, runtime.GOARCH)
	return nil
}
