package conversation

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The export of a session of two turns, from the real OpenCode 1.18.33
// (a prompt answered, then a resumed prompt whose model call failed).
const (
	firstPrompt  = "msg_20affc24f001ZLlZYoSvuFx6T4"
	secondPrompt = "msg_20b00e49c0015suF2EW8WmSSkD"
)

func recorded(t *testing.T) []Message {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "export_two_turns.json"))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

func TestParse(t *testing.T) {
	msgs := recorded(t)
	want := []struct{ id, role, answers string }{
		{firstPrompt, "user", ""},
		{"msg_20b00450c001PQiIPhQwHwQqo8", "assistant", firstPrompt},
		{secondPrompt, "user", ""},
		{"msg_20b010e73001d56LDFwsfmo7Is", "assistant", secondPrompt},
	}
	if len(msgs) != len(want) {
		t.Fatalf("%d messages, want %d", len(msgs), len(want))
	}
	for i, w := range want {
		m := msgs[i]
		if m.ID != w.id || m.Role != w.role || m.Answers != w.answers || strings.ContainsRune(string(m.JSON), '\n') {
			t.Errorf("message %d = %s %s %s (%d bytes), want %+v", i, m.ID, m.Role, m.Answers, len(m.JSON), w)
		}
	}
	for _, bad := range []string{"", "[]", `{"messages":{}}`, `{"messages":[1]}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestSelect(t *testing.T) {
	msgs := recorded(t)
	for _, tc := range []struct {
		keys []string
		want []string // IDs, in order
	}{
		{[]string{firstPrompt}, []string{firstPrompt, "msg_20b00450c001PQiIPhQwHwQqo8"}},
		{[]string{secondPrompt}, []string{secondPrompt, "msg_20b010e73001d56LDFwsfmo7Is"}},
		{[]string{secondPrompt, firstPrompt}, []string{firstPrompt, "msg_20b00450c001PQiIPhQwHwQqo8", secondPrompt, "msg_20b010e73001d56LDFwsfmo7Is"}},
		{[]string{""}, nil},
		{[]string{"msg_other"}, nil},
		{nil, nil},
	} {
		got := Select(msgs, tc.keys)
		lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
		if len(got) == 0 {
			lines = nil
		}
		if len(lines) != len(tc.want) {
			t.Errorf("Select(%v): %d lines, want %d", tc.keys, len(lines), len(tc.want))
			continue
		}
		for i, id := range tc.want {
			if !strings.Contains(lines[i], `"id":"`+id+`"`) {
				t.Errorf("Select(%v) line %d is not %s: %.120s", tc.keys, i, id, lines[i])
			}
		}
	}
}

func TestCommand(t *testing.T) {
	if argv, ok := Command("opencode", "ses_1"); !ok || strings.Join(argv, " ") != "opencode export ses_1" {
		t.Errorf("Command(opencode) = %q, %v", argv, ok)
	}
	for _, name := range []string{"claude-code", "copilot", "nosuch"} {
		if argv, ok := Command(name, "s"); ok {
			t.Errorf("Command(%s) = %q, want none: it keeps transcripts", name, argv)
		}
	}
	if _, err := Export(context.Background(), "claude-code", "s", t.TempDir()); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Export(claude-code) error = %v", err)
	}
}

// TestExportErrors runs a stand-in for the opencode binary that answers
// as OpenCode 1.18.33 did for a session it does not have, and for other
// failures. (e2e/opencode_test.go runs the real one.)
func TestExportErrors(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in is a shell script")
	}
	bin := t.TempDir()
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	standIn := func(script string) {
		if err := os.WriteFile(filepath.Join(bin, "opencode"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	standIn(`printf 'Exporting session: %s\n\033[91m\033[1mError: \033[0mSession not found: %s\n' "$2" "$2" >&2; exit 1`)
	if _, err := Export(ctx, "opencode", "ses_gone", t.TempDir()); !errors.Is(err, ErrGone) {
		t.Errorf("a session OpenCode does not have: %v, want ErrGone", err)
	}
	standIn(`printf 'Exporting session: %s\n\033[91mError: \033[0mdatabase is locked\n' "$2" >&2; exit 1`)
	if _, err := Export(ctx, "opencode", "ses_1", t.TempDir()); err == nil || errors.Is(err, ErrGone) ||
		!strings.HasSuffix(err.Error(), ": Error: database is locked") || !strings.HasPrefix(err.Error(), "opencode export ses_1: exit status 1") {
		t.Errorf("another failure: %v", err)
	}
	standIn(`echo 'not json'`)
	if _, err := Export(ctx, "opencode", "ses_1", t.TempDir()); err == nil || !strings.Contains(err.Error(), "read the export") {
		t.Errorf("output that is no export: %v", err)
	}
	standIn(`cat ` + filepath.Join(mustAbs(t, "testdata"), "export_two_turns.json"))
	if msgs, err := Export(ctx, "opencode", "ses_1", t.TempDir()); err != nil || len(msgs) != 4 {
		t.Errorf("an export: %d messages, %v", len(msgs), err)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
