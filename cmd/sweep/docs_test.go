package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite docs/cli from the commands")

// cliDocs is the reference of every command, generated from the commands.
const cliDocs = "../../docs/cli"

// TestCLIReference: docs/cli is generated from the commands themselves
// (cobra/doc), so it says what they do now; it fails when a command, a
// flag or a help text changed and docs/cli was not regenerated:
//
//	go test ./cmd/sweep -run TestCLIReference -update
func TestCLIReference(t *testing.T) {
	root := (&app{getenv: func(string) string { return "" }}).rootCommand(nil)
	root.DisableAutoGenTag = true // no date: the files change only with the commands
	gen := t.TempDir()
	if err := doc.GenMarkdownTree(root, gen); err != nil {
		t.Fatal(err)
	}
	want := readDir(t, gen)
	if *update {
		if err := os.RemoveAll(cliDocs); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(cliDocs, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range want {
			if err := os.WriteFile(filepath.Join(cliDocs, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	have := readDir(t, cliDocs)
	for name, b := range want {
		if !bytes.Equal(have[name], b) {
			t.Errorf("docs/cli/%s is out of date", name)
		}
	}
	for name := range have {
		if want[name] == nil {
			t.Errorf("docs/cli/%s documents no command", name)
		}
	}
	if t.Failed() {
		t.Log("regenerate it: go test ./cmd/sweep -run TestCLIReference -update")
	}
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// TestDocumentedCommands: every tether-sweep command line the README and
// docs/ show, in code blocks and code spans, names a command and flags
// tether-sweep has; a renamed or removed one fails here.
func TestDocumentedCommands(t *testing.T) {
	files := []string{"../../README.md"}
	err := filepath.WalkDir("../../docs", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range documentedCommands(string(b)) {
			n++
			if err := checkCommandLine(line); err != nil {
				t.Errorf("%s: %q: %v", filepath.Base(f), line, err)
			}
		}
	}
	if n < 10 {
		t.Fatalf("found only %d command lines: the scan is broken", n)
	}
}

var (
	fence    = regexp.MustCompile("(?s)```[a-z]*\n(.*?)```")
	shFence  = regexp.MustCompile("(?s)```sh\n(.*?)```")
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	invoked  = regexp.MustCompile(`(?:^|[\s(;&|])tether-sweep(\s[^|;&)#>\n]*)?`)
)

// documentedCommands finds the tether-sweep invocations in code: each is
// "tether-sweep" and its arguments, up to the end of the command (a pipe,
// a redirection, a comment, the end of the line).
func documentedCommands(md string) []string {
	var code []string
	for _, m := range fence.FindAllStringSubmatch(md, -1) {
		for _, l := range strings.Split(m[1], "\n") {
			l, _, _ = strings.Cut(l, " #") // a shell comment says, it does not run
			code = append(code, l)
		}
	}
	rest := fence.ReplaceAllString(md, "")
	for _, m := range codeSpan.FindAllStringSubmatch(rest, -1) {
		code = append(code, m[1])
	}
	var out []string
	for _, c := range code {
		for _, m := range invoked.FindAllString(c, -1) {
			out = append(out, strings.TrimSpace(strings.TrimLeft(m, " \t(;&|")))
		}
	}
	return out
}

// checkCommandLine parses a documented command line as tether-sweep would,
// without running it: the command must exist and take the flags given.
// Placeholders (SESSION, <commit>, [--turn N]) are read as arguments.
func checkCommandLine(line string) error {
	var args []string
	for _, f := range strings.Fields(line)[1:] {
		bare := strings.Trim(f, "[]")
		switch {
		case bare == "" || bare == "..." || bare == "…":
		case bare != f && !strings.HasPrefix(bare, "-") && strings.HasPrefix(f, "["):
			// [flags], [SESSION]: optional, and a placeholder
		default:
			args = append(args, bare)
		}
	}
	root := (&app{getenv: func(string) string { return "" }}).rootCommand(args)
	root.InitDefaultCompletionCmd()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd == root {
		if word := commandWord(rest); word != "" && word != strings.ToUpper(word) { // CMD stands for any
			return unknownCommand(root, word)
		}
	}
	if err := cmd.ParseFlags(rest); err != nil && !errors.Is(err, pflag.ErrHelp) {
		return err
	}
	return nil
}

// TestShellExamples: every `sh` block of the README and docs/ runs, so a
// documented command that no longer works fails here. A block all of whose
// commands .ci/run runs (the tests, the demo, the end-to-end suite) is
// CI's; every other one runs here, in order, under bash -e, with a scratch
// HOME and "your-repo" a fresh repository: the README's install of tether
// into ~/.local/bin included. Output, and commands with placeholders, are
// in `text` blocks: illustrations, not run.
func TestShellExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and installs tether")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	sandbox := t.TempDir()
	home, repo := filepath.Join(sandbox, "home"), filepath.Join(sandbox, "your-repo")
	env := append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "CODEX_HOME=", "COPILOT_HOME=", "PI_CODING_AGENT_DIR=", "QWEN_HOME=",
		"PATH="+filepath.Join(home, ".local", "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	// go keeps its caches under HOME unless told: keep the real ones.
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	sh := func(dir, script string) (string, error) {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := sh(sandbox, "mkdir -p home && git init -q -b main your-repo && git -C your-repo commit -q --allow-empty -m initial"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}

	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, f := range append([]string{filepath.Join(root, "README.md")}, files...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range shellBlocks(string(b)) {
			if allIn(block, string(ci)) {
				continue
			}
			// The README's install runs in tether's checkout; a block that
			// starts with cd your-repo, beside the repository; others in it.
			dir := repo
			switch {
			case strings.HasPrefix(block[0], "bash scripts/"):
				dir = root
			case block[0] == "cd your-repo":
				dir = sandbox
			}
			ran++
			if out, err := sh(dir, strings.Join(block, "\n")); err != nil {
				t.Errorf("%s: the block\n\t%s\nfailed: %v\n%s", filepath.Base(f), strings.Join(block, "\n\t"), err, out)
			}
		}
	}
	if ran < 2 {
		t.Fatalf("ran only %d blocks: the scan is broken", ran)
	}
}

// shellBlocks are the commands of each ```sh block, comments and blank
// lines left out.
func shellBlocks(md string) [][]string {
	var blocks [][]string
	for _, m := range shFence.FindAllStringSubmatch(md, -1) {
		var block []string
		for _, l := range strings.Split(m[1], "\n") {
			l, _, _ = strings.Cut(l, " #")
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				block = append(block, l)
			}
		}
		if len(block) > 0 {
			blocks = append(blocks, block)
		}
	}
	return blocks
}

// allIn reports whether every command of block is in script.
func allIn(block []string, script string) bool {
	for _, l := range block {
		if !strings.Contains(script, l) {
			return false
		}
	}
	return true
}

// TestDocLinks: every relative link of the README and docs/ leads to a
// file of the repository, and to a heading of it when it names one.
func TestDocLinks(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	n := 0
	for _, f := range append([]string{filepath.Join(root, "README.md")}, files...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			n++
			path, anchor, _ := strings.Cut(target, "#")
			dest := f
			if path != "" {
				dest = filepath.Join(filepath.Dir(f), path)
			}
			text, err := os.ReadFile(dest)
			if err != nil {
				if info, serr := os.Stat(dest); serr == nil && info.IsDir() {
					continue
				}
				t.Errorf("%s: link %s: %v", filepath.Base(f), target, err)
				continue
			}
			if anchor != "" && !slices.Contains(headingAnchors(string(text)), anchor) {
				t.Errorf("%s: link %s: no such heading in %s", filepath.Base(f), target, filepath.Base(dest))
			}
		}
	}
	if n < 10 {
		t.Fatalf("found only %d links: the scan is broken", n)
	}
}

// headingAnchors are the anchors GitHub gives a markdown file's headings:
// lower case, spaces to hyphens, punctuation dropped.
func headingAnchors(md string) []string {
	var out []string
	for _, l := range strings.Split(md, "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestVerifiedVersions: docs/agents.md names every version of an agent's
// CLI that the end-to-end suite installs and runs, so the version a user
// reads as verified is the one the suite verifies.
func TestVerifiedVersions(t *testing.T) {
	agents, err := os.ReadFile("../../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../../e2e/*.go")
	if err != nil {
		t.Fatal(err)
	}
	pinned := regexp.MustCompile(`npmCLI\(t, "[^"]+", "([0-9.]+)"\)|Version\s*=\s*"([0-9.]+)"`)
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range pinned.FindAllStringSubmatch(string(b), -1) {
			n++
			if v := m[1] + m[2]; !bytes.Contains(agents, []byte(" "+v)) {
				t.Errorf("%s pins version %s, which docs/agents.md does not name", filepath.Base(f), v)
			}
		}
	}
	if n < 8 {
		t.Fatalf("found only %d pinned versions in e2e/: the scan is broken", n)
	}
}
