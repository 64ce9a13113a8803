package install

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tetherdev/tether/state"
)

// These tests drive real git in temporary repositories. tether-hook and
// tether-sweep are small scripts on PATH that log their arguments (and
// tether-sweep its input), so a test can see that git ran our hook, with
// what, and after which other hook. Like the real gate when there is work,
// `tether-hook git post-commit` execs tether-sweep: beside it, else on PATH.

type fixture struct {
	log      string // what the fake binaries and the test hooks append to
	bin      string // the directory of the fake binaries
	origPath string // PATH without the fake binaries
}

const (
	fakeSweep = `#!/bin/sh
printf 'sweep %s\n' "$*" >>"$TETHER_TEST_LOG"
cat >>"$TETHER_TEST_LOG.sweep-stdin"
`
	fakeHook = `#!/bin/sh
printf 'hook %s\n' "$*" >>"$TETHER_TEST_LOG"
[ "$*" = "git post-commit" ] || exit 0
sweep="$(dirname -- "$0")/tether-sweep"
[ -x "$sweep" ] || sweep=$(command -v tether-sweep) || exit 0
exec "$sweep" run --hook post-commit --quiet
`
)

// writeFakes puts the fake binaries named (tether-hook, tether-sweep) in
// dir, and returns dir.
func writeFakes(t *testing.T, dir string, names ...string) string {
	t.Helper()
	for _, name := range names {
		content := map[string]string{"tether-hook": fakeHook, "tether-sweep": fakeSweep}[name]
		if content == "" {
			t.Fatalf("no fake %s", name)
		}
		writeExec(t, filepath.Join(dir, name), content)
	}
	return dir
}

// The log of a commit whose post-commit hook ran the gate, and the gate
// the sweep.
const postCommitRan = "hook git post-commit\nsweep run --hook post-commit --quiet\n"

func setup(t *testing.T) *fixture {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("GIT_AUTHOR_NAME", "t")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@example.invalid")
	t.Setenv("GIT_COMMITTER_NAME", "t")
	t.Setenv("GIT_COMMITTER_EMAIL", "t@example.invalid")
	f := &fixture{log: filepath.Join(t.TempDir(), "log"), origPath: os.Getenv("PATH")}
	t.Setenv("TETHER_TEST_LOG", f.log)
	f.bin = writeFakes(t, t.TempDir(), "tether-hook", "tether-sweep")
	t.Setenv("PATH", f.pathWith(f.bin))
	return f
}

// pathWith is the original PATH with dir in front.
func (f *fixture) pathWith(dir string) string {
	return dir + string(os.PathListSeparator) + f.origPath
}

func (f *fixture) logged(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(f.log)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

// newRepo is a repository with one commit whose tether store holds work
// (it is active), so the post-commit hook has a reason to run tether-hook.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, "git", "init", "-q", "-b", "main")
	run(t, dir, "git", "commit", "-q", "--allow-empty", "-m", "init")
	writeFile(t, filepath.Join(dir, ".git", "tether", state.ActiveFlag), "")
	return dir
}

