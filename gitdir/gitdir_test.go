package gitdir

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitEnv is a hermetic environment for the git CLI: no user or system
// config, a fixed identity, and a ceiling so no repository above the test's
// temp dir is ever found.
func gitEnv(t testing.TB, ceiling string, extra map[string]string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_CEILING_DIRECTORIES="+ceiling,
	)
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// runGit runs git in dir and returns its trimmed stdout, or an error with
// its stderr.
func runGit(t testing.TB, dir, ceiling string, extra map[string]string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(t, ceiling, extra)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", errors.New(strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// fixture is a set of real repositories made with the git CLI.
type fixture struct {
	t    testing.TB
	root string // the temp dir: also the ceiling
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, root: root}
}

func (f *fixture) path(rel string) string { return filepath.Join(f.root, filepath.FromSlash(rel)) }

func (f *fixture) git(dir string, args ...string) string {
	f.t.Helper()
	out, err := runGit(f.t, f.path(dir), f.root, nil, args...)
	if err != nil {
		f.t.Fatalf("git %s in %s: %v", strings.Join(args, " "), dir, err)
	}
	return out
}

func (f *fixture) mkdir(rel string) {
	f.t.Helper()
	if err := os.MkdirAll(f.path(rel), 0o755); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) write(rel, content string) {
	f.t.Helper()
	if err := os.WriteFile(f.path(rel), []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// initRepo makes a repository with one commit.
func (f *fixture) initRepo(rel string, initArgs ...string) {
	f.t.Helper()
	f.mkdir(rel)
	f.git(rel, append([]string{"init", "-q", "-b", "main"}, initArgs...)...)
	f.write(rel+"/README", "hello\n")
	f.git(rel, "add", "README")
	f.git(rel, "commit", "-q", "-m", "first")
}

// build makes every repository shape the tests look at.
func (f *fixture) build() {
	f.initRepo("main")
	f.mkdir("main/sub/dir")
	f.git("main", "worktree", "add", "-q", "-b", "feature", "../wt")
	f.mkdir("wt/deep/er")

	f.initRepo("lib")
	f.initRepo("super")
	f.git("super", "-c", "protocol.file.allow=always", "submodule", "add", "-q", f.path("lib"), "modules/lib")
	f.git("super", "commit", "-q", "-m", "add lib")
	f.mkdir("super/modules/lib/inner")

	// A .git file with a relative gitdir.
	f.mkdir("rel")
	f.mkdir("store")
	f.git("rel", "init", "-q", "-b", "main", "--separate-git-dir", f.path("store/rel.git"))
	f.write("rel/.git", "gitdir: ../store/rel.git\n")
	f.mkdir("rel/a/b")

	f.mkdir("bare.git")
	f.git("bare.git", "init", "-q", "--bare")
	f.mkdir("bare.git/refs/heads/x")

	f.initRepo("flagged")
	f.git("flagged", "config", "core.bare", "true")

	f.initRepo("elsewhere")
	f.mkdir("elsewhere-tree/x")
	f.git("elsewhere", "config", "core.worktree", "../../elsewhere-tree")

	f.mkdir("norepo/a")
	f.mkdir("links")
	if err := os.Symlink(f.path("main/sub"), f.path("links/into-main")); err != nil {
		f.t.Fatal(err)
	}
	f.mkdir("broken")
	f.write("broken/.git", "gitdir: ../nowhere\n")
	f.mkdir("ceil/repo")
	f.initRepo("ceil/repo")
	f.mkdir("ceil/repo/a/b")
}

func TestFindMatchesGit(t *testing.T) {
	f := newFixture(t)
	f.build()
	cases := []struct {
		name string
		dir  string
		env  map[string]string
	}{
		{"repo root", "main", nil},
		{"nested subdir", "main/sub/dir", nil},
		{"linked worktree subdir", "wt/deep/er", nil},
		{"linked worktree root", "wt", nil},
		{"submodule", "super/modules/lib", nil},
		{"inside submodule", "super/modules/lib/inner", nil},
		{"superproject", "super", nil},
		{"relative gitdir", "rel/a/b", nil},
		{"symlinked dir into repo", "links/into-main", nil},
		{"core.worktree", "elsewhere", nil},
		{"GIT_DIR relative", "main", map[string]string{"GIT_DIR": ".git"}},
		{"GIT_DIR from subdir makes it the work tree", "main/sub/dir", map[string]string{"GIT_DIR": f.path("main/.git")}},
		{"GIT_DIR and GIT_WORK_TREE", "main/sub", map[string]string{"GIT_DIR": "../.git", "GIT_WORK_TREE": ".."}},
		{"GIT_DIR of a linked worktree, as in its hooks", "wt", map[string]string{"GIT_DIR": f.path("main/.git/worktrees/wt")}},
		{"GIT_DIR is a .git file", "rel", map[string]string{"GIT_DIR": f.path("rel/.git")}},
		{"GIT_WORK_TREE alone", "main/sub", map[string]string{"GIT_WORK_TREE": f.path("main/sub")}},
		{"GIT_COMMON_DIR", "main/sub", map[string]string{"GIT_DIR": f.path("main/.git/worktrees/wt"), "GIT_COMMON_DIR": f.path("main/.git")}},
		{"GIT_COMMON_DIR relative", "wt", map[string]string{"GIT_COMMON_DIR": "../main/.git"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := runGit(t, f.path(c.dir), f.root, c.env, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir", "--show-toplevel")
			if err != nil {
				t.Fatalf("git rev-parse: %v", err)
			}
			want := strings.Split(out, "\n")
			if len(want) != 3 {
				t.Fatalf("git rev-parse printed %q", out)
			}
			env := withCeiling(c.env, f.root)
			got, err := FindEnv(f.path(c.dir), func(k string) string { return env[k] })
			if err != nil {
				t.Fatalf("FindEnv: %v", err)
			}
			for i, g := range []string{got.GitDir, got.CommonDir, got.WorkTree} {
				if !filepath.IsAbs(g) || filepath.Clean(g) != g {
					t.Errorf("%q is not absolute and clean", g)
				}
				if real(t, g) != real(t, want[i]) {
					t.Errorf("%s: got %s, git says %s", []string{"git dir", "common dir", "work tree"}[i], g, want[i])
				}
			}
		})
	}
}

func TestFindErrors(t *testing.T) {
	f := newFixture(t)
	f.build()
	cases := []struct {
		name string
		dir  string
		env  map[string]string
		want error
	}{
		{"no repository", "norepo/a", nil, ErrNotRepo},
		{"inside a bare repository", "bare.git/refs/heads/x", nil, ErrBare},
		{"bare repository root", "bare.git", nil, ErrBare},
		{"inside the git dir", "main/.git/refs", nil, ErrBare},
		{"core.bare set", "flagged", nil, ErrBare},
		{"GIT_DIR is bare", "norepo", map[string]string{"GIT_DIR": f.path("bare.git")}, ErrBare},
		{"GIT_DIR missing", "norepo", map[string]string{"GIT_DIR": f.path("nothing")}, ErrNotRepo},
		{"GIT_DIR not a repository", "norepo", map[string]string{"GIT_DIR": f.path("norepo")}, ErrNotRepo},
		{".git file points nowhere", "broken", nil, ErrNotRepo},
		{"ceiling stops the walk", "ceil/repo/a/b", map[string]string{"GIT_CEILING_DIRECTORIES": f.path("ceil/repo/a")}, ErrNotRepo},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := withCeiling(c.env, f.root)
			if out, err := runGit(t, f.path(c.dir), env["GIT_CEILING_DIRECTORIES"], c.env, "rev-parse", "--show-toplevel"); err == nil {
				t.Fatalf("git rev-parse --show-toplevel succeeded (%s): the case is wrong", out)
			}
			r, err := FindEnv(f.path(c.dir), func(k string) string { return env[k] })
			if !errors.Is(err, c.want) {
				t.Fatalf("FindEnv = %+v, %v; want %v", r, err, c.want)
			}
			if c.want == ErrBare && (r.GitDir == "" || r.CommonDir == "") {
				t.Errorf("ErrBare without the git dir: %+v", r)
			}
		})
	}
}

func TestFindMissingPath(t *testing.T) {
	_, err := FindEnv(filepath.Join(t.TempDir(), "gone"), nil)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("FindEnv on a missing path: %v", err)
	}
}

