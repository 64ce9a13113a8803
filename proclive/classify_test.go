package proclive

import "testing"

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		want role
	}{
		// Agents and other programs own the session.
		{"claude", []string{"/usr/local/lib/node_modules/@anthropic-ai/claude-code/bin/claude", "-p", "say hi"}, roleOwner},
		{"claude", []string{"claude"}, roleOwner},
		{"codex", nil, roleOwner},
		{"node", []string{"node", "/usr/local/bin/gemini"}, roleOwner},
		{"node", []string{"node", "--no-warnings", "/opt/codex/bin/codex.js", "exec"}, roleOwner},
		{"node", []string{"node", "-e", "require('x')"}, roleOwner},
		{"node", []string{"node"}, roleOwner},
		{"python3", []string{"python3", "/home/u/agent.py"}, roleOwner},
		{"2.1.97", []string{"2.1.97"}, roleOwner}, // Claude Code's native build names itself by version
		{"cursor-agent", []string{"cursor-agent"}, roleOwner},

		// Shells running a command or a script are skipped.
		{"sh", []string{"/bin/sh", "-c", "/opt/harness/hook_logger.sh UserPromptSubmit"}, roleSkip},
		{"hook_logger.sh", []string{"/bin/bash", "/opt/harness/hook_logger.sh", "UserPromptSubmit"}, roleSkip},
		{"bash", []string{"bash", "./run.sh", "timing"}, roleSkip},
		{"bash", []string{"bash", "-lc", "tether-hook claude-code"}, roleSkip},
		{"bash", []string{"/usr/bin/bash", "-l", "-c", "x"}, roleSkip},
		{"bash", []string{"bash", "-ic", "x"}, roleSkip},
		{"bash", []string{"bash", "-o", "pipefail", "-c", "x"}, roleSkip},
		{"bash", []string{"bash", "-o", "vi"}, roleInteractive},
		{"bash", []string{"bash", "--rcfile", "rc.sh"}, roleInteractive},
		{"bash", []string{"bash", "--rcfile=rc.sh", "script.sh"}, roleSkip},
		{"bash", []string{"bash", "-s"}, roleSkip},
		{"bash", []string{"bash", "-is"}, roleInteractive},
		{"bash", []string{"bash", "-"}, roleSkip},
		{"bash", []string{"bash", "--", "script.sh"}, roleSkip},
		{"bash", []string{"bash", "--"}, roleInteractive},
		{"dash", []string{"sh", "-ec", "x"}, roleSkip},
		{"zsh", []string{"zsh", "-c", "x"}, roleSkip},
		{"fish", []string{"fish", "--command=x"}, roleSkip},
		{"fish", []string{"fish", "--command", "x"}, roleSkip},
		{"fish", []string{"fish", "-C", "set x 1"}, roleInteractive},
		{"fish", []string{"fish", "-d", "3"}, roleInteractive},
		{"bash", []string{"bash", "-C", "script.sh"}, roleSkip}, // bash -C is noclobber, no value
		{"ksh", []string{"ksh", "hook.ksh"}, roleSkip},
		{"bash.exe", []string{`C:\Program Files\Git\usr\bin\bash.exe`, "-c", "tether-hook"}, roleSkip},
		{"cmd.exe", []string{"cmd.exe", "/d", "/s", "/c", "tether-hook"}, roleSkip},
		{"cmd.exe", []string{"cmd.exe", "/C", "x"}, roleSkip},
		{"cmd.exe", []string{"cmd.exe", "/k", "x"}, roleInteractive},
		{"cmd.exe", []string{"cmd.exe"}, roleInteractive},
		{"pwsh.exe", []string{"pwsh", "-NoProfile", "-Command", "x"}, roleSkip},
		{"powershell.exe", []string{"powershell", "-ExecutionPolicy", "Bypass", "-File", "x.ps1"}, roleSkip},
		{"powershell.exe", []string{"powershell", "-ExecutionPolicy", "Bypass"}, roleInteractive},
		{"pwsh", []string{"pwsh", "-NoExit", "-c", "x"}, roleInteractive},
		{"pwsh", []string{"pwsh", "script.ps1"}, roleSkip},

		// Interactive shells own the session.
		{"bash", []string{"-bash"}, roleInteractive},
		{"bash", []string{"bash"}, roleInteractive},
		{"bash", []string{"bash", "--norc", "--noprofile", "-i"}, roleInteractive},
		{"zsh", []string{"/bin/zsh", "-l"}, roleInteractive},
		{"fish", nil, roleInteractive},
		{"bash", nil, roleInteractive},

		// Wrappers are skipped.
		{"env", []string{"env", "FOO=1", "claude"}, roleSkip},
		{"timeout", []string{"timeout", "60", "sh", "-c", "x"}, roleSkip},
		{"nice", []string{"nice", "-n", "1", "x"}, roleSkip},
		{"nohup", []string{"nohup", "x"}, roleSkip},
		{"git", []string{"git", "-c", "alias.x=!hook", "x"}, roleSkip},
		{"go", []string{"go", "run", "./cmd/hook"}, roleSkip},
		{"lefthook", []string{"lefthook", "run", "pre-commit"}, roleSkip},
		{"uv", []string{"uv", "run", "hook.py"}, roleSkip},
		{"mise", []string{"mise", "exec", "--", "x"}, roleSkip},
		{"direnv", []string{"direnv", "exec", ".", "x"}, roleSkip},
		{"npm exec x", []string{"npm exec x"}, roleSkip},
		{"npm exec claude", []string{"npm exec claude"}, roleSkip},
		{"node", []string{"node", "/usr/lib/node_modules/npm/bin/npx-cli.js", "tether-hook"}, roleSkip},
		{"node", []string{"/usr/bin/node", "/usr/lib/node_modules/npm/bin/npm-cli.js", "exec", "x"}, roleSkip},
		{"node", []string{"node", "/usr/bin/npm", "exec", "x"}, roleSkip},
		{"node", []string{"node", "/proj/node_modules/lefthook/bin/index.js", "run"}, roleSkip},
		{"node", []string{"node", "/proj/node_modules/husky/bin.js"}, roleSkip},
		{"node", []string{"node", `C:\Users\u\AppData\Roaming\npm\node_modules\pnpm\bin\pnpm.cjs`, "dlx", "x"}, roleSkip},
		{"bun", []string{"bun", "x", "tether"}, roleSkip},
		{"bun", []string{"bun", "agent.ts"}, roleOwner},
		{"pre-commit", []string{"/usr/bin/python3", "/usr/bin/pre-commit", "hook-impl"}, roleSkip},
		{"python3", []string{"python3", "-m", "pre_commit", "run"}, roleSkip},
		{"python3.12", []string{"python3.12", "/usr/bin/pre-commit"}, roleSkip},
		{"npx", []string{"npx", "tether-hook"}, roleSkip},
		{"sudo", []string{"sudo", "-u", "x", "y"}, roleSkip},

		// Session roots end the walk.
		{"systemd", []string{"/lib/systemd/systemd", "--user"}, roleRoot},
		{"init", []string{"/sbin/init"}, roleRoot},
		{"sshd", []string{"sshd: dev@pts/0"}, roleRoot},
		{"sshd-session", []string{"sshd-session: dev [priv]"}, roleRoot},
		{"tmux: server", []string{"tmux", "new-session"}, roleRoot},
		{"tmux: server", nil, roleRoot},
		{"SCREEN", []string{"SCREEN"}, roleRoot},
		{"gnome-terminal-", []string{"/usr/libexec/gnome-terminal-server"}, roleRoot},
		{"gnome-terminal-", nil, roleRoot},
		{"containerd-shim", nil, roleRoot},
		{"konsole", []string{"/usr/bin/konsole"}, roleRoot},
		{"xterm", []string{"xterm"}, roleRoot},
		{"alacritty", []string{"alacritty"}, roleRoot},
		{"kitty", []string{"/usr/bin/kitty"}, roleRoot},
		{"wezterm-gui", []string{"wezterm-gui", "start"}, roleRoot},
		{"iTerm2", []string{"/Applications/iTerm.app/Contents/MacOS/iTerm2"}, roleRoot},
		{"Terminal", []string{"/System/Applications/Utilities/Terminal.app/Contents/MacOS/Terminal"}, roleRoot},
		{"login", []string{"login", "--", "dev"}, roleRoot},
		{"WindowsTerminal.exe", nil, roleRoot},
		{"explorer.exe", []string{`C:\Windows\Explorer.EXE`}, roleRoot},
		{"cron", []string{"/usr/sbin/cron", "-f"}, roleRoot},

		// Adversarial names are judged by what they are, not what they spell.
		{"a) R 1 2 3", []string{"a) R 1 2 3"}, roleOwner},
		{") Z 1 1", nil, roleOwner},
		{"", nil, roleOwner},
		{"((((", []string{""}, roleOwner},
	}
	for _, tt := range tests {
		if got := classify(tt.name, tt.argv); got != tt.want {
			t.Errorf("classify(%q, %q) = %v, want %v", tt.name, tt.argv, got, tt.want)
		}
	}
}