// run runs a command in dir and fails the test unless it succeeds.
func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	out, err := runErr(dir, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func runErr(dir string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// snapshot maps every file and directory under root to its mode and
// content, leaving out git's bookkeeping, which commits change.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if gitState(rel) {
			return nil
		}
		switch {
		case d.IsDir():
			snap[rel] = "dir " + info.Mode().String()
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			snap[rel] = "link " + target
		default:
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			snap[rel] = info.Mode().String() + "\n" + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// gitState tells git's own bookkeeping (objects, refs, logs) from the parts
// of .git that install may touch: hooks, config and tether's directory.
func gitState(rel string) bool {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if parts[0] != ".git" || len(parts) == 1 {
		return false
	}
	switch parts[1] {
	case "hooks", "config", "tether":
		return false
	}
	return true
}

func sameSnapshot(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if a, ok := after[k]; !ok {
			t.Errorf("%s: %s is gone", what, k)
		} else if a != v {
			t.Errorf("%s: %s changed:\n--- before\n%s\n--- after\n%s", what, k, v, a)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s: %s was left behind", what, k)
		}
	}
}

func actions(res Result) map[string]Action {
	m := map[string]Action{}
	for _, c := range res.Changes {
		m[c.Path] = c.Action
	}
	return m
}

const foreignPostCommit = "#!/bin/sh\necho \"foreign post-commit $#\" >>\"$TETHER_TEST_LOG\"\nexit 3\n"

func TestPostCommitChainsForeignHook(t *testing.T) {
	f := setup(t)
	dir := newRepo(t)
	hook := filepath.Join(dir, ".git", "hooks", "post-commit")
	writeExec(t, hook, foreignPostCommit)

	res, err := Install(Options{Dir: dir, Agents: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if a := actions(res); a[hook+backupSuffix] != Moved || a[hook] != Created {
		t.Errorf("changes: %+v", res.Changes)
	}
	if got := readFile(t, hook+backupSuffix); got != foreignPostCommit {
		t.Errorf("backup is not the foreign hook: %q", got)
	}

	run(t, dir, "git", "commit", "-q", "--allow-empty", "-m", "one")
	want := "foreign post-commit 0\n" + postCommitRan
	if got := f.logged(t); got != want {
		t.Errorf("hooks ran as\n%s\nwant (foreign first)\n%s", got, want)
	}
	// A post-commit status cannot block the commit, but it is still the
	// hook's own exit status.
	_, err = runErr(dir, hook)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("chained hook exited with %v, want the foreign hook's status 3", err)
	}
}

func TestPrePushChainsForeignHookAndSharesInput(t *testing.T) {
	f := setup(t)
	dir := newRepo(t)
	remote := t.TempDir()
	run(t, remote, "git", "init", "-q", "--bare")
	run(t, dir, "git", "remote", "add", "origin", remote)
	writeExec(t, filepath.Join(dir, ".git", "hooks", "pre-push"),
		"#!/bin/sh\necho \"foreign pre-push $1 $2\" >>\"$TETHER_TEST_LOG\"\ncat >\"$TETHER_TEST_LOG.foreign-stdin\"\nexit ${FOREIGN_EXIT:-0}\n")

	if _, err := Install(Options{Dir: dir, Push: true, Agents: []string{}}); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "git", "push", "-q", "origin", "main")
	want := "foreign pre-push origin " + remote + "\nsweep push --hook pre-push --quiet origin " + remote + "\n"
	if got := f.logged(t); got != want {
		t.Errorf("hooks ran as\n%s\nwant\n%s", got, want)
	}
	foreignIn := readFile(t, f.log+".foreign-stdin")
	if !strings.Contains(foreignIn, " refs/heads/main ") {
		t.Errorf("the foreign hook did not get git's refs: %q", foreignIn)
	}
	if sweepIn := readFile(t, f.log+".sweep-stdin"); sweepIn != foreignIn {
		t.Errorf("tether-sweep got %q, the foreign hook %q", sweepIn, foreignIn)
	}

	// A failing foreign pre-push refuses the push, and tether-sweep stays out.
	t.Setenv("FOREIGN_EXIT", "1")
	run(t, dir, "git", "commit", "-q", "--allow-empty", "-m", "two")
	if out, err := runErr(dir, "git", "push", "-q", "origin", "main"); err == nil {
		t.Errorf("push succeeded past a failing pre-push hook: %s", out)
	}
	if got := f.logged(t); strings.Count(got, "sweep push") != 1 {
		t.Errorf("tether-sweep ran after the foreign hook failed:\n%s", got)
	}
}

func TestHooksPath(t *testing.T) {
	for _, tc := range []struct {
		name string
		path func(dir string) (config, want string)
	}{
		{"absolute", func(dir string) (string, string) {
			abs := filepath.Join(filepath.Dir(dir), filepath.Base(dir)+"-hooks")
			return abs, abs
		}},
		{"relative", func(dir string) (string, string) { return "githooks", filepath.Join(dir, "githooks") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			dir := newRepo(t)
			config, want := tc.path(dir)
			run(t, dir, "git", "config", "core.hooksPath", config)
			sub := filepath.Join(dir, "sub")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			// From a subdirectory, a relative hooksPath still means the worktree's.
			if _, err := Install(Options{Dir: sub, Agents: []string{}}); err != nil {
				t.Fatal(err)
			}
			if !isOurHook([]byte(readFile(t, filepath.Join(want, "post-commit")))) {
				t.Fatal("our hook is not in core.hooksPath")
			}
			if exists(filepath.Join(dir, ".git", "hooks", "post-commit")) {
				t.Error("a hook was written to .git/hooks, where git will not run it")
			}
			run(t, dir, "git", "commit", "-q", "--allow-empty", "-m", "x")
			if got := f.logged(t); got != postCommitRan {
				t.Errorf("log: %q", got)
			}
		})
	}
}

// huskyRunner stands in for what husky 9 generates in .husky/_: each git
// hook sources a runner that executes the user's .husky/<hook> with sh -e.
const huskyRunner = `#!/usr/bin/env sh
n=$(basename "$0")
s=$(dirname "$(dirname "$0")")/$n
[ -f "$s" ] || exit 0
sh -e "$s" "$@"
`

func TestHusky(t *testing.T) {
	t.Run("v9 with a user hook", func(t *testing.T) {
		f := setup(t)
		dir := newRepo(t)
		writeExec(t, filepath.Join(dir, ".husky", "_", "h"), huskyRunner)
		writeExec(t, filepath.Join(dir, ".husky", "_", "post-commit"), "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"\n")
		userHook := filepath.Join(dir, ".husky", "post-commit")
		writeFile(t, userHook, "echo husky-user >>\"$TETHER_TEST_LOG\"\n")
		run(t, dir, "git", "config", "core.hooksPath", ".husky/_")
		before := snapshot(t, dir)

		if _, err := Install(Options{Dir: dir, Agents: []string{}}); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, userHook); got != "echo husky-user >>\"$TETHER_TEST_LOG\"\n"+huskyBlock(postCommitHook, "") {
			t.Errorf("user hook is now\n%s", got)
		}
		if exists(filepath.Join(dir, ".git", "hooks", "post-commit")) {
			t.Error("wrote to .git/hooks under husky")
		}
		run(t, dir, "git", "commit", "-q", "--allow-empty", "-m", "x")
		if got := f.logged(t); got != "husky-user\n"+postCommitRan {
			t.Errorf("log: %q", got)
		}
		// Without tether-hook, husky's sh -e still succeeds, and nothing of
		// tether's runs.
		t.Setenv("PATH", f.pathWith(writeFakes(t, t.TempDir(), "tether-sweep")))
		out, err := runErr(dir, "sh", "-e", userHook)
		if err != nil {
			t.Errorf("husky hook failed without tether-hook: %v %s", err, out)
		}
		if got := f.logged(t); got != "husky-user\n"+postCommitRan+"husky-user\n" {
			t.Errorf("log: %q", got)
		}

		if _, err := Uninstall(Options{Dir: dir, Agents: []string{}}); err != nil {
			t.Fatal(err)
		}
		sameSnapshot(t, "after uninstall", before, snapshot(t, dir))
	})
	t.Run("v9 before npm install", func(t *testing.T) {
		setup(t)
		dir := newRepo(t)
		writeFile(t, filepath.Join(dir, ".husky", "pre-commit"), "npm test\n")
		run(t, dir, "git", "config", "core.hooksPath", ".husky/_")
		if _, err := Install(Options{Dir: dir, Agents: []string{}}); err != nil {
			t.Fatal(err)
		}
		if exists(filepath.Join(dir, ".husky", "_")) {
			t.Error("wrote into husky's generated directory")
		}
		if got := readFile(t, filepath.Join(dir, ".husky", "post-commit")); got != huskyShebang+huskyBlock(postCommitHook, "") {
			t.Errorf(".husky/post-commit is\n%s", got)
		}
	})
	t.Run("v8 without a hook", func(t *testing.T) {
		f := setup(t)
		dir := newRepo(t)
		if err := os.MkdirAll(filepath.Join(dir, ".husky"), 0o755); err != nil {
			t.Fatal(err)
		}
		run(t, dir, "git", "config", "core.hooksPath", ".husky")
		before := snapshot(t, dir)
		if _, err := Install(Options{Dir: dir, Agents: []string{}}); err != nil {
			t.Fatal(err)
		}
		run(t, dir, "git", "commit", "-q", "--allow-empty", "-m", "x")
		if got := f.logged(t); got != postCommitRan {
			t.Errorf("log: %q", got)
		}
		if _, err := Uninstall(Options{Dir: dir, Agents: []string{}}); err != nil {
			t.Fatal(err)
		}
		sameSnapshot(t, "after uninstall", before, snapshot(t, dir))
	})
}

func TestLinkedWorktree(t *testing.T) {
	f := setup(t)
	dir := newRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	run(t, dir, "git", "worktree", "add", "-q", wt)

	if _, err := Install(Options{Dir: wt, Agents: []string{"claude-code"}}); err != nil {
		t.Fatal(err)
	}
	common := filepath.Join(dir, ".git")
	if !isOurHook([]byte(readFile(t, filepath.Join(common, "hooks", "post-commit")))) {
		t.Fatal("hook is not in the common dir's hooks")
	}
	if !exists(filepath.Join(wt, ".claude", "settings.json")) || !exists(filepath.Join(common, "tether", "install.json")) {
		t.Fatal("agent config not in the worktree, or install record not in the common dir")
	}
	run(t, wt, "git", "commit", "-q", "--allow-empty", "-m", "x")
	if got := f.logged(t); got != postCommitRan {
		t.Errorf("log: %q", got)
	}
	if _, err := Uninstall(Options{Dir: wt}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(wt, ".claude"), filepath.Join(common, "hooks", "post-commit"), filepath.Join(common, "tether", "install.json")} {
		if exists(p) {
			t.Errorf("%s left behind", p)
		}
	}
}

// A repository with some of everything: a foreign hook, a user's Claude
// settings in their own style, a Cursor directory without hooks, Gemini
// settings that already enable hooks.
const claudeUserSettings = `{
    "permissions": {"allow": ["Bash(make:*)"]},
    "hooks": {
        "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "say done"}]}]
    },
    "futureKey": [1, {"x": null}]
}`

func busyRepo(t *testing.T) string {
	t.Helper()
	dir := newRepo(t)
	writeExec(t, filepath.Join(dir, ".git", "hooks", "post-commit"), foreignPostCommit)
	writeFile(t, filepath.Join(dir, ".claude", "settings.json"), claudeUserSettings)
	if err := os.MkdirAll(filepath.Join(dir, ".cursor"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, ".gemini", "settings.json"), "{\n  \"hooksConfig\": {\n    \"enabled\": true\n  }\n}\n")
	run(t, dir, "git", "config", "--add", "notes.rewriteRef", "refs/notes/commits")
	return dir
}

func TestInstallTwiceChangesNothing(t *testing.T) {
	setup(t)
	dir := busyRepo(t)
	opts := Options{Dir: dir, Push: true, Agents: AgentNames(), HookPath: "/opt/tether/tether-hook"}
	if _, err := Install(opts); err != nil {
		t.Fatal(err)
	}
	once := snapshot(t, dir)
	res, err := Install(opts)
	if err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "second install", once, snapshot(t, dir))
	for _, c := range res.Changes {
		if c.Action != Unchanged {
			t.Errorf("second install: %s %s", c.What, c.Action)
		}
	}
}

