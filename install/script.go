package install

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tetherdev/tether/state"
)

// hookMarker is the line that makes a git hook ours. A hook without it is
// foreign and is never overwritten.
const hookMarker = "# tether-managed hook v1"

// Husky and similar setups get a marked block in the user's own hook file.
const (
	blockBegin = "# >>> tether-managed block v1 (tether-sweep uninstall removes it)"
	blockEnd   = "# <<< tether-managed block"
)

// backupSuffix names the foreign hook we moved aside and chain to.
const backupSuffix = ".pre-tether"

// gitHook is one git hook tether runs from.
type gitHook struct {
	name     string // git's name for the hook
	program  string // tether-sweep, or tether-hook for a gate in front of it
	args     string // the program's arguments
	passArgs bool   // forward the hook's own arguments ("$@")
	stdin    bool   // git feeds the hook on stdin, and both hooks of a chain need it
	// exec: the program always exits 0, so an unchained hook execs it
	// rather than waiting on it — one process less on every commit.
	exec bool
	// gated: the hook runs only while tether's store is active
	// (state.ActiveFlag), which the script itself tests when it can find
	// the store (see storeGate).
	gated bool
	// when is a shell test of the hook's arguments: false, the hook has
	// nothing to do and starts no process.
	when string
}

var (
	// post-commit goes through tether-hook's gate, which runs
	// `tether-sweep run --hook post-commit --quiet` only when there is
	// something to sweep: tether-sweep alone takes longer to start than
	// the commit budget allows.
	postCommitHook = gitHook{name: "post-commit", program: "tether-hook", args: "git post-commit", exec: true, gated: true}
	prePushHook    = gitHook{name: "pre-push", program: "tether-sweep", args: "push --hook pre-push --quiet", passArgs: true, stdin: true}
	// After history arrives or is rewritten, the commits that carry linked
	// commits' change inherit their links (package inherit); post-merge
	// also hears of a merge --squash, whose commit the post-commit hook
	// then matches. post-checkout starts nothing for a file checkout.
	linkHooks = []gitHook{
		{name: "post-merge", program: "tether-sweep", args: "run --hook post-merge --quiet", passArgs: true},
		{name: "post-rewrite", program: "tether-sweep", args: "run --hook post-rewrite --quiet", passArgs: true, stdin: true},
		{name: "post-checkout", program: "tether-sweep", args: "run --hook post-checkout --quiet", passArgs: true, when: `[ "$3" = 1 ] && [ "$1" != "$2" ]`},
	}
)

// allGitHooks are every hook tether may install.
func allGitHooks() []gitHook { return append([]gitHook{postCommitHook, prePushHook}, linkHooks...) }

// sweepInvocation returns the shell test that the hook's program is there
// and the command that runs it. sweep is tether-sweep's absolute path (its
// siblings are tether's other binaries), or "" to use PATH.
func sweepInvocation(h gitHook, sweep string) (guard, call string) {
	bin := h.program
	guard = "command -v " + h.program + " >/dev/null 2>&1"
	if p := programPath(sweep, h.program); p != "" {
		bin = shQuote(filepath.ToSlash(p))
		guard = "[ -x " + bin + " ]"
	}
	call = bin + " " + h.args
	if h.passArgs {
		call += ` "$@"`
	}
	return guard, call
}

// programPath is where the git hooks run program from: beside tether-sweep
// at sweep, with the same extension (.exe on Windows); "" when sweep is ""
// and the hooks look on PATH.
func programPath(sweep, program string) string {
	if sweep == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(sweep), program+filepath.Ext(sweep))
}

// storeGate is the shell test that tether's store is active, for a hook
// in <common>/hooks: the store is <common>/tether, found from the hook's
// own path ($0 is the hook as git ran it, relative to the directory it runs
// the hook in, or absolute), so the test costs no process and follows the
// repository wherever it moves. A commit with nothing live in the store
// then costs git one shell and one stat, however many sessions ended
// before. Hooks elsewhere (core.hooksPath, possibly shared by clones)
// cannot tell where the store is and leave the decision to tether-hook.
var storeGate = `[ -e "${0%/*}/../tether/` + state.ActiveFlag + `" ]`

// inheritGate is the shell test that a commit may inherit links: git
// cherry-pick made it (CHERRY_PICK_HEAD beside the index while its hook
// runs) or a merge --squash left word that its commit was to come
// (state.SquashPending). Two stats, no process.
var inheritGate = `[ -e "${GIT_INDEX_FILE%/*}/CHERRY_PICK_HEAD" ] || [ -e "${0%/*}/../tether/` + state.SquashPending + `" ]`

