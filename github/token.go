package github

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ErrNoToken means no GitHub token could be found; no call is made without one.
var ErrNoToken = errors.New("no GitHub token")

// ghTimeout bounds `gh auth token`: a sweep must not hang on a stuck helper.
const ghTimeout = 5 * time.Second

// RunGH runs `gh auth token` for a host and returns what it printed.
type RunGH func(ctx context.Context, host string) (string, error)

// LookupToken finds a token for host from the environment, then from the gh
// CLI; see Token.
func LookupToken(ctx context.Context, host string) (string, error) {
	return Token(ctx, host, os.Getenv, GHAuthToken)
}

// Token finds a token for host without ever revealing it in an error. For
// github.com and GHE.com tenants it tries GH_TOKEN, then GITHUB_TOKEN; for
// other (GitHub Enterprise Server) hosts GH_ENTERPRISE_TOKEN, then
// GITHUB_ENTERPRISE_TOKEN, as the gh CLI does, so a github.com token is
// never sent to another server. Then `gh auth token --hostname host`.
// Nothing found: an error wrapping ErrNoToken.
func Token(ctx context.Context, host string, getenv func(string) string, runGH RunGH) (string, error) {
	vars := []string{"GH_TOKEN", "GITHUB_TOKEN"}
	if !dotComHost(host) {
		vars = []string{"GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}
	}
	for _, v := range vars {
		tok := strings.TrimSpace(getenv(v))
		if tok == "" {
			continue
		}
		if !validToken(tok) {
			return "", fmt.Errorf("%w for %s: %s holds whitespace or control characters", ErrNoToken, host, v)
		}
		return tok, nil
	}
	out, err := runGH(ctx, host)
	if err != nil {
		return "", fmt.Errorf("%w for %s: set %s or run `gh auth login --hostname %s` (%w)", ErrNoToken, host, strings.Join(vars, " or "), host, err)
	}
	tok := strings.TrimSpace(out)
	if tok == "" || !validToken(tok) {
		return "", fmt.Errorf("%w for %s: gh auth token printed no usable token", ErrNoToken, host)
	}
	return tok, nil
}

// GHAuthToken runs `gh auth token --hostname host` with a short timeout.
// Its errors never carry gh's output, which may hold the token.
func GHAuthToken(ctx context.Context, host string) (string, error) {
	path, err := exec.LookPath("gh")
	if err != nil {
		return "", errors.New("gh is not installed")
	}
	ctx, cancel := context.WithTimeout(ctx, ghTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "auth", "token", "--hostname", host)
	cmd.Env = append(os.Environ(), "GH_PROMPT_DISABLED=1", "NO_COLOR=1")
	cmd.WaitDelay = time.Second // a child holding the pipe open must not outlive the timeout
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("gh auth token: timed out after %s", ghTimeout)
		}
		return "", fmt.Errorf("gh auth token: %w", err)
	}
	return stdout.String(), nil
}

// dotComHost reports whether host is github.com or a GHE.com tenant, the
// hosts GH_TOKEN and GITHUB_TOKEN are meant for.
func dotComHost(host string) bool {
	return host == "github.com" || strings.HasSuffix(host, ".ghe.com")
}

// validToken rejects tokens that could not travel in an HTTP header.
func validToken(tok string) bool {
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return tok != ""
}
