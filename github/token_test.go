package github

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestTokenOrder(t *testing.T) {
	cases := []struct {
		name    string
		host    string
		env     map[string]string
		gh      string // what gh prints
		ghErr   error
		want    string
		wantGH  bool // gh consulted
		wantErr bool
	}{
		{name: "GH_TOKEN first", host: "github.com", env: map[string]string{"GH_TOKEN": "tok-gh", "GITHUB_TOKEN": "tok-github"}, want: "tok-gh"},
		{name: "GITHUB_TOKEN second", host: "github.com", env: map[string]string{"GITHUB_TOKEN": "tok-github"}, want: "tok-github"},
		{name: "blank GH_TOKEN skipped", host: "github.com", env: map[string]string{"GH_TOKEN": "  ", "GITHUB_TOKEN": "tok-github"}, want: "tok-github"},
		{name: "gh last", host: "github.com", gh: "gho_fromgh\n", want: "gho_fromgh", wantGH: true},
		{name: "gh fails", host: "github.com", ghErr: errors.New("gh is not installed"), wantGH: true, wantErr: true},
		{name: "gh prints nothing", host: "github.com", gh: "\n", wantGH: true, wantErr: true},
		{name: "gh prints junk", host: "github.com", gh: "not logged in to any hosts\n", wantGH: true, wantErr: true},
		{name: "invalid env token", host: "github.com", env: map[string]string{"GH_TOKEN": "tok\nen"}, wantErr: true},
		{name: "GHE.com tenant takes GH_TOKEN", host: "acme.ghe.com", env: map[string]string{"GH_TOKEN": "tok-gh"}, want: "tok-gh"},
		{name: "GHE server never gets GH_TOKEN", host: "ghe.corp.example", env: map[string]string{"GH_TOKEN": "tok-gh", "GITHUB_TOKEN": "tok-github"}, gh: "ghe-from-gh", want: "ghe-from-gh", wantGH: true},
		{name: "GHE server: GH_ENTERPRISE_TOKEN", host: "ghe.corp.example", env: map[string]string{"GH_ENTERPRISE_TOKEN": "tok-ghe", "GITHUB_ENTERPRISE_TOKEN": "tok-ghe2"}, want: "tok-ghe"},
		{name: "GHE server: GITHUB_ENTERPRISE_TOKEN", host: "ghe.corp.example", env: map[string]string{"GITHUB_ENTERPRISE_TOKEN": "tok-ghe2"}, want: "tok-ghe2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			run := func(_ context.Context, host string) (string, error) {
				asked = append(asked, host)
				return tc.gh, tc.ghErr
			}
			got, err := Token(context.Background(), tc.host, func(k string) string { return tc.env[k] }, run)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Fatalf("Token = %q, %v; want %q, error %v", got, err, tc.want, tc.wantErr)
			}
			if err != nil {
				if !errors.Is(err, ErrNoToken) {
					t.Errorf("error %v does not wrap ErrNoToken", err)
				}
				for _, v := range tc.env {
					if strings.TrimSpace(v) != "" && strings.Contains(err.Error(), strings.TrimSpace(v)) {
						t.Errorf("error %q reveals a token", err)
					}
				}
			}
			if (len(asked) > 0) != tc.wantGH || len(asked) > 0 && asked[0] != tc.host {
				t.Errorf("gh asked for %q, want asked: %v (for %s)", asked, tc.wantGH, tc.host)
			}
		})
	}
}

// TestGHAuthTokenScript runs a real `gh` (a script) found on PATH.
func TestGHAuthTokenScript(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake gh is a shell script")
	}
	dir := t.TempDir()
	script := `#!/bin/sh
if [ "$*" = "auth token --hostname github.com" ]; then
	printf 'gho_fromScript123\n'
	exit 0
fi
echo "gho_leakedOnStderr: unexpected arguments: $*" >&2
exit 4
`
	if err := os.WriteFile(filepath.Join(dir, "gh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	t.Setenv("GH_TOKEN", "")
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GH_ENTERPRISE_TOKEN", "")
	t.Setenv("GITHUB_ENTERPRISE_TOKEN", "")
	ctx := context.Background()

	tok, err := LookupToken(ctx, "github.com")
	if err != nil || tok != "gho_fromScript123" {
		t.Fatalf("LookupToken(github.com) = %q, %v; want the token gh printed", tok, err)
	}
	_, err = LookupToken(ctx, "ghe.corp.example")
	if !errors.Is(err, ErrNoToken) || !strings.Contains(err.Error(), "exit status 4") {
		t.Fatalf("gh failing: err %v, want ErrNoToken with gh's exit status", err)
	}
	if strings.Contains(err.Error(), "gho_") {
		t.Fatalf("gh's output leaked into the error: %v", err)
	}

	t.Setenv("PATH", t.TempDir())
	if _, err := LookupToken(ctx, "github.com"); !errors.Is(err, ErrNoToken) || !strings.Contains(err.Error(), "gh is not installed") {
		t.Fatalf("without gh: %v, want ErrNoToken saying gh is not installed", err)
	}
}

func TestNewClientNeedsToken(t *testing.T) {
	for _, tok := range []string{"", "two words", "line\nbreak"} {
		c, err := NewClient("github.com", tok)
		if c != nil || !errors.Is(err, ErrNoToken) {
			t.Errorf("NewClient with token %q = %v, %v; want ErrNoToken", tok, c, err)
		}
		if tok != "" && strings.Contains(err.Error(), tok) {
			t.Errorf("error %q reveals the token", err)
		}
	}
	c, err := NewClient("ghe.corp.example", "tok")
	if err != nil || c.Host() != "ghe.corp.example" || c.api.BaseURL() != "https://ghe.corp.example/api/v3/" {
		t.Fatalf("NewClient(GHE) = %v, %v", c, err)
	}
}