func TestUninstallRestoresEverything(t *testing.T) {
	setup(t)
	dir := busyRepo(t)
	before := snapshot(t, dir)
	opts := Options{Dir: dir, Push: true, Agents: AgentNames(), HookPath: "/opt/tether/tether-hook"}
	if _, err := Install(opts); err != nil {
		t.Fatal(err)
	}

	// Install kept every key and hook of the user's settings.
	var orig, got map[string]any
	if err := json.Unmarshal([]byte(claudeUserSettings), &orig); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, ".claude", "settings.json"))), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"permissions", "futureKey"} {
		if !jsonEqual(orig[k], got[k]) {
			t.Errorf("%s: %v became %v", k, orig[k], got[k])
		}
	}
	stop := got["hooks"].(map[string]any)["Stop"].([]any)
	if len(stop) != 2 || !jsonEqual(stop[0], orig["hooks"].(map[string]any)["Stop"].([]any)[0]) {
		t.Errorf("user's Stop hook not kept first: %v", stop)
	}
	if vals := run(t, dir, "git", "config", "--get-all", "notes.rewriteRef"); vals != "refs/notes/commits\nrefs/notes/tether\n" {
		t.Errorf("notes.rewriteRef = %q", vals)
	}

	if _, err := Uninstall(Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "after uninstall", before, snapshot(t, dir))
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// When the user edits a config after install, uninstall takes out only our
// entries and keeps their edit.
func TestUninstallKeepsLaterEdits(t *testing.T) {
	setup(t)
	dir := newRepo(t)
	settings := filepath.Join(dir, ".claude", "settings.json")
	writeFile(t, settings, claudeUserSettings+"\n")
	if _, err := Install(Options{Dir: dir, Agents: []string{"claude-code"}, NoGitHooks: true}); err != nil {
		t.Fatal(err)
	}
	d, err := parseDocument([]byte(readFile(t, settings)))
	if err != nil {
		t.Fatal(err)
	}
	d.root.set("model", newString("sonnet"))
	writeFile(t, settings, string(d.bytes()))

	if _, err := Uninstall(Options{Dir: dir, NoGitHooks: true}); err != nil {
		t.Fatal(err)
	}
	want := mustParse(t, claudeUserSettings)
	want.set("model", newString("sonnet"))
	if got := mustParse(t, readFile(t, settings)); !equal(got, want) {
		t.Errorf("got %s\nwant %s", compact(got), compact(want))
	}
}

