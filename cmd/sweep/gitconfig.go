package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/config"

	"github.com/tetherdev/tether/gitdir"
)

// gitConfig reads one `tether.<key>` setting the way git would resolve it
// (system, global, repository, worktree; the last one wins), by parsing the
// files rather than running git: the post-commit sweep has a budget of a few
// milliseconds. include.path directives are not followed.
func (a *app) gitConfig(repo gitdir.Repo, key string) string {
	var files []string
	if a.getenv("GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, "/etc/gitconfig")
	}
	if g := a.getenv("GIT_CONFIG_GLOBAL"); g != "" {
		files = append(files, g)
	} else {
		xdg := a.getenv("XDG_CONFIG_HOME")
		home := a.getenv("HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	files = append(files, filepath.Join(repo.CommonDir, "config"), filepath.Join(repo.GitDir, "config.worktree"))

	value := ""
	for _, f := range files {
		if v, ok := readConfigValue(f, "tether", key); ok {
			value = v
		}
	}
	return value
}

func readConfigValue(path, section, key string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	cfg := config.New()
	if err := config.NewDecoder(f).Decode(cfg); err != nil {
		return "", false
	}
	if !cfg.HasSection(section) {
		return "", false
	}
	value, found := "", false
	for _, o := range cfg.Section(section).Options {
		if strings.EqualFold(o.Key, key) {
			value, found = o.Value, true // the last one wins, as in git
		}
	}
	return value, found
}

// configBool reads a git boolean.
func configBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1":
		return true
	}
	return false
}
