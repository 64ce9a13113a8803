package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "print the version",
		Example: "  tether-sweep version\n  tether-sweep --version",
		GroupID: "setup",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintf(a.stdout, "tether-sweep %s\n", version())
			return nil
		},
	}
}

// version is this build's module version and platform.
func version() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	return fmt.Sprintf("%s %s/%s", v, runtime.GOOS, runtime.GOARCH)
}