// The git hooks run tether's binaries from where install says: beside an
// absolute tether-sweep, else on PATH. A missing or failing binary never
// blocks a commit or a push. A missing one leaves the hook's status 0; the
// unchained post-commit hook execs tether-hook (which always exits 0), so
// its status is tether-hook's, which git ignores.
func TestHookBinaries(t *testing.T) {
	failing := func(t *testing.T, f *fixture) string {
		bin := t.TempDir()
		for _, name := range []string{"tether-hook", "tether-sweep"} {
			writeExec(t, filepath.Join(bin, name), "#!/bin/sh\necho broken >&2\nexit 1\n")
		}
		return f.pathWith(bin)
	}
	for _, tc := range []struct {
		name         string
		sweep        func(t *testing.T, f *fixture) string // Options.SweepPath
		path         func(t *testing.T, f *fixture) string // PATH when git runs
		commit, push bool                                  // whether tether ran at post-commit, at pre-push
		status       int                                   // of the post-commit hook run by hand
	}{
		{"on PATH", nil, func(_ *testing.T, f *fixture) string { return f.pathWith(f.bin) }, true, true, 0},
		{"beside an absolute tether-sweep", func(_ *testing.T, f *fixture) string { return filepath.Join(f.bin, "tether-sweep") },
			func(_ *testing.T, f *fixture) string { return f.origPath }, true, true, 0},
		{"not on PATH", nil, func(_ *testing.T, f *fixture) string { return f.origPath }, false, false, 0},
		{"tether-hook not on PATH", nil, func(t *testing.T, f *fixture) string {
			return f.pathWith(writeFakes(t, t.TempDir(), "tether-sweep"))
		}, false, true, 0},
		// The hooks do not fall back on PATH, where both are.
		{"absolute path gone", func(*testing.T, *fixture) string { return "/nonexistent/tether-sweep" },
			func(_ *testing.T, f *fixture) string { return f.pathWith(f.bin) }, false, false, 0},
		{"tether-hook not beside tether-sweep", func(t *testing.T, _ *fixture) string {
			return filepath.Join(writeFakes(t, t.TempDir(), "tether-sweep"), "tether-sweep")
		}, func(_ *testing.T, f *fixture) string { return f.pathWith(f.bin) }, false, true, 0},
		{"failing", nil, failing, false, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			dir := newRepo(t)
			remote := t.TempDir()
			run(t, remote, "git", "init", "-q", "--bare")
			run(t, dir, "git", "remote", "add", "origin", remote)
			opts := Options{Dir: dir, Push: true, Agents: []string{}}
			if tc.sweep != nil {
				opts.SweepPath = tc.sweep(t, f)
			}
			if _, err := Install(opts); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", tc.path(t, f))
			run(t, dir, "git", "commit", "-q", "--allow-empty", "-m", "x")
			run(t, dir, "git", "push", "-q", "origin", "main")
			var want string
			if tc.commit {
				want += postCommitRan
			}
			if tc.push {
				want += "sweep push --hook pre-push --quiet origin " + remote + "\n"
			}
			if got := f.logged(t); got != want {
				t.Errorf("hooks ran as\n%s\nwant\n%s", got, want)
			}
			out, err := runErr(dir, filepath.Join(dir, ".git", "hooks", "post-commit"))
			var ee *exec.ExitError
			status := 0
			switch {
			case errors.As(err, &ee):
				status = ee.ExitCode()
			case err != nil:
				t.Fatal(err)
			}
			if status != tc.status {
				t.Errorf("post-commit hook exited with %d, want %d: %s", status, tc.status, out)
			}
		})
	}
}

