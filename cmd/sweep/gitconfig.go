package main

import (
	"strings"

	"github.com/tetherdev/tether/gitdir"
)

// gitConfig reads one `tether.<key>` setting as git resolves it.
func (a *app) gitConfig(repo gitdir.Repo, key string) string {
	v, _ := gitdir.ConfigValue(repo, a.getenv, "tether", key)
	return v
}

// configBool reads a git boolean.
func configBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1":
		return true
	}
	return false
}