// gate is the shell test of a gated hook in <common>/hooks.
func gate(h gitHook) string {
	if h.name == postCommitHook.name {
		return "{ " + storeGate + " || " + inheritGate + "; }"
	}
	return storeGate
}

// hookScript is the whole hook file we install. chained means a foreign
// hook was moved to <name>.pre-tether and must run first; inCommon that the
// hook lives in <common>/hooks, where a gated hook tests storeGate first.
//
// Every tether line is guarded, so a missing binary is a no-op, and ends in
// "|| true", so tether never fails the git operation. A chained hook keeps
// the foreign hook's exit status as its own.
func hookScript(h gitHook, sweep string, chained, inCommon bool) string {
	guard, call := sweepInvocation(h, sweep)
	gated := h.gated && inCommon
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("#!/bin/sh")
	line("%s", hookMarker)
	if !chained {
		line("# Installed by `tether-sweep install`; `tether-sweep uninstall` removes it.")
		line("# Without tether it does nothing, and it never fails the %s.", operation(h))
		if gated {
			line("# Nothing to do unless tether's store holds a live session or a to-do,")
			line("# or the commit is a cherry-pick or a squash that may inherit links.")
			line("%s || exit 0", gate(h))
		}
		if h.when != "" {
			line("%s || exit 0", h.when)
		}
		line("%s || exit 0", guard)
		if h.exec {
			line("exec %s", call)
		} else {
			line("%s || true", call)
		}
		return b.String()
	}
	prev := h.name + backupSuffix
	line("# Installed by `tether-sweep install`; `tether-sweep uninstall` puts the previous")
	line("# hook back. The previous hook, kept as %s, runs first with the same", prev)
	line("# arguments and input, and its exit status is this hook's.")
	line(`prev="$(dirname -- "$0")/%s"`, prev)
	if !h.stdin {
		line("status=0")
		line(`if [ -x "$prev" ]; then`)
		line(`	"$prev" "$@" || status=$?`)
		line("fi")
		cond := guard
		if h.when != "" {
			cond = "{ " + h.when + "; } && " + cond
		}
		if gated {
			cond = gate(h) + " && " + cond
		}
		line("if %s; then", cond)
		line("	%s </dev/null || true", call)
		line("fi")
		line(`exit "$status"`)
		return b.String()
	}
	line("# Git's input is saved so that both hooks read it. If the previous hook fails,")
	line("# the %s is refused and tether-sweep does not run.", operation(h))
	line(`input=$(mktemp "${TMPDIR:-/tmp}/tether-%s.XXXXXX" 2>/dev/null) || input=`, h.name)
	line(`if [ -n "$input" ]; then`)
	line(`	trap 'rm -f "$input"' EXIT`)
	line(`	cat >"$input"`)
	line("fi")
	line(`if [ -x "$prev" ]; then`)
	line(`	if [ -n "$input" ]; then`)
	line(`		"$prev" "$@" <"$input" || exit $?`)
	line("	else")
	line(`		"$prev" "$@" || exit $?`)
	line("	fi")
	line("fi")
	line(`[ -n "$input" ] || exit 0`)
	if h.when != "" {
		line("%s || exit 0", h.when)
	}
	line("%s || exit 0", guard)
	line(`%s <"$input" || true`, call)
	return b.String()
}

func operation(h gitHook) string {
	switch h.name {
	case "pre-push":
		return "push"
	case "post-merge":
		return "merge"
	case "post-rewrite":
		return "rewrite"
	case "post-checkout":
		return "checkout"
	}
	return "commit"
}

// isOurHook tells a hook we wrote from anyone else's.
func isOurHook(content []byte) bool {
	return strings.Contains(string(content), "\n"+hookMarker+"\n")
}

// huskyBlock is what goes at the end of the user's .husky/<hook>. Husky
// runs hooks with sh -e, so the block is an if statement, which succeeds
// when tether-sweep is missing.
func huskyBlock(h gitHook, sweep string) string {
	guard, call := sweepInvocation(h, sweep)
	if h.when != "" {
		guard = "{ " + h.when + "; } && " + guard
	}
	return blockBegin + "\n" +
		"if " + guard + "; then " + call + " || true; fi\n" +
		blockEnd + "\n"
}

// huskyShebang starts a husky hook file we create.
const huskyShebang = "#!/usr/bin/env sh\n"