func TestUserLevel(t *testing.T) {
	setup(t)
	dir := newRepo(t)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, home)
	opts := Options{Dir: dir, User: true, Home: home, NoGitHooks: true}
	if _, err := Install(opts); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(home, ".gemini", "settings.json")) || exists(filepath.Join(dir, ".gemini")) {
		t.Fatal("user-level install did not write ~/.gemini/settings.json only")
	}
	if exists(filepath.Join(home, ".claude")) {
		t.Error("configured an agent the user does not have")
	}
	if _, err := Uninstall(opts); err != nil {
		t.Fatal(err)
	}
	// The record under ~/.config/tether goes with the last entry.
	sameSnapshot(t, "home after uninstall", before, snapshot(t, home))
}

func TestSymlinkedConfigStaysLinked(t *testing.T) {
	setup(t)
	dir := newRepo(t)
	dotfiles := filepath.Join(t.TempDir(), "settings.json")
	writeFile(t, dotfiles, claudeUserSettings)
	link := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dotfiles, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(Options{Dir: dir, Agents: []string{"claude-code"}, NoGitHooks: true}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a file")
	}
	if !strings.Contains(readFile(t, dotfiles), hookBinary) {
		t.Fatal("the link's target was not updated")
	}
	if _, err := Uninstall(Options{Dir: dir, NoGitHooks: true}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, dotfiles); got != claudeUserSettings {
		t.Errorf("target not restored:\n%s", got)
	}
}

