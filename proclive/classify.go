package proclive

import (
	"slices"
	"strings"
)

// role is what a process is to the owner walk.
type role int

const (
	roleOwner       role = iota // an agent or any other program: the session's owner
	roleInteractive             // an interactive shell: the owner, flagged Identity.Interactive
	roleSkip                    // a shell running a command or script, a wrapper, a launcher
	roleRoot                    // a session root: the walk ends with no owner
	roleDaemon                  // a daemon shared by many sessions: the owner is its client
)

func (r role) String() string {
	switch r {
	case roleInteractive:
		return "interactive"
	case roleSkip:
		return "skip"
	case roleRoot:
		return "root"
	case roleDaemon:
		return "daemon"
	default:
		return "owner"
	}
}

// Program names are compared after progName: lower case, no directory, no
// ".exe", no login-shell dash.
var (
	// roots start sessions: nothing above them belongs to the hook's agent.
	roots = names{"init", "systemd", "launchd", "kthreadd",
		"sshd", "sshd-session", "sshd-auth", "dropbear", "mosh-server", "login", "getty", "agetty",
		"tmux", "screen", "zellij", "abduco", "dtach",
		"gnome-terminal-server", "konsole", "xterm", "uxterm", "rxvt", "urxvt", "alacritty", "kitty",
		"wezterm", "wezterm-gui", "wezterm-mux-server", "ghostty", "foot", "tilix", "terminator",
		"xfce4-terminal", "mate-terminal", "lxterminal", "qterminal", "terminology", "st",
		"iterm2", "terminal", "windowsterminal", "openconsole", "conhost", "explorer",
		"wininit", "winlogon", "services", "svchost",
		"cron", "crond", "atd", "containerd-shim-runc-v2", "conmon", "tini", "dumb-init",
		"docker-init", "catatonit", "runsv", "runsvdir", "s6-svscan", "s6-supervise", "supervisord"}

	// wrappers run the next program and wait for it; the agent is above them.
	wrappers = names{"env", "timeout", "nice", "ionice", "nohup", "setsid", "stdbuf", "chrt",
		"taskset", "flock", "time", "sudo", "doas", "su", "runuser", "xargs",
		"npx", "npm", "pnpm", "pnpx", "yarn", "yarnpkg", "bunx", "corepack", "npx-cli", "npm-cli",
		"uv", "uvx", "mise", "rtx", "asdf", "direnv", "nix", "nix-shell", "devbox",
		"go", "git", "lefthook", "husky", "pre-commit", "pre_commit", "overcommit"}

	shells = names{"sh", "bash", "dash", "zsh", "fish", "ksh", "ksh93", "mksh", "pdksh", "oksh",
		"ash", "yash", "posh", "tcsh", "csh", "nu", "elvish", "pwsh", "powershell", "cmd"}

	// interpreters are judged by the script they run: node running npx is a
	// wrapper, node running an agent's script is the agent.
	interpreters = names{"node", "nodejs", "bun", "deno", "python", "python3", "ruby"}

	// nodeWrappers are packages whose scripts, run from node_modules, only
	// launch other programs.
	nodeWrappers = names{"npm", "pnpm", "yarn", "corepack", "lefthook", "husky", "@yarnpkg"}
)

// names is a set of program names. A literal slice, not a map: it costs
// the hook's start nothing, and the sets are small.
type names []string

func (ns names) has(n string) bool { return slices.Contains(ns, n) }

// commLen is the shortest length at which an OS truncates process names
// (Linux keeps 15 bytes): a name that long may be the prefix of a longer one.
const commLen = 15

// program is how a process names itself: argv[0] and the kernel's name,
// which disagree for scripts (bash running hook.sh is named "hook.sh") and
// for interpreters (python running pre-commit).
type program struct {
	arg0, name string // progName of argv[0] ("" without argv) and of the kernel's name
	truncated  bool   // the kernel's name may be cut short
}

func newProgram(name string, argv []string) program {
	p := program{name: progName(name)}
	// Only a name still near full length after progName can be a cut-short
	// one; "npm exec claude" reduced to "npm" must not prefix-match "npx".
	p.truncated = len(name) >= commLen && len(p.name) >= commLen-1
	if len(argv) > 0 {
		p.arg0 = progName(argv[0])
	}
	return p
}

// main is the name the arguments belong to.
func (p program) main() string {
	if p.arg0 != "" {
		return p.arg0
	}
	return p.name
}

// in reports whether either name of p is in s.
func (p program) in(s names) bool {
	if s.has(p.arg0) || s.has(p.name) {
		return true
	}
	if p.truncated && p.name != "" {
		for _, n := range s {
			if strings.HasPrefix(n, p.name) {
				return true
			}
		}
	}
	return false
}

// is reports whether p runs the program named prog (already a progName).
func (p program) is(prog string) bool {
	return prog != "" && (p.arg0 == prog || p.name == prog ||
		(p.truncated && p.name != "" && strings.HasPrefix(prog, p.name)))
}

