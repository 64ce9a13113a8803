package proclive

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrSharedDaemon means the hook's agent-side parent is a daemon serving
// many sessions (Codex's app-server, started by the first TUI and shared
// by every later one): it outlives each of them, so it owns none, and the
// session's client could not be told apart.
var ErrSharedDaemon = errors.New("the hook runs under a daemon shared by many sessions")

// isSharedDaemon tells Codex's app-server running as the daemon its TUIs
// share: `codex app-server --listen unix:// --managed-daemon`. An
// app-server on stdio (an editor's) serves the one client that started it,
// and dies with it: that one may own a session.
func isSharedDaemon(p program, args []string) bool {
	if p.main() != "codex" || !slices.Contains(args, "app-server") {
		return false
	}
	for i, a := range args {
		switch {
		case a == "--managed-daemon":
			return true
		case a == "--listen" && i+1 < len(args):
			return args[i+1] != "stdio://"
		case strings.HasPrefix(a, "--listen="):
			return a != "--listen=stdio://"
		}
	}
	return false
}

// codexNotTUI are Codex's subcommands that run no TUI: none of them is a
// client of the shared daemon.
var codexNotTUI = names{"exec", "e", "app-server", "mcp-server", "mcp", "login", "logout", "completion",
	"sandbox", "debug", "apply", "a", "cloud", "features", "help", "proto", "responses-api-proxy",
	"stdio-to-uds", "generate-ts", "generate-json-schema"}

// isCodexTUI tells a Codex TUI that uses the shared daemon, from its
// argv: `codex`, `codex "prompt"`, `codex resume ID`, not `codex exec` nor
// `codex --no-daemon` (whose hooks run under the TUI itself).
func isCodexTUI(argv []string) bool {
	if len(argv) == 0 || progName(argv[0]) != "codex" || slices.Contains(argv, "--no-daemon") {
		return false
	}
	return len(argv) == 1 || strings.HasPrefix(argv[1], "-") || !codexNotTUI.has(argv[1])
}

// client is a process that may be the daemon's client for the session.
type client struct {
	proc procInfo
	argv []string
	cwd  string
}

// pickClient chooses the session's client among the Codex TUIs running: the
// one resuming the session by its ID, else the only one working in dir. Any
// other case is ambiguous: no owner rather than a wrong one.
func pickClient(clients []client, dir, session string) (procInfo, error) {
	var named, inDir []procInfo
	for _, c := range clients {
		if !isCodexTUI(c.argv) {
			continue
		}
		if session != "" && slices.Contains(c.argv[1:], session) {
			named = append(named, c.proc)
		}
		if dir != "" && c.cwd == dir {
			inDir = append(inDir, c.proc)
		}
	}
	switch {
	case len(named) == 1:
		return named[0], nil
	case len(named) == 0 && len(inDir) == 1:
		return inDir[0], nil
	}
	return procInfo{}, fmt.Errorf("%w: %d Codex TUIs resume session %q and %d run in %s",
		ErrSharedDaemon, len(named), session, len(inDir), dir)
}