// Hook frameworks get the lines to add, never an edit; once the user adds
// a hook's line, install and doctor stop asking for it, and only for it.
func TestHookFrameworksAreLeftAlone(t *testing.T) {
	for _, tc := range []struct{ fw, file, content, install string }{
		{"lefthook", "lefthook.yml", "pre-commit:\n  commands:\n    lint:\n      run: make lint\n", ""},
		{"pre-commit", ".pre-commit-config.yaml", "repos:\n  - repo: https://github.com/pre-commit/pre-commit-hooks\n    rev: v4.6.0\n    hooks:\n      - id: trailing-whitespace\n",
			"pre-commit install --hook-type "},
	} {
		t.Run(tc.file, func(t *testing.T) {
			setup(t)
			dir := newRepo(t)
			cfg := filepath.Join(dir, tc.file)
			writeFile(t, cfg, tc.content)
			opts := Options{Dir: dir, Push: true, Agents: []string{}, LookPath: found}
			res, err := Install(opts)
			if err != nil {
				t.Fatal(err)
			}
			// What each hook's line must run.
			runs := map[string]string{"post-commit": "tether-hook git post-commit", "pre-push": "tether-sweep push --hook pre-push",
				"post-merge": "tether-sweep run --hook post-merge", "post-rewrite": "tether-sweep run --hook post-rewrite", "post-checkout": "tether-sweep run --hook post-checkout"}
			snippets := map[string]string{}
			for _, m := range res.Manual {
				snippets[m.Hook] = m.Snippet
				then := ""
				if tc.install != "" {
					then = tc.install + m.Hook
				}
				if m.File != cfg || !strings.Contains(m.Snippet, runs[m.Hook]) || m.Then != then {
					t.Errorf("manual step: %+v", m)
				}
			}
			if len(res.Manual) != 5 || len(snippets) != 5 {
				t.Fatalf("manual steps: %+v", res.Manual)
			}
			if readFile(t, cfg) != tc.content || exists(filepath.Join(dir, ".git", "hooks", "post-commit")) || exists(filepath.Join(dir, ".git", "hooks", "pre-push")) {
				t.Error("touched the framework's files or git's hooks")
			}

			problem := map[string]string{
				"post-commit": tc.fw + " does not run tether-hook at post-commit",
				"pre-push":    tc.fw + " does not run tether-sweep at pre-push",
			}
			for _, h := range linkHooks {
				problem[h.name] = tc.fw + " does not run tether-sweep at " + h.name
			}

			// asked puts content in the config and returns the hooks whose
			// line install asks for; check must report the same, with the
			// same snippet, and no fix.
			asked := func(content string) []string {
				t.Helper()
				writeFile(t, cfg, content)
				res, err := Install(opts)
				if err != nil {
					t.Fatal(err)
				}
				ps := Check(opts)
				var hooks []string
				for i, m := range res.Manual {
					hooks = append(hooks, m.Hook)
					if i >= len(ps) || ps[i].What != problem[m.Hook] || !strings.Contains(ps[i].Detail, m.Snippet) || ps[i].Fix != nil {
						t.Errorf("install asks for %s, check says %+v", m.Hook, ps)
					}
				}
				if len(ps) != len(res.Manual) {
					t.Errorf("install asks for %q, check says %+v", hooks, ps)
				}
				if readFile(t, cfg) != content {
					t.Error("install touched the framework's file")
				}
				return hooks
			}
			both := []string{"post-commit", "post-merge", "post-rewrite", "post-checkout", "pre-push"}
			if got := asked(tc.content); !slices.Equal(got, both) {
				t.Errorf("asked for %q", got)
			}
			// A line from before the gate, running tether-sweep at
			// post-commit, is over the commit budget: the gate's is asked for.
			old := strings.ReplaceAll(snippets["post-commit"], runs["post-commit"], "tether-sweep run --hook post-commit --quiet")
			if got := asked(tc.content + old); !slices.Equal(got, both) {
				t.Errorf("with tether-sweep at post-commit, asked for %q", got)
			}
			if got := asked(tc.content + snippets["post-commit"]); !slices.Equal(got, both[1:]) {
				t.Errorf("with the post-commit line added, asked for %q", got)
			}
			if got := asked(tc.content + snippets["pre-push"]); !slices.Equal(got, both[:4]) {
				t.Errorf("with the pre-push line added, asked for %q", got)
			}
			withBoth := tc.content
			for _, h := range both {
				withBoth += snippets[h]
			}
			if got := asked(withBoth); len(got) != 0 {
				t.Errorf("with both lines added, asked for %q", got)
			}

			res, err = Uninstall(Options{Dir: dir, Agents: []string{}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Notes) != 5 || !strings.Contains(res.Notes[0], "tether-hook for post-commit") || !strings.Contains(res.Notes[1], "tether-sweep for pre-push") || !strings.Contains(res.Notes[4], "tether-sweep for post-checkout") {
				t.Errorf("uninstall notes: %q", res.Notes)
			}
			if readFile(t, cfg) != withBoth {
				t.Error("uninstall touched the framework's file")
			}
		})
	}
}

func found(name string) (string, error) { return "/usr/bin/" + name, nil }

// Gemini CLI reads its settings.json with comments: install adds its
// hooks without losing one, and uninstall gives the file back as it was.
func TestInstallKeepsCommentsOfJSONC(t *testing.T) {
	setup(t)
	dir := newRepo(t)
	path := filepath.Join(dir, ".gemini", "settings.json")
	orig := "// my settings\n{\n  // the model I pay for\n  \"model\": \"opus\", /* for now */\n  \"ui\": {\"theme\": \"dark\",},\n}\n"
	writeFile(t, path, orig)
	if _, err := Install(Options{Dir: dir, Agents: []string{"gemini"}, NoGitHooks: true}); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, path)
	for _, c := range []string{"// my settings", "// the model I pay for", "/* for now */", `"ui": {"theme": "dark",}`} {
		if !strings.Contains(got, c) {
			t.Errorf("install lost %q:\n%s", c, got)
		}
	}
	d, err := parseDocument([]byte(got))
	if err != nil || d.root.get("hooks").get("SessionStart") == nil {
		t.Fatalf("installed settings: %v\n%s", err, got)
	}
	if _, err := Uninstall(Options{Dir: dir, Agents: []string{"gemini"}, NoGitHooks: true}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != orig {
		t.Errorf("after uninstall:\n%s\nwant\n%s", got, orig)
	}
}

func TestInstallReportsBadConfigAndGoesOn(t *testing.T) {
	setup(t)
	dir := newRepo(t)
	bad := "{\n  // my settings\n  \"model\": \"opus\"\n  \"theme\": \"dark\"\n}\n"
	writeFile(t, filepath.Join(dir, ".gemini", "settings.json"), bad)
	res, err := Install(Options{Dir: dir, Agents: []string{"gemini", "cursor"}, NoGitHooks: true})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(".gemini", "settings.json")) {
		t.Errorf("error %v does not name the bad file", err)
	}
	if readFile(t, filepath.Join(dir, ".gemini", "settings.json")) != bad {
		t.Error("the bad file was changed")
	}
	if actions(res)[filepath.Join(dir, ".cursor", "hooks.json")] != Created {
		t.Errorf("cursor was not installed: %+v", res.Changes)
	}
}

func TestGeminiHooksDisabledIsRespected(t *testing.T) {
	setup(t)
	dir := newRepo(t)
	settings := filepath.Join(dir, ".gemini", "settings.json")
	writeFile(t, settings, `{"hooksConfig": {"enabled": false}}`)
	res, err := Install(Options{Dir: dir, Agents: []string{"gemini"}, NoGitHooks: true})
	if err != nil {
		t.Fatal(err)
	}
	if !hooksDisabled(mustParse(t, readFile(t, settings))) {
		t.Error("install overrode the user's hooksConfig.enabled=false")
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "hooksConfig.enabled") {
		t.Errorf("notes: %q", res.Notes)
	}
	ps := Check(Options{Dir: dir, Agents: []string{"gemini"}, NoGitHooks: true, LookPath: found})
	if len(ps) != 1 || ps[0].Fix != nil || !strings.Contains(ps[0].What, "turned off") {
		t.Errorf("check: %+v", ps)
	}
}