// progName reduces argv[0], a kernel process name or a script path to a
// comparable program name: "/usr/bin/Bash.exe" → "bash", "-zsh" → "zsh",
// and process titles "npm exec x" → "npm", "sshd: user@pts/0" → "sshd".
func progName(s string) string {
	if i := strings.IndexByte(s, ' '); i >= 0 && !strings.ContainsAny(s[:i], `/\`) {
		s = s[:i] // a title set by the program; a path with spaces has a separator first
	}
	s = s[strings.LastIndexAny(s, `/\`)+1:]
	s = strings.TrimPrefix(s, "-")
	s = strings.TrimSuffix(s, ":")
	s = strings.ToLower(s)
	return strings.TrimSuffix(s, ".exe")
}

// classify tells what a process, known by its kernel name and argv (nil when
// unreadable), is to the owner walk.
func classify(name string, argv []string) role {
	p := newProgram(name, argv)
	var args []string
	if len(argv) > 1 {
		args = argv[1:]
	}
	switch {
	case p.in(roots):
		return roleRoot
	case p.in(wrappers):
		return roleSkip
	case shells.has(p.main()):
		return shellRole(p.main(), args)
	case interpreters.has(p.main()) || strings.HasPrefix(p.main(), "python"):
		return interpreterRole(p.main(), args)
	case isSharedDaemon(p, args):
		return roleDaemon
	}
	return roleOwner
}

// shellRole: a shell running a command (-c) or a script is skipped; one
// reading a terminal is the owner.
func shellRole(shell string, args []string) role {
	switch shell {
	case "cmd":
		return cmdRole(args)
	case "pwsh", "powershell":
		return powershellRole(args)
	}
	// Short options that take the next word as their value, not a script:
	// set -o name, shopt -O name; fish's -C command, -d level, -o file,
	// -p file, -f features.
	valueFlags := "oO"
	if shell == "fish" {
		valueFlags = "Cdopf"
	}
	interactive, stdin := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return roleSkip // the next word is a script
			}
			i = len(args)
		case a == "-":
			stdin = true // end of options; commands come from stdin
		case strings.HasPrefix(a, "--"):
			opt, _, hasValue := strings.Cut(a[2:], "=")
			switch opt {
			case "command": // fish
				return roleSkip
			case "interactive":
				interactive = true
			case "rcfile", "init-file", "init-command":
				if !hasValue {
					i++ // the option's value is not a script
				}
			}
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			for _, c := range a[1:] {
				switch {
				case c == 'c' && a[0] == '-':
					return roleSkip
				case c == 'i':
					interactive = true
				case c == 's':
					stdin = true
				case strings.ContainsRune(valueFlags, c):
					i++
				}
			}
		default:
			return roleSkip // the first operand is a script file
		}
	}
	if stdin && !interactive {
		return roleSkip // a script piped in
	}
	return roleInteractive
}

// cmdRole: cmd.exe /c runs a command and exits; /k runs one and stays.
func cmdRole(args []string) role {
	for _, a := range args {
		switch strings.ToLower(a) {
		case "/k":
			return roleInteractive
		case "/c", "/r":
			return roleSkip
		}
		if l := strings.ToLower(a); strings.HasPrefix(l, "/c") || strings.HasPrefix(l, "/r") {
			return roleSkip // "/cdir" is legal: the command follows the switch directly
		}
	}
	return roleInteractive
}

// powershellRole: -Command, -File, -EncodedCommand or a bare script run and
// exit unless -NoExit is given.
func powershellRole(args []string) role {
	command, noExit := false, false
	for i := 0; i < len(args); i++ {
		a := strings.ToLower(args[i])
		switch a {
		case "-noexit":
			noExit = true
		case "-c", "-command", "-commandwithargs", "-cwa", "-f", "-file",
			"-e", "-ec", "-encodedcommand":
			command = true
		case "-executionpolicy", "-ep", "-ex", "-workingdirectory", "-wd", "-windowstyle", "-w",
			"-configurationname", "-settingsfile", "-inputformat", "-if", "-outputformat", "-of",
			"-version", "-v", "-psconsolefile", "-custompipename":
			i++ // takes a value
		default:
			if !strings.HasPrefix(a, "-") {
				command = true // a bare operand is a script or a command
			}
		}
	}
	if command && !noExit {
		return roleSkip
	}
	return roleInteractive
}

// interpreterRole: an interpreter running a package manager or hook
// manager is a wrapper; running anything else it is the program.
func interpreterRole(interp string, args []string) role {
	var script string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-m" && i+1 < len(args) { // python -m module
			script = args[i+1]
			break
		}
		if a == "-e" || a == "-c" || a == "--eval" {
			return roleOwner // inline code: nothing to judge by
		}
		if !strings.HasPrefix(a, "-") {
			script = a
			break
		}
	}
	if script == "" {
		return roleOwner
	}
	if interp == "bun" && script == "x" {
		return roleSkip // bun x: the bunx launcher
	}
	base := progName(script)
	for _, ext := range []string{".js", ".cjs", ".mjs", ".ts", ".py"} {
		base = strings.TrimSuffix(base, ext)
	}
	if wrappers.has(base) {
		return roleSkip
	}
	parts := strings.FieldsFunc(script, func(r rune) bool { return r == '/' || r == '\\' })
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "node_modules" && nodeWrappers.has(strings.ToLower(parts[i+1])) {
			return roleSkip
		}
	}
	return roleOwner
}
