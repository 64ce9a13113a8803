package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies enforces DESIGN.md's rule for the hook: the standard
// library, golang.org/x/sys and tether's proclive, state, agent, gitdir,
// capture, internal/jsontext and internal/detach (standard library only,
// which tether-sweep shares) packages, nothing else — on every platform it
// is built for.
func TestDependencies(t *testing.T) {
	const module = "github.com/tetherdev/tether/"
	allowed := func(pkg string) bool {
		for _, p := range []string{"golang.org/x/sys", module + "proclive", module + "state", module + "agent", module + "gitdir", module + "capture", module + "internal/jsontext", module + "internal/detach", module + "cmd/hook"} {
			if pkg == p || strings.HasPrefix(pkg, p+"/") {
				return true
			}
		}
		return false
	}
	for _, goos := range []string{"linux", "darwin", "windows", "freebsd"} {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", ".")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps (GOOS=%s): %v", goos, err)
		}
		n := 0
		for line := range strings.Lines(string(out)) {
			pkg, std, _ := strings.Cut(strings.TrimSpace(line), " ")
			n++
			if strings.Contains(pkg, "go-git") || strings.Contains(pkg, "go-github") {
				t.Errorf("GOOS=%s: the hook depends on %s", goos, pkg)
				continue
			}
			if std != "true" && !allowed(pkg) {
				t.Errorf("GOOS=%s: the hook depends on %s, outside what it may import", goos, pkg)
			}
		}
		if n < 10 {
			t.Fatalf("GOOS=%s: go list -deps listed only %d packages:\n%s", goos, n, out)
		}
	}
}
