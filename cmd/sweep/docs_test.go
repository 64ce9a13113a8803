package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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
