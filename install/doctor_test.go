package install

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Check looks for the binaries where the installed hooks look for them: the
// git hooks run tether-hook (post-commit) and tether-sweep (pre-push, and
// post-commit through tether-hook), both beside SweepPath or on PATH; the
// agents' hooks run tether-hook on PATH (the project's configs are shared),
// or at HookPath (the user's, at user level). A binary missing
// from one place is reported once, naming every hook that looks there.
func TestCheckBinaries(t *testing.T) {
	lookIn := func(names ...string) func(string) (string, error) {
		return func(name string) (string, error) {
			if slices.Contains(names, name) {
				return "/usr/bin/" + name, nil
			}
			return "", exec.ErrNotFound
		}
	}
	// Directories holding real executables, and one holding nothing.
	both := writeFakes(t, t.TempDir(), "tether-hook", "tether-sweep")
	sweepOnly := writeFakes(t, t.TempDir(), "tether-sweep")
	hookOnly := writeFakes(t, t.TempDir(), "tether-hook")
	empty := t.TempDir()
	in := filepath.Join
	setup(t)
	dir := newRepo(t) // each case installs afresh over the last

	type problem struct{ what, detail string } // detail: how it starts
	for _, tc := range []struct {
		name   string
		opts   Options // Dir, Push and LookPath are set by the test
		onPath []string
		want   []problem
	}{
		{name: "all on PATH", opts: Options{Agents: []string{"claude-code"}}, onPath: []string{"tether-hook", "tether-sweep"}},
		{name: "none on PATH", opts: Options{Agents: []string{"claude-code"}}, want: []problem{
			{"tether-sweep is not on PATH", "the git hooks run it and find it on PATH"},
			{"tether-hook is not on PATH", "the git hooks and the agents' hooks run it and find it on PATH"},
		}},
		{name: "git hooks need tether-hook", opts: Options{Agents: []string{}}, onPath: []string{"tether-sweep"}, want: []problem{
			{"tether-hook is not on PATH", "the git hooks run it and find it on PATH"},
		}},
		{name: "agents only", opts: Options{Agents: []string{"claude-code"}, NoGitHooks: true}, onPath: []string{"tether-sweep"}, want: []problem{
			{"tether-hook is not on PATH", "the agents' hooks run it and find it on PATH"},
		}},
		// The project's agent configs are shared: they look on PATH.
		{name: "beside tether-sweep", opts: Options{Agents: []string{"claude-code"}, SweepPath: in(both, "tether-sweep"), HookPath: in(both, "tether-hook")}, onPath: []string{"tether-hook"}},
		// The git hooks do not look on PATH then.
		{name: "tether-hook not beside tether-sweep", opts: Options{Agents: []string{}, SweepPath: in(sweepOnly, "tether-sweep")}, onPath: []string{"tether-hook", "tether-sweep"}, want: []problem{
			{"tether-hook is missing from " + in(sweepOnly, "tether-hook"), "the git hooks run it from there"},
		}},
		{name: "tether-hook missing beside tether-sweep and from PATH", opts: Options{Agents: []string{"claude-code"}, SweepPath: in(sweepOnly, "tether-sweep"), HookPath: in(sweepOnly, "tether-hook")}, want: []problem{
			{"tether-hook is missing from " + in(sweepOnly, "tether-hook"), "the git hooks run it from there"},
			{"tether-hook is not on PATH", "the agents' hooks run it and find it on PATH"},
		}},
		{name: "user level: the agents run it beside tether-sweep too", opts: Options{Agents: []string{"claude-code"}, User: true, Home: t.TempDir(), SweepPath: in(sweepOnly, "tether-sweep"), HookPath: in(sweepOnly, "tether-hook")}, want: []problem{
			{"tether-hook is missing from " + in(sweepOnly, "tether-hook"), "the git hooks and the agents' hooks run it from there"},
		}},
		{name: "tether-sweep gone", opts: Options{Agents: []string{"claude-code"}, SweepPath: in(hookOnly, "tether-sweep"), HookPath: in(hookOnly, "tether-hook")}, onPath: []string{"tether-hook"}, want: []problem{
			{"tether-sweep is missing from " + in(hookOnly, "tether-sweep"), "the git hooks run it from there"},
		}},
		{name: "all gone", opts: Options{Agents: []string{"claude-code"}, SweepPath: in(empty, "tether-sweep"), HookPath: in(both, "tether-hook")}, onPath: []string{"tether-hook"}, want: []problem{
			{"tether-sweep is missing from " + in(empty, "tether-sweep"), "the git hooks run it from there"},
			{"tether-hook is missing from " + in(empty, "tether-hook"), "the git hooks run it from there"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Dir, opts.Push, opts.LookPath = dir, true, lookIn(tc.onPath...)
			if _, err := Install(opts); err != nil {
				t.Fatal(err)
			}
			var got []problem
			for _, p := range Check(opts) {
				got = append(got, problem{p.What, p.Detail})
				if p.Fix != nil {
					t.Errorf("%q has a fix: a missing binary needs the user", p.What)
				}
			}
			ok := len(got) == len(tc.want)
			for i := 0; ok && i < len(got); i++ {
				ok = got[i].what == tc.want[i].what && strings.HasPrefix(got[i].detail, tc.want[i].detail)
			}
			if !ok {
				t.Errorf("problems:\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
