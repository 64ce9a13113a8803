package main

import (
	"strings"

	"github.com/tetherdev/tether/checkpoint"
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

// transcriptRoute is where the transcripts travel: git config
// tether.transcriptsRemote names a remote of their own ("": with the
// checkpoints), and tether.pushTranscripts false keeps them in this clone.
func (a *app) transcriptRoute(repo gitdir.Repo) checkpoint.PushOptions {
	return checkpoint.PushOptions{
		TranscriptsRemote: strings.TrimSpace(a.gitConfig(repo, "transcriptsRemote")),
		KeepTranscripts:   configFalse(a.gitConfig(repo, "pushTranscripts")),
	}
}

// configFalse reads a git boolean that is set, and false.
func configFalse(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "0":
		return true
	}
	return false
}
