package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run tether-sweep in-process, and builds the real
// tether-hook binary once so scripts can drive it the way agents do.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"tether-sweep": func() {
			dir, _ := os.Getwd()
			a := &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, dir: dir, getenv: os.Getenv}
			os.Exit(a.main(os.Args[1:]))
		},
	})
}

// hookBin is the tether-hook binary built for the scripts, or "" when it
// could not be built (the scripts that need it then fail loudly).
func buildHook(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tether-hook")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/tetherdev/tether/cmd/hook")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build tether-hook: %v\n%s", err, out)
	}
	return bin
}

func TestScripts(t *testing.T) {
	hookDir := filepath.Dir(buildHook(t))
	testscript.Run(t, testscript.Params{
		Dir: "testdata",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", hookDir+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("GIT_AUTHOR_NAME", "t")
			env.Setenv("GIT_AUTHOR_EMAIL", "t@example.invalid")
			env.Setenv("GIT_COMMITTER_NAME", "t")
			env.Setenv("GIT_COMMITTER_EMAIL", "t@example.invalid")
			env.Setenv("NO_COLOR", "1")
			return nil
		},
	})
}
