package sweep

import (
	"os/exec"
	"testing"

	"github.com/tetherdev/tether/capture"
)

// Rewind's filter agrees with the patterns captures keep out: a path is
// secret when it, or a directory above it, matches; git config
// tether.captureExclude adds patterns and takes some back.
func TestSecretMatcher(t *testing.T) {
	repo, st := newRepo(t)
	for _, args := range [][]string{
		{"config", "tether.captureExclude", "*.secret"},
		{"config", "--add", "tether.captureExclude", "!.npmrc"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo.WorkTree
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	secret, err := secretMatcher(capture.New(repo, st))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		".env":                  true,
		"svc/.env":              true,
		".env.production":       true,
		"deploy/id_rsa":         true,
		"deploy/id_ed25519.pub": true,
		"certs/tls.pem":         true,
		"a/b/server.key":        true,
		"home/.aws/credentials": true,
		"cfg/gcloud/legacy_credentials/me/adc.json": true,
		"notes.secret":        true,
		".npmrc":              false,
		"src/main.go":         false,
		"env.go":              false,
		"keys.txt":            false,
		"docs/credentials.md": false,
	} {
		if got := secret(path); got != want {
			t.Errorf("secret(%q) = %v, want %v", path, got, want)
		}
	}
}
