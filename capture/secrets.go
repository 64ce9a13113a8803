package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tetherdev/tether/gitdir"
)

// secretFiles are the files a capture never stores, in gitignore syntax:
// secrets by their name alone. git config tether.captureExclude adds
// patterns (one per value; a "!pattern" takes one back).
var secretFiles = []string{
	".env", ".env.*",
	"*.pem", "*.key", "*.p12", "*.pfx",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	".netrc", "_netrc", ".npmrc", ".pypirc", ".git-credentials",
	// Clouds' credentials: AWS, Google Cloud (gcloud's and the application
	// default ones), Azure, Docker registries, Kubernetes.
	"**/.aws/credentials",
	"application_default_credentials.json", "**/gcloud/credentials.db", "**/gcloud/access_tokens.db", "**/gcloud/legacy_credentials/",
	"**/.azure/accessTokens.json", "**/.azure/msal_token_cache.*", "**/.azure/service_principal_entries.json",
	"**/.docker/config.json",
	"**/.kube/config",
}

// configExclude is the git config key whose values add to secretFiles.
const configExclude = "tether.captureExclude"

// SecretPatterns are the patterns of the files a capture never stores:
// tether's own, then those of git config tether.captureExclude, which
// come last so that a "!pattern" there takes one of tether's back.
func (w *Worktree) SecretPatterns() ([]string, error) {
	extra, _, err := w.excludeConfig()
	if err != nil {
		return nil, err
	}
	return append(append([]string(nil), secretFiles...), extra...), nil
}

// excludeConfig reads tether.captureExclude and the user's own
// core.excludesFile. Parsed from the config files, as git resolves them,
// unless one of them includes others: then git says, as nothing may be
// missed here.
func (w *Worktree) excludeConfig() (extra []string, userExcludes string, err error) {
	extra, incl := gitdir.ConfigValues(w.repo, w.getenv, "tether", "captureExclude")
	files, incl2 := gitdir.ConfigValues(w.repo, w.getenv, "core", "excludesFile")
	if incl || incl2 {
		out, gerr := w.gitRaw("", nil, "config", "--null", "--get-regexp", `^(tether\.captureexclude|core\.excludesfile)$`)
		var exit *exec.ExitError
		if gerr != nil && !(errors.As(gerr, &exit) && exit.ExitCode() == 1) { // 1: none is set
			return nil, "", fmt.Errorf("capture: read git config: %w", gerr)
		}
		extra, files = nil, nil
		for _, kv := range strings.Split(out, "\x00") {
			k, v, _ := strings.Cut(kv, "\n")
			switch k {
			case "tether.captureexclude":
				extra = append(extra, v)
			case "core.excludesfile":
				files = append(files, v)
			}
		}
	}
	for i, p := range extra {
		extra[i] = strings.TrimSpace(p)
	}
	if len(files) > 0 {
		return extra, w.userPath(files[len(files)-1]), nil
	}
	// git's default when core.excludesFile is not set.
	if xdg := w.getenv("XDG_CONFIG_HOME"); xdg != "" {
		return extra, filepath.Join(xdg, "git", "ignore"), nil
	}
	if home := w.getenv("HOME"); home != "" {
		return extra, filepath.Join(home, ".config", "git", "ignore"), nil
	}
	return extra, "", nil
}

// userPath resolves a path of the user's git config as git does: ~/ is
// the home directory, a relative path is the worktree's.
func (w *Worktree) userPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(w.getenv("HOME"), rest)
	}
	if p != "" && !filepath.IsAbs(p) {
		return filepath.Join(w.repo.WorkTree, p)
	}
	return p
}

// getenv reads the environment the git commands get: the process's, with
// w.env on top.
func (w *Worktree) getenv(key string) string {
	for i := len(w.env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(w.env[i], "="); ok && k == key {
			return v
		}
	}
	return os.Getenv(key)
}

// excludes prepares what keeps the secret files out of a capture: the
// file given to git as core.excludesFile for the capture's commands alone
// (the user's own global excludes, which it replaces there, then the
// secret files), and it returns the secret patterns. git never hashes a
// file its excludes match, unless the index tracks it: see purgeSecrets.
func (w *Worktree) excludes() (file string, patterns []string, err error) {
	extra, userFile, err := w.excludeConfig()
	if err != nil {
		return "", nil, err
	}
	patterns = append(append([]string(nil), secretFiles...), extra...)
	var b bytes.Buffer
	if userFile != "" {
		data, err := os.ReadFile(userFile)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", nil, fmt.Errorf("capture: read your excludes: %w", err)
		}
		b.Write(data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	b.WriteString("# tether: files a capture never stores (and git config tether.captureExclude)\n")
	for _, p := range patterns {
		b.WriteString(p + "\n")
	}
	file = filepath.Join(filepath.Dir(w.IndexFile()), w.key()+".exclude")
	if err := writeIfChanged(file, b.Bytes()); err != nil {
		return "", nil, fmt.Errorf("capture: %w", err)
	}
	return file, patterns, nil
}

// writeIfChanged writes data to file unless it holds it already.
func writeIfChanged(file string, data []byte) error {
	if old, err := os.ReadFile(file); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	return replaceFile(file, bytes.NewReader(data))
}

// replaceFile writes what src holds to file through a temporary file
// renamed into place, so that a reader never sees half of it.
func replaceFile(file string, src io.Reader) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, src)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// purgeSecrets drops from the private index the files the secret patterns
// match, before anything is hashed: git's excludes keep out only what the
// index does not track, and the private index starts as a copy of the
// user's (which may track a .env) and may come from a capture made under
// fewer patterns. It runs when the patterns differ from those the index
// was last purged under (a stamp beside it), so a capture pays nothing
// for it otherwise. A secret file the user tracks is thus absent from
// every capture too: captures hold no secret file, tracked or not.
func (w *Worktree) purgeSecrets(index string, patterns []string) error {
	stamp := index + ".secrets"
	want := []byte(strings.Join(patterns, "\n") + "\n")
	if old, err := os.ReadFile(stamp); err == nil && bytes.Equal(old, want) {
		return nil
	}
	if _, err := os.Stat(index); err == nil {
		args := []string{"ls-files", "-z", "--cached", "--ignored"}
		for _, p := range patterns {
			args = append(args, "--exclude="+p)
		}
		tracked, err := w.gitRaw(index, nil, args...)
		if err != nil {
			return fmt.Errorf("capture: %w", err)
		}
		if tracked != "" {
			if _, err := w.git(index, strings.NewReader(tracked), "update-index", "-z", "--force-remove", "--stdin"); err != nil {
				return fmt.Errorf("capture: %w", err)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("capture: %w", err)
	}
	if err := writeIfChanged(stamp, want); err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	return nil
}

// SecretFiles lists the worktree's files the secret patterns match,
// tracked or not (slash-separated, as git names them).
func (w *Worktree) SecretFiles() ([]string, error) {
	patterns, err := w.SecretPatterns()
	if err != nil {
		return nil, err
	}
	args := []string{"ls-files", "-z", "--cached", "--others", "--ignored"}
	for _, p := range patterns {
		args = append(args, "--exclude="+p)
	}
	out, err := w.gitRaw("", nil, args...)
	if err != nil {
		return nil, fmt.Errorf("list secret files: %w", err)
	}
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return slices.Compact(files), nil
}