func TestCheckAndFix(t *testing.T) {
	setup(t)
	dir := newRepo(t)
	notFound := func(string) (string, error) { return "", exec.ErrNotFound }
	opts := Options{Dir: dir, Agents: []string{"claude-code", "cursor"}, Push: true, LookPath: notFound}

	ps := Check(opts)
	var whats []string
	for _, p := range ps {
		whats = append(whats, p.What)
	}
	want := []string{
		"git post-commit hook is not installed",
		"git post-merge hook is not installed",
		"git post-rewrite hook is not installed",
		"git post-checkout hook is not installed",
		"git pre-push hook is not installed",
		"notes.rewriteRef does not include refs/notes/tether",
		"claude-code hooks are not installed",
		"cursor hooks are not installed",
		"tether-sweep is not on PATH",
		"tether-hook is not on PATH",
	}
	if !slices.Equal(whats, want) {
		t.Fatalf("problems:\n%s\nwant\n%s", strings.Join(whats, "\n"), strings.Join(want, "\n"))
	}
	fixAll(t, ps)
	opts.LookPath = found
	if ps := Check(opts); len(ps) != 0 {
		t.Fatalf("after fixing: %+v", ps)
	}

	// Damage things the way time does. The post-commit hook is the one
	// tether wrote before the gate, running tether-sweep itself.
	hook := filepath.Join(dir, ".git", "hooks", "post-commit")
	old := strings.NewReplacer(
		"command -v tether-hook", "command -v tether-sweep",
		"exec tether-hook git post-commit", "tether-sweep run --hook post-commit --quiet || true",
	).Replace(readFile(t, hook))
	if !strings.Contains(old, "tether-sweep run --hook post-commit --quiet || true\n") || strings.Contains(old, "tether-hook") {
		t.Fatalf("not the hook from before the gate:\n%s", old)
	}
	writeExec(t, hook, old)
	prePush := filepath.Join(dir, ".git", "hooks", "pre-push")
	writeExec(t, prePush, foreignPostCommit)
	opts.SweepPath = "/new/place/tether-sweep"
	// A teammate's older tether wrote their machine's binary into the
	// shared config, and it was committed.
	settings := filepath.Join(dir, ".claude", "settings.json")
	writeFile(t, settings, merged(t, spec(t, "claude-code"), readFile(t, settings), "/home/alice/.local/bin/tether-hook"))
	run(t, dir, "git", "add", ".claude/settings.json")
	run(t, dir, "git", "commit", "-q", "-m", "tether for claude")

	whats = nil
	ps = Check(opts)
	for _, p := range ps {
		whats = append(whats, p.What)
	}
	want = []string{
		"git post-commit hook is out of date",
		"git post-merge hook is out of date",
		"git post-rewrite hook is out of date",
		"git post-checkout hook is out of date",
		"git pre-push hook is not tether's",
		"claude-code hooks run tether-hook from /home/alice/.local/bin/tether-hook, a path on one machine",
		"tether-sweep is missing from /new/place/tether-sweep",
		"tether-hook is missing from /new/place/tether-hook",
	}
	if !slices.Equal(whats, want) {
		t.Fatalf("problems:\n%s\nwant\n%s", strings.Join(whats, "\n"), strings.Join(want, "\n"))
	}
	if d := ps[5].Detail; !strings.HasPrefix(d, settings+" (committed) is meant to be shared") {
		t.Errorf("the machine path's detail: %q", d)
	}
	fixAll(t, ps)
	if got := readFile(t, prePush+backupSuffix); got != foreignPostCommit {
		t.Errorf("fix did not chain the foreign pre-push hook: %q", got)
	}
	if strings.Contains(readFile(t, settings), "alice") {
		t.Errorf("the fix left the machine path in:\n%s", readFile(t, settings))
	}
	ps = Check(opts)
	if len(ps) != 2 || ps[0].Fix != nil || ps[1].Fix != nil {
		t.Errorf("after fixing, only the missing binaries should remain: %+v", ps)
	}
}

func fixAll(t *testing.T, ps []Problem) {
	t.Helper()
	for _, p := range ps {
		if p.Fix == nil {
			continue
		}
		if err := p.Fix(); err != nil {
			t.Fatalf("fix %q: %v", p.What, err)
		}
	}
}

func TestOptionsAreChecked(t *testing.T) {
	setup(t)
	dir := newRepo(t)
	for _, opts := range []Options{
		{Dir: dir, HookPath: "bin/tether-hook"},
		{Dir: dir, SweepPath: "tether-sweep"},
		{Dir: dir, User: true},
		{Dir: dir, Agents: []string{"emacs"}},
		{Dir: t.TempDir()}, // not a repository
		{},
	} {
		if _, err := Install(opts); err == nil {
			t.Errorf("Install(%+v) succeeded", opts)
		}
		if ps := Check(opts); !slices.ContainsFunc(ps, func(p Problem) bool { return p.Fix == nil }) {
			t.Errorf("Check(%+v) = %+v, want a problem only the user can fix", opts, ps)
		}
	}
}

