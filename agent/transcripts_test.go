package agent

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// env is a getenv over a fixed environment.
func env(kv ...string) func(string) string {
	return func(k string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1]
			}
		}
		return ""
	}
}

func TestTranscriptRoot(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the table is checked with POSIX paths")
	}
	home := []string{"HOME", "/home/dev"}
	for _, tc := range []struct {
		agent string
		env   []string
		want  string
	}{
		{"claude-code", home, "/home/dev/.claude/projects"},
		{"claude", append(home, "CLAUDE_CONFIG_DIR", "/srv/claude"), "/srv/claude/projects"},
		{"codex", home, "/home/dev/.codex/sessions"},
		{"codex", append(home, "CODEX_HOME", "/srv/codex/"), "/srv/codex/sessions"},
		{"gemini", home, "/home/dev/.gemini/tmp"},
		{"gemini", append(home, "GEMINI_CLI_HOME", "/srv/g"), "/srv/g/.gemini/tmp"},
		{"copilot", home, "/home/dev/.copilot/session-state"},
		{"copilot", append(home, "COPILOT_HOME", "/srv/copilot"), "/srv/copilot/session-state"},
		{"cursor", home, "/home/dev/.cursor/projects"},
		{"claude-code", nil, ""}, // no home: nothing is read
		{"codex", []string{"CODEX_HOME", "/srv/codex"}, "/srv/codex/sessions"},
		{"nonesuch", home, ""},
	} {
		if got := TranscriptRoot(tc.agent, env(tc.env...)); got != tc.want {
			t.Errorf("TranscriptRoot(%q, %q) = %q, want %q", tc.agent, tc.env, got, tc.want)
		}
	}
	// OpenCode keeps its sessions in a database, not a transcript file: the
	// sweep asks it for the conversation (`opencode export`).
	if got := TranscriptRoot("opencode", env(home...)); got != "" {
		t.Errorf("TranscriptRoot(opencode) = %q, want none", got)
	}
	for _, name := range Names() {
		if name != "opencode" && TranscriptRoot(name, env(home...)) == "" {
			t.Errorf("%s has no row in transcriptHomes", name)
		}
	}
}

// TestRecordedTranscriptsAreInTheirRoots: every transcript path the real
// CLIs sent lies where the table says that agent keeps transcripts, for the
// HOME it ran with.
func TestRecordedTranscriptsAreInTheirRoots(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("recorded paths are POSIX paths")
	}
	homes := []string{"/home/dev", "/opt/harness/runs/interactive-20261121-102920-17310/home"}
	files, err := filepath.Glob("testdata/recorded/*/*.json")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, file := range files {
		name := filepath.Base(filepath.Dir(file))
		payload, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]any
		if err := json.Unmarshal(payload, &fields); err != nil {
			continue // notify argv recordings and the like
		}
		path, _ := fields["transcript_path"].(string)
		if p, ok := fields["transcriptPath"].(string); ok {
			path = p
		}
		if path == "" {
			continue
		}
		inside := false
		for _, h := range homes {
			if _, ok := TranscriptInRoot(TranscriptRoot(name, env("HOME", h)), path); ok {
				inside = true
			}
		}
		if !inside {
			t.Errorf("%s: transcript %s is outside %s's transcript directory", file, path, name)
		}
		seen[name] = true
	}
	for _, name := range []string{"claude-code", "codex", "gemini", "copilot"} {
		if !seen[name] {
			t.Errorf("no recorded %s payload names a transcript", name)
		}
	}
}

func TestTranscriptInRoot(t *testing.T) {
	root := filepath.FromSlash("/home/dev/.claude/projects")
	for _, tc := range []struct {
		path string
		rel  string
		ok   bool
	}{
		{"/home/dev/.claude/projects/p/s.jsonl", "p/s.jsonl", true},
		{"/home/dev/.claude/projects/s.jsonl", "s.jsonl", true},
		{"/home/dev/.claude/projects", "", false},
		{"/home/dev/.claude/projects/../settings.json", "", false},
		{"/home/dev/.claude/projects-evil/s.jsonl", "", false},
		{"/etc/shadow", "", false},
		{"projects/s.jsonl", "", false},
		{"", "", false},
	} {
		rel, ok := TranscriptInRoot(root, filepath.FromSlash(tc.path))
		if ok != tc.ok || rel != filepath.FromSlash(tc.rel) {
			t.Errorf("TranscriptInRoot(%q) = %q, %v; want %q, %v", tc.path, rel, ok, tc.rel, tc.ok)
		}
	}
	if _, ok := TranscriptInRoot("", "/x"); ok {
		t.Error("an empty root holds nothing")
	}
}

func TestOpenTranscript(t *testing.T) {
	root := t.TempDir()
	elsewhere := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	good := filepath.Join(root, "p", "s.jsonl")
	write(good, "{}\n")
	secret := filepath.Join(elsewhere, "secret")
	write(secret, "secret\n")
	f, err := OpenTranscript(root, good)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(f); err != nil || string(b) != "{}\n" {
		t.Errorf("read %q, %v", b, err)
	}
	f.Close()

	symlinks := true
	if err := os.Symlink(secret, filepath.Join(root, "link.jsonl")); err != nil {
		symlinks = false // Windows without the privilege
	}
	if symlinks {
		if err := os.Symlink(elsewhere, filepath.Join(root, "dir")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("p", "s.jsonl"), filepath.Join(root, "inner.jsonl")); err != nil {
			t.Fatal(err)
		}
		// A relative symlink that stays inside is followed (os.Root follows
		// no absolute one).
		if f, err := OpenTranscript(root, filepath.Join(root, "inner.jsonl")); err != nil {
			t.Errorf("symlink inside the root: %v", err)
		} else {
			f.Close()
		}
	}
	for _, tc := range []struct {
		path string
		want error // nil: any error
		skip bool
	}{
		{secret, ErrTranscriptOutside, false},
		{filepath.Join(root, "..", filepath.Base(elsewhere), "secret"), ErrTranscriptOutside, false},
		{filepath.Join(root, "p"), ErrTranscriptNotRegular, false},
		{filepath.Join(root, "missing.jsonl"), fs.ErrNotExist, false},
		{filepath.Join(root, "link.jsonl"), nil, !symlinks},
		{filepath.Join(root, "dir", "secret"), nil, !symlinks},
	} {
		if tc.skip {
			continue
		}
		f, err := OpenTranscript(root, tc.path)
		if err == nil {
			f.Close()
			t.Errorf("OpenTranscript(%s) opened it", tc.path)
			continue
		}
		if tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("OpenTranscript(%s) = %v, want %v", tc.path, err, tc.want)
		}
	}
}