// findBlock locates our block: the byte range from the start of its first
// line to the end of its last. ok is false when there is none; damaged is
// true when the block has a beginning and no end.
func findBlock(content string) (start, end int, ok, damaged bool) {
	start = lineIndex(content, blockBegin, 0)
	if start < 0 {
		return 0, 0, false, false
	}
	e := lineIndex(content, blockEnd, start)
	if e < 0 {
		return 0, 0, false, true
	}
	end = e + len(blockEnd)
	if end < len(content) && content[end] == '\n' {
		end++
	}
	return start, end, true, false
}

// lineIndex finds a line that starts with prefix, at or after from.
func lineIndex(content, prefix string, from int) int {
	for i := from; i <= len(content); {
		if strings.HasPrefix(content[i:], prefix) && (i == 0 || content[i-1] == '\n') {
			return i
		}
		k := strings.IndexByte(content[i:], '\n')
		if k < 0 {
			return -1
		}
		i += k + 1
	}
	return -1
}

// withBlock returns content with our block in it: replacing an older block
// in place, or appended on a line of its own.
func withBlock(content, block string) (string, error) {
	start, end, ok, damaged := findBlock(content)
	switch {
	case damaged:
		return "", fmt.Errorf("found %q without %q: fix the file by hand", blockBegin, blockEnd)
	case ok:
		return content[:start] + block + content[end:], nil
	case content != "" && !strings.HasSuffix(content, "\n"):
		return content + "\n" + block, nil
	default:
		return content + block, nil
	}
}

// withoutBlock removes our block; found is false when there was none.
func withoutBlock(content string) (out string, found bool, err error) {
	start, end, ok, damaged := findBlock(content)
	if damaged {
		return "", false, fmt.Errorf("found %q without %q: fix the file by hand", blockBegin, blockEnd)
	}
	if !ok {
		return content, false, nil
	}
	return content[:start] + content[end:], true, nil
}

// Hook managers that own .git/hooks and rewrite it: tether does not touch
// their files, and tells the user what to add to their config instead.
type hookFramework struct {
	name  string
	files []string // config files, relative to the worktree; the first found wins
}

var frameworks = []hookFramework{
	{"lefthook", []string{
		"lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml",
		"lefthook.json", ".lefthook.json", "lefthook.toml", ".lefthook.toml",
	}},
	{"pre-commit", []string{".pre-commit-config.yaml"}},
}

// frameworkSnippet is the config a hook framework needs to run tether, and
// what the user must run afterwards ("" when nothing).
func frameworkSnippet(fw string, h gitHook, sweep string) (snippet, then string) {
	guard, call := sweepInvocation(h, sweep)
	switch fw {
	case "lefthook":
		if h.passArgs {
			call += " " + frameworkArgs[h.name][0]
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s:\n  commands:\n    tether:\n", h.name)
		if h.stdin {
			b.WriteString("      use_stdin: true\n")
		}
		fmt.Fprintf(&b, "      run: %s\n", yamlQuote(guard+" || exit 0; "+call+" || true"))
		return b.String(), ""
	default: // pre-commit
		if h.passArgs {
			call += " " + frameworkArgs[h.name][1]
		}
		entry := "sh -c " + shQuote(guard+" || exit 0; "+call+" || true")
		snippet = "  - repo: local\n" +
			"    hooks:\n" +
			"      - id: tether-" + h.name + "\n" +
			"        name: tether\n" +
			"        entry: " + yamlQuote(entry) + "\n" +
			"        language: system\n" +
			"        stages: [" + h.name + "]\n" +
			"        always_run: true\n" +
			"        pass_filenames: false\n"
		return snippet, "pre-commit install --hook-type " + h.name
	}
}

// frameworkArgs are git's arguments to a hook as lefthook and pre-commit
// hand them on: lefthook's placeholders, pre-commit's variables.
var frameworkArgs = map[string][2]string{
	"pre-push":      {"{1} {2}", `"$PRE_COMMIT_REMOTE_NAME" "$PRE_COMMIT_REMOTE_URL"`},
	"post-merge":    {"{1}", `"$PRE_COMMIT_IS_SQUASH_MERGE"`},
	"post-rewrite":  {"{1}", `"$PRE_COMMIT_REWRITE_COMMAND"`},
	"post-checkout": {"{1} {2} {3}", `"$PRE_COMMIT_FROM_REF" "$PRE_COMMIT_TO_REF" "$PRE_COMMIT_CHECKOUT_TYPE"`},
}

// runsHook says whether a hook framework's config runs tether at h: it
// names h's program and its arguments. A line for another hook, or an older
// one that ran tether-sweep at post-commit, does not count.
func runsHook(config string, h gitHook) bool {
	return strings.Contains(config, h.program) && strings.Contains(config, h.args)
}

// yamlQuote makes a single-quoted YAML scalar, where only ' needs escaping.
func yamlQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
