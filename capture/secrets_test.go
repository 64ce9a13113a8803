package capture_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/capture"
)

// isolated gives git and the captures a home of their own: the machine's
// global config and excludes play no part.
func isolated(t *testing.T) []string {
	t.Helper()
	home := t.TempDir()
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM=1"}
}

func runEnv(t *testing.T, env []string, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// everyObject is every object of the repository, loose or packed,
// referenced or not, as git prints them.
func everyObject(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("git", "cat-file", "--batch-all-objects", "--batch")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file --batch-all-objects: %v", err)
	}
	return string(out)
}

// Captures of a worktree holding secret files, tracked or not, never write
// one into the object store: after captures at every boundary, with the
// secrets rewritten in between, no object holds a secret. The other files
// are captured, the user's own global excludes still apply, and no file of
// the user's is written.
func TestCaptureNeverStoresSecrets(t *testing.T) {
	repo, st := testRepo(t)
	dir := repo.WorkTree
	env := isolated(t)
	home := strings.TrimPrefix(env[0], "HOME=")
	userExcludes := filepath.Join(home, ".config", "git", "ignore")
	write(t, filepath.Dir(userExcludes), "ignore", "*.bak\n")
	// A secret-named file the user committed long ago: its first content
	// is theirs in the store; what the agent writes into it is not.
	write(t, dir, "config/.env.local", "committed by the user\n")
	runEnv(t, env, dir, "add", "config/.env.local")
	runEnv(t, env, dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "config")
	runEnv(t, env, dir, "config", "tether.captureExclude", "*.secret")
	runEnv(t, env, dir, "config", "--add", "tether.captureExclude", "!.npmrc") // taken back: this one is not a secret here

	secrets := map[string]string{
		".env":                  "SECRET_DOTENV_",
		"config/.env.local":     "SECRET_TRACKED_",
		"deploy/id_rsa":         "SECRET_SSH_",
		"deploy/id_ed25519.pub": "SECRET_SSHPUB_",
		"certs/server.pem":      "SECRET_PEM_",
		"tls/server.key":        "SECRET_KEY_",
		".aws/credentials":      "SECRET_AWS_",
		"home/.netrc":           "SECRET_NETRC_",
		"pkg/.pypirc":           "SECRET_PYPI_",
		"notes.secret":          "SECRET_USERPATTERN_",
	}
	writeSecrets := func(round int) {
		for name, s := range secrets {
			write(t, dir, name, s+string(rune('A'+round))+"\n")
		}
	}
	write(t, dir, "src/main.go", "package main\n")
	write(t, dir, ".npmrc", "registry=https://registry.example/\n")
	write(t, dir, "old.bak", "the user ignores these\n")
	writeSecrets(0)
	userFiles := map[string][]byte{}
	for _, f := range []string{userExcludes, filepath.Join(repo.GitDir, "info", "exclude"), filepath.Join(dir, ".gitignore"), filepath.Join(repo.CommonDir, "config")} {
		userFiles[f], _ = os.ReadFile(f)
	}

	w := capture.New(repo, st).WithEnv(env...)
	var trees []string
	for turn := 1; turn <= 2; turn++ {
		for _, at := range []string{capture.Start, capture.End} {
			e, err := w.CaptureTurn("sess-secret", turn, at, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			trees = append(trees, e.Tree)
			writeSecrets(len(trees))
		}
	}
	e, err := w.CaptureTurn("sess-secret", 2, capture.Swept, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	trees = append(trees, e.Tree)

	objects := everyObject(t, dir)
	for name, s := range secrets {
		if strings.Contains(objects, s) {
			t.Errorf("the object store holds %s's secret (%q)", name, s)
		}
	}
	for _, tree := range trees {
		files := runEnv(t, env, dir, "ls-tree", "-r", "--name-only", tree)
		if want := ".gitignore\n.npmrc\na.txt\nb.txt\nsrc/main.go"; files != want {
			t.Errorf("capture %s holds\n%s\nwant\n%s", tree, files, want)
		}
	}
	for f, before := range userFiles {
		if after, _ := os.ReadFile(f); string(after) != string(before) {
			t.Errorf("%s changed", f)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".gitignore.tether")); err == nil {
		t.Error("a file was added to the worktree")
	}
	if got := runEnv(t, env, dir, "status", "--porcelain", "--", "config"); got != "M config/.env.local" {
		t.Errorf("git status of the tracked secret: %q; want it modified, still tracked", got)
	}
}

// A private index written before a file was secret (a capture of an
// earlier tether, or before git config tether.captureExclude named it)
// tracks it; the next capture drops it before hashing anything.
func TestCaptureDropsSecretsAnOldIndexTracks(t *testing.T) {
	repo, st := testRepo(t)
	dir := repo.WorkTree
	env := isolated(t)
	w := capture.New(repo, st).WithEnv(env...)
	write(t, dir, "notes.txt", "SECRET_BEFORE\n")
	write(t, dir, ".env", "SECRET_OLD_DOTENV\n")
	if _, err := w.CaptureTurn("sess-old", 1, capture.Start, time.Now()); err != nil {
		t.Fatal(err)
	}
	// As an earlier tether's capture left it: .env tracked in the index.
	cmd := exec.Command("git", "add", "-f", ".env")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append(env, "GIT_INDEX_FILE="+w.IndexFile())...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git add -f: %v\n%s", err, out)
	}
	if err := os.Remove(w.IndexFile() + ".secrets"); err != nil {
		t.Fatal(err)
	}
	runEnv(t, env, dir, "config", "tether.captureExclude", "notes.txt")
	write(t, dir, "notes.txt", "SECRET_AFTER\n")
	write(t, dir, ".env", "SECRET_NEW_DOTENV\n")
	e, err := w.CaptureTurn("sess-old", 1, capture.End, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	objects := everyObject(t, dir)
	for _, s := range []string{"SECRET_AFTER", "SECRET_NEW_DOTENV"} {
		if strings.Contains(objects, s) {
			t.Errorf("the object store holds %q", s)
		}
	}
	if files := runEnv(t, env, dir, "ls-tree", "-r", "--name-only", e.Tree); files != ".gitignore\na.txt\nb.txt" {
		t.Errorf("the capture holds\n%s", files)
	}
}

// The patterns a capture keeps out are tether's, then the user's, in
// that order: git config tether.captureExclude adds some and takes back
// others.
func TestSecretPatterns(t *testing.T) {
	repo, st := testRepo(t)
	env := isolated(t)
	runEnv(t, env, repo.WorkTree, "config", "tether.captureExclude", "*.secret")
	runEnv(t, env, repo.WorkTree, "config", "--add", "tether.captureExclude", "!.npmrc")
	got, err := capture.New(repo, st).WithEnv(env...).SecretPatterns()
	if err != nil {
		t.Fatal(err)
	}
	n := len(got)
	if n < 4 || got[0] != ".env" || got[n-2] != "*.secret" || got[n-1] != "!.npmrc" {
		t.Errorf("SecretPatterns = %q", got)
	}
}

// A pattern set in a config file that another includes is found too:
// git itself is asked then, as the config parser does not follow
// includes. The user's core.excludesFile (~/ expanded) still applies.
func TestCaptureExcludeThroughAnInclude(t *testing.T) {
	repo, st := testRepo(t)
	dir := repo.WorkTree
	env := isolated(t)
	home := strings.TrimPrefix(env[0], "HOME=")
	write(t, home, ".gitconfig", "[include]\n\tpath = ~/.gitconfig-more\n")
	write(t, home, ".gitconfig-more", "[tether]\n\tcaptureExclude = *.secret\n[core]\n\texcludesFile = ~/my-ignores\n")
	write(t, home, "my-ignores", "*.bak\n")
	write(t, dir, "notes.secret", "SECRET_INCLUDED\n")
	write(t, dir, "old.bak", "ignored by the user\n")
	write(t, dir, "kept.txt", "kept\n")
	e, err := capture.New(repo, st).WithEnv(env...).CaptureTurn("sess-incl", 1, capture.Start, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(everyObject(t, dir), "SECRET_INCLUDED") {
		t.Error("the object store holds the secret an included config names")
	}
	if files := runEnv(t, env, dir, "ls-tree", "-r", "--name-only", e.Tree); files != ".gitignore\na.txt\nb.txt\nkept.txt" {
		t.Errorf("the capture holds\n%s", files)
	}
}
