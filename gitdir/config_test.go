package gitdir

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseConfigValue(t *testing.T) {
	const text = `# comment
[core]
	bare = false
[tether]
	staleAfter = 12h ; trailing comment
	GitHub
[remote "origin"]
	url = "git@github.com:o/r.git"
[tether]
	staleafter = "7d"
[other.sub]
	k = v
[tether] inline = yes
`
	tests := []struct {
		section, key, want string
		found              bool
	}{
		{"tether", "staleAfter", "7d", true}, // the last one wins, keys are case-insensitive
		{"tether", "github", "true", true},   // a bare key is true
		{"remote.origin", "url", "git@github.com:o/r.git", true},
		{"remote.upstream", "url", "", false},
		{"other.sub", "k", "v", true},
		{"tether", "inline", "yes", true},
		{"core", "missing", "", false},
	}
	for _, tt := range tests {
		got, found := parseConfigValue(text, tt.section, tt.key)
		if got != tt.want || found != tt.found {
			t.Errorf("%s.%s = %q, %v; want %q, %v", tt.section, tt.key, got, found, tt.want, tt.found)
		}
	}
}

// ConfigValue agrees with `git config --get` on what git itself wrote, across
// the global, repository and worktree files.
func TestConfigValueMatchesGit(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	env := map[string]string{"HOME": home, "GIT_CONFIG_NOSYSTEM": "1"}
	getenv := func(k string) string { return env[k] }
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = filepath.Join(dir, "repo")
		cmd.Env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		if err != nil && !strings.Contains(strings.Join(args, " "), "--get") {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", filepath.Join(dir, "repo")).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	git("config", "--global", "tether.staleAfter", "1h")
	git("config", "--global", "tether.github", "true")
	git("config", "tether.staleAfter", "has \"quotes\" and ; semicolon")
	repo, err := FindEnv(filepath.Join(dir, "repo"), getenv)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"staleAfter", "github", "nosuch"} {
		want := git("config", "--get", "tether."+key)
		got, _ := ConfigValue(repo, getenv, "tether", key)
		if got != want {
			t.Errorf("tether.%s = %q, git says %q", key, got, want)
		}
	}
}

func FuzzParseConfigValue(f *testing.F) {
	f.Add("[tether]\n\tstaleAfter = 1h\n", "staleAfter")
	f.Add("[remote \"o\"]\nurl=\"a\\\"b\" # c\n", "url")
	f.Fuzz(func(t *testing.T, text, key string) {
		v, found := parseConfigValue(text, "tether", key)
		if !found && v != "" {
			t.Fatalf("value %q without a match", v)
		}
	})
}

// ConfigValues lists every value of a setting given many times, as `git
// config --get-all` does, and says when a file includes others.
func TestConfigValuesMatchGit(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	env := map[string]string{"HOME": home, "GIT_CONFIG_NOSYSTEM": "1"}
	getenv := func(k string) string { return env[k] }
	if out, err := exec.Command("git", "init", "-q", filepath.Join(dir, "repo")).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = filepath.Join(dir, "repo")
		cmd.Env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "PATH=/usr/bin:/bin"}
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	git("config", "--global", "tether.captureExclude", "*.a")
	git("config", "--add", "tether.captureExclude", "*.b")
	git("config", "--add", "tether.captureExclude", "!c d")
	repo, err := FindEnv(filepath.Join(dir, "repo"), getenv)
	if err != nil {
		t.Fatal(err)
	}
	got, includes := ConfigValues(repo, getenv, "tether", "captureExclude")
	if want := strings.TrimSpace(git("config", "--get-all", "tether.captureExclude")); strings.Join(got, "\n") != want || includes {
		t.Errorf("ConfigValues = %q, %v; git says %q, and no include", got, includes, want)
	}
	git("config", "--global", "include.path", "~/more")
	if _, includes := ConfigValues(repo, getenv, "tether", "captureExclude"); !includes {
		t.Error("an include.path went unnoticed")
	}
}