func TestProgName(t *testing.T) {
	tests := map[string]string{
		"/usr/bin/bash":                         "bash",
		"-bash":                                 "bash",
		`C:\Program Files\Git\usr\bin\bash.exe`: "bash",
		"/opt/My Agent/bin/agent":               "agent",
		"npm exec x":                            "npm",
		"sshd: dev@pts/0":                       "sshd",
		"sshd: /usr/sbin/sshd -D [listener]":    "sshd",
		"tmux: server":                          "tmux",
		"Terminal":                              "terminal",
		"PWSH.EXE":                              "pwsh",
		"":                                      "",
		"/usr/lib/node_modules/npm/bin/npx-cli.js": "npx-cli.js",
	}
	for in, want := range tests {
		if got := progName(in); got != want {
			t.Errorf("progName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestProgramIs(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		self string
		want bool
	}{
		{"tether-hook", []string{"/usr/local/bin/tether-hook", "claude-code"}, "tether-hook", true},
		{"tether-hook", nil, "tether-hook", true},
		{"tether-hook-ver", nil, "tether-hook-version-two", true}, // truncated kernel name
		{"claude", []string{"claude"}, "tether-hook", false},
		{"tether", []string{"tether"}, "tether-hook", false},
		{"x", nil, "", false},
	}
	for _, tt := range tests {
		if got := newProgram(tt.name, tt.argv).is(tt.self); got != tt.want {
			t.Errorf("program(%q, %q).is(%q) = %v, want %v", tt.name, tt.argv, tt.self, got, tt.want)
		}
	}
}
