package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseCmdline(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\x00", nil},
		{"/bin/tether-hook\x00claude-code\x00", []string{"/bin/tether-hook", "claude-code"}},
		{"sh\x00-c\x00\x00", []string{"sh", "-c", ""}},
		{"no-nul", []string{"no-nul"}},
	}
	for _, tt := range tests {
		if got := parseCmdline([]byte(tt.in)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseCmdline(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFlockHolders(t *testing.T) {
	locks := `1: FLOCK  ADVISORY  WRITE 4242 08:01:1234567 0 EOF
1: -> FLOCK  ADVISORY  WRITE 4343 08:01:1234567 0 EOF
2: POSIX  ADVISORY  WRITE 77 00:2a:1234567 0 EOF
3: FLOCK  ADVISORY  WRITE 99 00:2a:7654321 0 EOF
4: FLOCK  ADVISORY  WRITE 100 fd:00:1234567 0 EOF
garbage
`
	if got, want := flockHolders([]byte(locks), 1234567), []int{4242, 100}; !reflect.DeepEqual(got, want) {
		t.Errorf("holders = %v, want %v", got, want)
	}
	if got := flockHolders([]byte(locks), 1); got != nil {
		t.Errorf("holders of an unlocked inode = %v", got)
	}
}

func TestParseLsTree(t *testing.T) {
	out := "040000 tree 1111\tab\x00" +
		"100644 blob 2222\tab/cdef/checkpoint.json\x00" +
		"100644 blob 3333\tab/cdef/with\ttab.md\x00" +
		"broken\x00"
	want := []treeFile{
		{kind: "tree", hash: "1111", path: "ab"},
		{kind: "blob", hash: "2222", path: "ab/cdef/checkpoint.json"},
		{kind: "blob", hash: "3333", path: "ab/cdef/with\ttab.md"},
	}
	if got := parseLsTree([]byte(out)); !reflect.DeepEqual(got, want) {
		t.Errorf("parseLsTree = %+v, want %+v", got, want)
	}
}

func TestNoteCheckpoints(t *testing.T) {
	note := "A person's note\n\nTether-Checkpoint: aa11\n  Tether-Checkpoint: bb22  \nTether-Checkpoint: two ids\nTether-Checkpoint:\n"
	if got, want := noteCheckpoints(note), []string{"aa11", "bb22"}; !reflect.DeepEqual(got, want) {
		t.Errorf("noteCheckpoints = %v, want %v", got, want)
	}
}

func TestParseLogLine(t *testing.T) {
	e, ok := parseLogLine([]byte(`{"time":"2026-05-01T12:00:00Z","level":"ERROR","msg":"hook failed","agent":"claude-code","err":"record turn-start for session s-1.x: lock"}` + "\n"))
	if !ok || e.Level != "ERROR" || e.text() != "hook failed: record turn-start for session s-1.x: lock" {
		t.Errorf("parseLogLine = %+v, %v", e, ok)
	}
	if hookFailureSession(e.Err) != "s-1.x" {
		t.Errorf("hookFailureSession(%q) = %q", e.Err, hookFailureSession(e.Err))
	}
	for _, bad := range []string{"", "{", `{"msg":"no level"}`, "not json"} {
		if _, ok := parseLogLine([]byte(bad)); ok {
			t.Errorf("parseLogLine(%q) accepted", bad)
		}
	}
	for in, want := range map[string]string{"claude-code payload: empty payload": "", "session ": "", "for session abc": "abc"} {
		if got := hookFailureSession(in); got != want {
			t.Errorf("hookFailureSession(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShape(t *testing.T) {
	if got := shape("pid 4242 at offset 17, 3x"); got != "pid # at offset #, #x" {
		t.Errorf("shape = %q", got)
	}
}

// statusSession is a session of `status --json` with every field.
func statusSession(id, phase, liveness string) string {
	return `{"id":"` + id + `","agent":"claude-code","phase":"` + phase + `","liveness":"` + liveness +
		`","liveness_reason":"","turns":1,"started_at":"2026-05-01T12:00:00Z","last_activity_at":"2026-05-01T12:00:00Z",` +
		`"worktree":"/w","branch":"main","last_prompt":"p","pending_turns":0,"end_reason":"","interrupted":false,` +
		`"resumable":true,"checkpoints":[]}`
}

func TestParseStatus(t *testing.T) {
	good := `{"sessions":[` + statusSession("a", "active", "alive") + `,` + statusSession("b", "ended", "dead") + `],"finalized":["b"],"warnings":[]}`
	rows, err := parseStatus([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]statusRow{"a": {"active", "alive"}, "b": {"ended", "dead"}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("rows = %v, want %v", rows, want)
	}
	tests := []struct{ doc, want string }{
		{`[]`, "not JSON"},
		{`{"sessions":[],"finalized":null,"warnings":[]}`, `"finalized" is not a list`},
		{`{"sessions":[],"warnings":[]}`, `"finalized" is not a list`},
		{`{"sessions":[{"id":"a"}],"finalized":[],"warnings":[]}`, `session 0 has no "agent"`},
		{`{"sessions":[` + statusSession("a", "gone", "alive") + `],"finalized":[],"warnings":[]}`, `phase "gone"`},
		{`{"sessions":[` + statusSession("a", "idle", "maybe") + `],"finalized":[],"warnings":[]}`, `liveness "maybe"`},
		{`{"sessions":[` + statusSession("", "idle", "alive") + `],"finalized":[],"warnings":[]}`, "empty id"},
		{`{"sessions":[` + statusSession("a", "idle", "alive") + `,` + statusSession("a", "ended", "dead") + `],"finalized":[],"warnings":[]}`, "session a listed twice"},
	}
	for _, tt := range tests {
		if _, err := parseStatus([]byte(tt.doc)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseStatus(%s) = %v, want an error with %q", tt.doc, err, tt.want)
		}
	}
}

func TestCatFileBatch(t *testing.T) {
	out := "aaaa blob 5\nhello\nbbbb missing\ncccc blob 0\n\n"
	objs, err := catFileBatch([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string][]byte{"aaaa": []byte("hello"), "cccc": {}}; !reflect.DeepEqual(objs, want) {
		t.Errorf("objects = %q, want %q", objs, want)
	}
	for _, bad := range []string{"aaaa blob 9\nhello\n", "aaaa blob x\n", "aaaa blob 5\nhelloX", "header without newline"} {
		if _, err := catFileBatch([]byte(bad)); err == nil {
			t.Errorf("catFileBatch(%q) accepted", bad)
		}
	}
}
