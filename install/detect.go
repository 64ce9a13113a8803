package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tetherdev/tether/agent"
)

// Presence is an agent found on this machine, and the places it was seen:
// its config directory in the project, its home in the user's directory,
// its command on PATH.
type Presence struct {
	Agent string   `json:"agent"`
	Where []string `json:"where"` // e.g. ".codex/ in the repository", "~/.codex", "codex on PATH"
}

// Detect lists the agents present for the repository at opts.Dir and the
// user at opts.Home, in agentSpecs' order: the agents tether would set up
// by default. Each is seen where a user would expect: a project config
// directory, a user-level home (honouring CODEX_HOME, COPILOT_HOME and
// XDG_CONFIG_HOME as the agents do), a command on PATH.
func Detect(opts Options) ([]Presence, error) {
	in, err := newInstaller(opts)
	if err != nil {
		return nil, err
	}
	return in.detect(), nil
}

func (in *installer) detect() []Presence {
	var out []Presence
	for _, s := range agentSpecs {
		if where := in.seen(s); len(where) > 0 {
			out = append(out, Presence{Agent: s.name, Where: where})
		}
	}
	return out
}

// seen is where spec's agent shows itself, for people to read.
func (in *installer) seen(spec agentSpec) []string {
	var where []string
	if isDir(filepath.Join(in.repo.top, filepath.FromSlash(spec.marker))) {
		where = append(where, spec.marker+"/ in the repository")
	}
	if home := in.userDir(spec); home != "" && isDir(home) {
		where = append(where, in.tilde(home))
	}
	if info, ok := agent.Lookup(spec.name); ok && info.Binary != "" {
		if _, err := in.lookPath(info.Binary); err == nil {
			where = append(where, info.Binary+" on PATH")
		}
	}
	return where
}

// userDir is the directory an agent keeps in the user's home, where its
// user-level config goes: ~/.claude, $CODEX_HOME or ~/.codex, ...; "" when
// the home is unknown.
func (in *installer) userDir(spec agentSpec) string {
	switch spec.name {
	case "codex":
		return in.agentHome("CODEX_HOME", ".codex")
	case "copilot":
		return in.agentHome("COPILOT_HOME", ".copilot")
	case "opencode":
		if base := in.agentHome("XDG_CONFIG_HOME", ".config"); base != "" {
			return filepath.Join(base, "opencode")
		}
		return ""
	case "pi":
		return in.agentHome("PI_CODING_AGENT_DIR", ".pi/agent")
	}
	if in.opts.Home == "" {
		return ""
	}
	first, _, _ := strings.Cut(spec.user, "/")
	return filepath.Join(in.opts.Home, first)
}

// tilde shortens a path under the home directory to ~/..., as people
// write it.
func (in *installer) tilde(p string) string {
	if h := in.opts.Home; h != "" {
		if rel, err := filepath.Rel(h, p); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return p
}

func (in *installer) lookPath(file string) (string, error) {
	if in.opts.LookPath != nil {
		return in.opts.LookPath(file)
	}
	return exec.LookPath(file)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// names lists the agents of a detection.
func names(ps []Presence) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Agent)
	}
	return slices.Clip(out)
}
