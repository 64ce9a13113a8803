package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tetherdev/tether/internal/bgsweep"
)

// TestMain lets testscript run tether-sweep in-process (and as a real
// executable on the scripts' PATH, for git hooks to call).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"tether-sweep": func() {
			dir, _ := os.Getwd()
			a := &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, dir: dir, getenv: os.Getenv}
			os.Exit(a.main(os.Args[1:]))
		},
	})
}

// buildTools builds the real tether-hook, and the stand-in agent as
// `claude`, once for all scripts; and in tools/real, both of tether's
// binaries as scripts/install.sh installs them, for the scripts that
// install tether somewhere of their own ($TETHER_BIN).
func buildTools(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, pkg := range map[string]string{
		"tether-hook":       "github.com/tetherdev/tether/cmd/hook",
		"claude":            "github.com/tetherdev/tether/internal/standin",
		"real/tether-hook":  "github.com/tetherdev/tether/cmd/hook",
		"real/tether-sweep": "github.com/tetherdev/tether/cmd/sweep",
	} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, out)
		}
	}
	return dir
}

func TestScripts(t *testing.T) {
	tools := buildTools(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", tools+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("TOOLS", tools)
			env.Setenv("TETHER_BIN", filepath.Join(tools, "real"))
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("GIT_AUTHOR_NAME", "t")
			env.Setenv("GIT_AUTHOR_EMAIL", "t@example.invalid")
			env.Setenv("GIT_COMMITTER_NAME", "t")
			env.Setenv("GIT_COMMITTER_EMAIL", "t@example.invalid")
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("NO_COLOR", "1")
			// A commit waits for its post-commit sweep up to a bound (1s by
			// default), then lets it go on detached; the scripts read what
			// it did right after the commit, so they wait for it however
			// slow the machine (testdata/commit_wait.txtar sets the bound).
			if err := os.WriteFile(filepath.Join(env.WorkDir, ".gitconfig"), []byte("[tether]\n\tcommitWait = 10m\n"), 0o644); err != nil {
				return err
			}
			// Self-heal sweeps launched by the hooks are detached: wait
			// for them before the work directory goes.
			env.Defer(func() {
				stores, _ := filepath.Glob(filepath.Join(env.WorkDir, "*", ".git", "tether"))
				for _, st := range stores {
					bgsweep.Wait(st, time.Minute)
				}
			})
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitfor": waitFor,
		},
	})
}

// waitFor waits until a file's content matches a regexp: the scripts use it
// to act at a known moment of a background agent's life.
//
//	waitfor FILE REGEXP
func waitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitfor FILE REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(60 * time.Second) // a hang guard, not a timing assertion
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && re.Match(b) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("%s never matched %q", args[0], args[1])
}