// withCeiling adds the fixture's ceiling unless the case sets its own.
func withCeiling(env map[string]string, ceiling string) map[string]string {
	m := map[string]string{"GIT_CEILING_DIRECTORIES": ceiling}
	for k, v := range env {
		m[k] = v
	}
	return m
}

func real(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatalf("resolve %s: %v", p, err)
	}
	return r
}

func TestHeadMatchesGit(t *testing.T) {
	f := newFixture(t)
	f.initRepo("main")
	f.git("main", "worktree", "add", "-q", "-b", "feature", "../wt")
	f.write("wt/x", "x\n")
	f.git("wt", "add", "x")
	f.git("wt", "commit", "-q", "-m", "on feature")
	f.mkdir("fresh")
	f.git("fresh", "init", "-q", "-b", "trunk")
	f.initRepo("sha256", "--object-format=sha256")

	steps := []struct {
		name string
		dir  string
		prep func()
	}{
		{"loose branch", "main", nil},
		{"linked worktree has its own HEAD", "wt", nil},
		{"unborn branch", "fresh", nil},
		{"sha256 repository", "sha256", nil},
		{"packed branch", "main", func() { f.git("main", "pack-refs", "--all") }},
		{"branch with a slash, packed", "main", func() {
			f.git("main", "branch", "team/topic")
			f.git("main", "pack-refs", "--all")
			f.git("main", "symbolic-ref", "HEAD", "refs/heads/team/topic")
		}},
		{"symbolic ref chain", "main", func() {
			f.git("main", "symbolic-ref", "refs/heads/alias", "refs/heads/main")
			f.git("main", "symbolic-ref", "HEAD", "refs/heads/alias")
		}},
		{"unborn under a directory of refs", "main", func() {
			f.git("main", "branch", "dir/leaf")
			f.git("main", "symbolic-ref", "HEAD", "refs/heads/dir")
		}},
		{"orphan branch", "main", func() { f.git("main", "checkout", "-q", "--orphan", "gone") }},
		{"detached", "main", func() { f.git("main", "checkout", "-q", "--detach", "feature") }},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.prep != nil {
				s.prep()
			}
			wantCommit, _ := runGit(t, f.path(s.dir), f.root, nil, "rev-parse", "--verify", "-q", "HEAD")
			wantBranch, _ := runGit(t, f.path(s.dir), f.root, nil, "symbolic-ref", "-q", "--short", "HEAD")
			r, err := FindEnv(f.path(s.dir), func(k string) string {
				if k == "GIT_CEILING_DIRECTORIES" {
					return f.root
				}
				return ""
			})
			if err != nil {
				t.Fatal(err)
			}
			commit, branch, err := Head(r.GitDir, r.CommonDir)
			if err != nil {
				t.Fatalf("Head: %v", err)
			}
			if commit != wantCommit || branch != wantBranch {
				t.Fatalf("Head = %q, %q; git says %q, %q", commit, branch, wantCommit, wantBranch)
			}
		})
	}
}

