//go:build e2e

// Package e2e runs the real agent CLIs (Claude Code, Codex, Gemini CLI,
// Copilot CLI, OpenCode, Factory's Droid, Pi, Qwen Code; the versions in
// docs/agents.md) with tether installed, offline against the
// model mocks of internal/mockllm, and checks what tether recorded:
// sessions, phases, owners, checkpoints, notes, resume, doctor and git
// fsck. It is behind the e2e build tag:
//
//	go test -tags e2e -count=1 -parallel 8 -timeout 30m ./e2e
//
// Each agent's CLI is installed from the npm registry by the suite itself,
// once, into $TETHER_E2E_CACHE (default ~/.cache/tether-e2e/<pkg>@<version>);
// only npm's absence skips a test. TUI cases drive the agent in tmux.
//
// The harness (harness_test.go), one file per agent beside it:
//   - TestMain builds tether-hook and tether-sweep once (bin);
//   - npmCLI installs a pinned package and returns its bin directory;
//   - newRepo makes a scratch repository with its own HOME and a clean
//     environment (env -i style; PATH is tether's bin, the added
//     directories, node's, /usr/bin:/bin) and runs tether-sweep install;
//     its methods run commands there (run, git, sweep, start), read
//     status (sessions, waitSession), notes and checkpoints (note, show),
//     and check that doctor and git fsck --strict are clean;
//   - newTmux drives a TUI in a private tmux server (keys, text,
//     waitText, pane capture);
//   - findProc and signal find an agent's process below a root and kill it.
//
// Every wait has a deadline; a failing test logs the store's tether.log,
// status, each started process's output and the tmux pane.
package e2e
