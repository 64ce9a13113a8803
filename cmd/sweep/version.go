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

// version is this build's version and platform, for a bug report.
func version() string {
	bi, _ := debug.ReadBuildInfo()
	return fmt.Sprintf("%s %s/%s", buildVersion(bi), runtime.GOOS, runtime.GOARCH)
}

// buildVersion is what Go embedded of the build: the module's version
// (go install of a release, or the pseudo-version go build derives from the
// commit), else the commit and its date as the VCS stamp has them, else a
// plain statement that the build carries neither.
func buildVersion(bi *debug.BuildInfo) string {
	if bi == nil {
		return "unknown (built without module information)"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	if rev == "" {
		return "devel (no version stamped: build with scripts/install.sh)"
	}
	return fmt.Sprintf("devel %s (%s%s)", rev[:min(12, len(rev))], at, dirty)
}