// The post-commit hook in <common>/hooks starts no process unless
// tether's store is active: git runs the script, which tests for the flag
// and exits. It finds the store from its own path, so a linked worktree
// and a moved repository work alike; a hooks directory elsewhere
// (core.hooksPath, or a symlink to outside the common dir) cannot, and
// leaves the decision to tether-hook. Installing flags a store an earlier
// tether kept, which has no flag yet.
func TestPostCommitStoreGate(t *testing.T) {
	commit := func(t *testing.T, f *fixture, dir string) bool {
		t.Helper()
		os.Remove(f.log)
		run(t, dir, "git", "commit", "-q", "--allow-empty", "-m", "x")
		return f.logged(t) == postCommitRan
	}
	t.Run("in the common dir", func(t *testing.T) {
		f := setup(t)
		dir := newRepo(t)
		flag := filepath.Join(dir, ".git", "tether", state.ActiveFlag)
		if err := os.Remove(flag); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, ".git", "tether", "sessions", "old.json"), "{}") // an earlier tether's store
		if _, err := Install(Options{Dir: dir, Agents: []string{}}); err != nil {
			t.Fatal(err)
		}
		if !commit(t, f, dir) {
			t.Fatal("the commit after installing did not run tether-hook: the store was not flagged")
		}
		if err := os.Remove(flag); err != nil {
			t.Fatal(err)
		}
		if commit(t, f, dir) {
			t.Error("an inactive store's commit ran tether-hook")
		}
		wt := filepath.Join(t.TempDir(), "wt")
		run(t, dir, "git", "worktree", "add", "-q", wt)
		if commit(t, f, wt) {
			t.Error("an inactive store's commit in a linked worktree ran tether-hook")
		}
		writeFile(t, flag, "")
		if !commit(t, f, wt) || !commit(t, f, dir) {
			t.Error("an active store's commit did not run tether-hook")
		}
		moved := filepath.Join(t.TempDir(), "moved")
		if err := os.Rename(dir, moved); err != nil {
			t.Fatal(err)
		}
		if !commit(t, f, moved) {
			t.Error("after the repository moved, an active store's commit did not run tether-hook")
		}
	})
	t.Run("hooks elsewhere", func(t *testing.T) {
		f := setup(t)
		dir := newRepo(t)
		if err := os.Remove(filepath.Join(dir, ".git", "tether", state.ActiveFlag)); err != nil {
			t.Fatal(err)
		}
		shared := t.TempDir()
		if err := os.RemoveAll(filepath.Join(dir, ".git", "hooks")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(shared, filepath.Join(dir, ".git", "hooks")); err != nil {
			t.Fatal(err)
		}
		if _, err := Install(Options{Dir: dir, Agents: []string{}}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(readFile(t, filepath.Join(shared, "post-commit")), "tether/active") {
			t.Error("a hook outside the common dir tests a path relative to itself")
		}
		if !commit(t, f, dir) {
			t.Error("without a gate of its own, the hook did not leave the decision to tether-hook")
		}
	})
}

// A post-commit hook installed by an earlier tether (no gate) still works
// and is reported out of date; install replaces it.
func TestOldPostCommitHookUpgraded(t *testing.T) {
	f := setup(t)
	dir := newRepo(t)
	hook := filepath.Join(dir, ".git", "hooks", "post-commit")
	old := "#!/bin/sh\n" + hookMarker + "\n# Installed by `tether-sweep install`; `tether-sweep uninstall` removes it.\n" +
		"# Without tether it does nothing, and it never fails the commit.\n" +
		"command -v tether-hook >/dev/null 2>&1 || exit 0\nexec tether-hook git post-commit\n"
	writeExec(t, hook, old)
	run(t, dir, "git", "commit", "-q", "--allow-empty", "-m", "x")
	if got := f.logged(t); got != postCommitRan {
		t.Errorf("the old hook ran %q", got)
	}
	var stale bool
	for _, p := range Check(Options{Dir: dir, Agents: []string{}}) {
		stale = stale || strings.Contains(p.What, "post-commit hook is out of date")
	}
	if !stale {
		t.Error("doctor does not say the old hook is out of date")
	}
	res, err := Install(Options{Dir: dir, Agents: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if a := actions(res); a[hook] != Updated || !strings.Contains(readFile(t, hook), storeGate) {
		t.Errorf("install: %+v\n%s", res.Changes, readFile(t, hook))
	}
}

// A user-level config goes into the agent's own directory, wherever its
// variable moves it, as the agent reads it from there.
func TestUserConfigFollowsTheAgentsHome(t *testing.T) {
	setup(t)
	dir, home := newRepo(t), t.TempDir()
	env := map[string]string{"CODEX_HOME": filepath.Join(home, "codex-here"), "COPILOT_HOME": filepath.Join(home, "copilot-here")}
	opts := Options{Dir: dir, Home: home, User: true, NoGitHooks: true, Agents: []string{"codex", "copilot", "claude-code"},
		Getenv: func(k string) string { return env[k] }}
	if _, err := Install(opts); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"codex-here/hooks.json", "copilot-here/hooks/tether.json", ".claude/settings.json"} {
		if !exists(filepath.Join(home, p)) {
			t.Errorf("no %s", p)
		}
	}
	if exists(filepath.Join(home, ".codex")) || exists(filepath.Join(home, ".copilot")) {
		t.Error("a config went to the default home, not the agent's")
	}
	if _, err := Uninstall(opts); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(home, "codex-here")) || exists(filepath.Join(home, "copilot-here")) {
		t.Error("uninstall left what install made")
	}
}