// Ref reads what git reads for a ref, loose or packed, through symbolic
// refs, and nothing for one that does not exist.
func TestRefMatchesGit(t *testing.T) {
	f := newFixture(t)
	f.initRepo("main")
	f.git("main", "update-ref", "refs/tether/snapshots/loose", "HEAD")
	f.git("main", "update-ref", "refs/tether/snapshots/packed", "HEAD")
	f.git("main", "pack-refs", "--all")
	f.git("main", "commit", "-q", "--allow-empty", "-m", "second")
	f.git("main", "update-ref", "refs/tether/snapshots/both", "HEAD~1")
	f.git("main", "pack-refs", "--all")
	f.git("main", "update-ref", "refs/tether/snapshots/both", "HEAD") // the loose one wins
	f.git("main", "symbolic-ref", "refs/tether/alias", "refs/tether/snapshots/loose")
	r, err := FindEnv(f.path("main"), func(k string) string {
		if k == "GIT_CEILING_DIRECTORIES" {
			return f.root
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"refs/tether/snapshots/loose", "refs/tether/snapshots/packed", "refs/tether/snapshots/both", "refs/tether/alias", "refs/tether/snapshots/none", "refs/heads/main"} {
		want, _ := runGit(t, f.path("main"), f.root, nil, "rev-parse", "--verify", "-q", name)
		got, err := Ref(r, name)
		if err != nil || got != want {
			t.Errorf("Ref(%s) = %q, %v; git says %q", name, got, err, want)
		}
	}
	if _, err := Ref(r, "refs/../../HEAD"); err == nil {
		t.Error("Ref read a name that steps out of refs/")
	}
	if err := os.Mkdir(filepath.Join(r.CommonDir, "reftable"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Ref(r, "refs/heads/main"); !errors.Is(err, ErrReftable) {
		t.Errorf("Ref in a reftable repository: %v, want ErrReftable", err)
	}
}

func TestHeadErrors(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"refs/heads", "objects"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, head string
		want       error
	}{
		{"reftable placeholder", "ref: refs/heads/.invalid\n", ErrReftable},
		{"escape attempt", "ref: refs/../../../etc/passwd\n", nil},
		{"outside refs", "ref: HEAD\n", nil},
		{"garbage", "hello\n", nil},
		{"short hash", "abc123\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte(c.head), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := Head(dir, dir)
			if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
				t.Fatalf("Head with HEAD %q: %v", c.head, err)
			}
		})
	}
	if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/loop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "refs/heads/loop"), []byte("ref: refs/heads/loop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Head(dir, dir); err == nil || !strings.Contains(err.Error(), "nested") {
		t.Fatalf("Head with a symref loop: %v", err)
	}
}

// BenchmarkFindHead is the hook's lookup: find the repository from a
// directory three levels down, then read HEAD.
func BenchmarkFindHead(b *testing.B) {
	f := newFixture(b)
	f.initRepo("repo")
	f.mkdir("repo/a/b/c")
	dir := f.path("repo/a/b/c")
	getenv := func(string) string { return "" }
	for b.Loop() {
		r, err := FindEnv(dir, getenv)
		if err != nil {
			b.Fatal(err)
		}
		if commit, _, err := Head(r.GitDir, r.CommonDir); err != nil || commit == "" {
			b.Fatalf("Head: %q, %v", commit, err)
		}
	}
}
