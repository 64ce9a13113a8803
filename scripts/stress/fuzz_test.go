package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func FuzzTranscript(f *testing.F) {
	f.Add([]byte(line("user", "p1") + line("assistant", "working on: p1") + line("assistant", "done: p1")))
	f.Add([]byte(line("user", "p") + line("user", "p") + `{"message":{"role":"user"`))
	f.Add([]byte("\n\n{}\n[]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries := parseTranscript(data)
		fates := promptFates(entries)
		seen := map[string]bool{}
		for _, fate := range fates {
			if seen[fate.prompt] {
				t.Fatalf("prompt %q listed twice", fate.prompt)
			}
			seen[fate.prompt] = true
			if !fate.submitted {
				t.Fatalf("fate of %q without its user line", fate.prompt)
			}
		}
		if a := activity(entries); a != atStarting && a != atMidTurn && a != atIdle {
			t.Fatalf("activity %q", a)
		}
	})
}

func FuzzProcParsers(f *testing.F) {
	f.Add([]byte("/bin/tether-hook\x00claude-code\x00"), uint64(1234567))
	f.Add([]byte("1: FLOCK  ADVISORY  WRITE 4242 08:01:1234567 0 EOF\n1: -> FLOCK ADVISORY WRITE 1 0:0:1 0 EOF\n"), uint64(1234567))
	f.Fuzz(func(t *testing.T, data []byte, inode uint64) {
		argv := parseCmdline(data)
		if trimmed := bytes.TrimSuffix(data, []byte{0}); len(trimmed) > 0 && strings.Join(argv, "\x00") != string(trimmed) {
			t.Fatalf("parseCmdline(%q) = %q does not join back", data, argv)
		}
		for _, pid := range flockHolders(data, inode) {
			if pid <= 0 {
				t.Fatalf("holder pid %d", pid)
			}
		}
	})
}

func FuzzGitParsers(f *testing.F) {
	f.Add([]byte("100644 blob 2222\tab/cdef/checkpoint.json\x00040000 tree 1\tab\x00"))
	f.Add([]byte("aaaa blob 5\nhello\nbbbb missing\n"))
	f.Add([]byte("Tether-Checkpoint: aa11\nTether-Checkpoint: a b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, tf := range parseLsTree(data) {
			if tf.kind == "" || tf.hash == "" || strings.ContainsAny(tf.kind+tf.hash, " \t\n") {
				t.Fatalf("entry %+v", tf)
			}
		}
		if objs, err := catFileBatch(data); err == nil {
			total := 0
			for _, o := range objs {
				total += len(o)
			}
			if total > len(data) {
				t.Fatalf("objects hold %d bytes of %d", total, len(data))
			}
		}
		for _, id := range noteCheckpoints(string(data)) {
			if id == "" || strings.ContainsAny(id, " \t\r\n") {
				t.Fatalf("note id %q", id)
			}
		}
	})
}

func FuzzStatus(f *testing.F) {
	f.Add([]byte(`{"sessions":[` + statusSession("a", "active", "alive") + `],"finalized":[],"warnings":[]}`))
	f.Add([]byte(`{"sessions":[],"finalized":null,"warnings":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := parseStatus(data)
		if err != nil {
			return
		}
		for id, row := range rows {
			if id == "" || !slices.Contains([]string{"idle", "active", "ended"}, row.phase) ||
				!slices.Contains([]string{"alive", "dead", "unknown"}, row.liveness) {
				t.Fatalf("accepted %q: %+v", id, row)
			}
		}
	})
}

func FuzzLogAndExit(f *testing.F) {
	f.Add(`{"level":"ERROR","msg":"hook failed","err":"record turn-start for session s1: lock"}`)
	f.Add("standin: turn=a: hook UserPromptSubmit: signal: killed\n")
	f.Add("standin: commit=x: git add: exit status 128")
	f.Fuzz(func(t *testing.T, s string) {
		if e, ok := parseLogLine([]byte(s)); ok && e.Level == "" {
			t.Fatalf("accepted a line without level: %q", s)
		}
		if id := hookFailureSession(s); strings.ContainsAny(id, " :/\n") {
			t.Fatalf("session %q from %q", id, s)
		}
		out, _ := classifyExit(exitReport{code: 1, stderr: s})
		if !slices.Contains([]string{outHookKilled, outHookFailed, outCommitFailed, outOther}, out) {
			t.Fatalf("outcome %q for %q", out, s)
		}
	})
}
