package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/redact"
	"github.com/tetherdev/tether/state"
)

// Fake secrets are built at run time so that the repository never holds a
// string a secret scanner would flag.

func fakeGitHubToken() string { return "ghp_" + strings.Repeat("a1B2", 9) }

// fakeAWSSecret has '/' and '+', which JSON encoders may escape.
func fakeAWSSecret() string { return strings.Repeat("wJal/rXUt+nFEMI", 3)[:40] }

func fakePrivateKey() string {
	body := strings.Repeat("MIIEowIBAAKCAQEAx4Yb+9d/Qm3Kp7", 2)
	return "-----BEGIN " + "RSA PRIVATE KEY-----\n" + body + "\n" + body + "\n-----END " + "RSA PRIVATE KEY-----"
}

// encodings are the forms a secret can take in a git object: as written,
// JSON-escaped the way Go escapes it, with "\/" and with "\u002b".
func encodings(secret string) []string {
	data, err := json.Marshal(secret)
	if err != nil {
		panic(err)
	}
	inner := string(data[1 : len(data)-1])
	return []string{
		secret, inner,
		strings.ReplaceAll(inner, "/", `\/`),
		strings.ReplaceAll(inner, "+", `\u002b`),
	}
}

// allObjects is the content of every object in the repository at dir,
// loose or packed, reachable or not.
func allObjects(tb testing.TB, dir string) string {
	tb.Helper()
	return runGit(tb, dir, "cat-file", "--batch-all-objects", "--batch")
}

// assertNoSecret fails when any form of any secret, or a run of 20 of its
// characters, appears in an object of the repository at dir.
func assertNoSecret(tb testing.TB, dir string, secrets ...string) {
	tb.Helper()
	objs := allObjects(tb, dir)
	for _, s := range secrets {
		for _, form := range encodings(s) {
			if strings.Contains(objs, form) {
				tb.Errorf("%s: a git object holds the secret %.12q... as %.24q", dir, s, form)
			}
		}
		for _, part := range []string{s[:20], s[len(s)-20:]} {
			if strings.Contains(objs, part) {
				tb.Errorf("%s: a git object holds part of the secret: %q", dir, part)
			}
		}
	}
}

func TestCondenseRedactsSecrets(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tok, aws, key := fakeGitHubToken(), fakeAWSSecret(), fakePrivateKey()
	a := f.agent(t, "leaky")
	prompt := "push with token " + tok + " please"
	a.turnStart(prompt)
	line := func(v any) string {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	a.write(
		line(map[string]string{"type": "user", "text": prompt}),
		line(map[string]string{"type": "tool_result", "content": "aws_secret_access_key = " + aws + "\n" + key}),
		`{"type":"assistant","text":"done"}`,
	)
	a.turnEnd()
	id := f.condense(t, "leaky")[0].Checkpoint

	assertNoSecret(t, f.dir, tok, aws, key[len("-----BEGIN RSA PRIVATE KEY-----\n"):])
	cp, err := f.repo.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	want := redact.Counts{"github-token": 2, "aws-secret-access-key": 1, "private-key": 1}
	if !maps.Equal(cp.Redactions, want) {
		t.Errorf("redactions = %v, want %v", cp.Redactions, want)
	}
	if got := cp.Turns[0].Redactions; !maps.Equal(got, redact.Counts{"github-token": 1}) {
		t.Errorf("prompt redactions = %v", got)
	}
	if got := cp.Transcript.Redactions; !maps.Equal(got, redact.Counts{"github-token": 1, "aws-secret-access-key": 1, "private-key": 1}) {
		t.Errorf("transcript redactions = %v", got)
	}
	if cp.Turns[0].Prompt != "push with token [REDACTED:github-token] please" {
		t.Errorf("prompt = %q", cp.Turns[0].Prompt)
	}
	if md := f.show(t, id, "prompts.md"); !strings.Contains(md, "push with token [REDACTED:github-token] please") {
		t.Errorf("prompts.md:\n%s", md)
	}

	// The slice is recorded by its place in the original file, and by the
	// size and hash of what was stored; it is still JSON lines.
	stored := f.show(t, id, "transcript.jsonl")
	sum := sha256.Sum256([]byte(stored))
	whole := readFile(t, a.transcript)
	if cp.Transcript.From != 0 || cp.Transcript.To != int64(len(whole)) || cp.Transcript.Bytes != int64(len(stored)) ||
		cp.Transcript.SHA256 != hex.EncodeToString(sum[:]) || len(stored) >= len(whole) {
		t.Errorf("transcript = %+v (stored %d bytes of %d)", cp.Transcript, len(stored), len(whole))
	}
	for l := range strings.Lines(stored) {
		if !json.Valid([]byte(l)) {
			t.Errorf("redacted line is not JSON: %s", l)
		}
	}
	for _, marker := range []string{"[REDACTED:github-token]", "[REDACTED:aws-secret-access-key]", "[REDACTED:private-key]"} {
		if !strings.Contains(stored, marker) {
			t.Errorf("transcript.jsonl lacks %s:\n%s", marker, stored)
		}
	}

	// A retry after losing the state writes the same bytes: no new commit.
	tip := runGit(t, f.dir, "rev-parse", CheckpointsRef)
	a.mutate(func(tx *state.Tx) error {
		tx.Session.Condensed, tx.Session.CondensedTurns, tx.Session.Checkpoints = 0, 0, nil
		return nil
	})
	if res := f.condense(t, "leaky"); len(res) != 1 || !res[0].Skipped {
		t.Errorf("retry = %+v, want the identical checkpoint skipped", res)
	}
	if runGit(t, f.dir, "rev-parse", CheckpointsRef) != tip {
		t.Error("the retry moved the branch")
	}
	f.fsck(t)
}

func TestCondenseRedactsAcrossChunks(t *testing.T) {
	t.Parallel()
	// Staged for redaction in memory, as most slices are, and in a file.
	for name, inMemory := range map[string]int64{"in memory": maxStagedInMemory, "in a file": 0} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.repo.chunk, f.repo.inMemory = 64, inMemory
			tok := fakeGitHubToken()
			a := f.agent(t, "split")
			a.turnStart("long output")
			// One line longer than a chunk, with the token where a chunk boundary
			// of the unredacted bytes would cut it in two; and one token across a
			// boundary between whole lines.
			a.write(`{"out":"` + strings.Repeat("x ", (64-8-10)/2) + tok + `"}`)
			a.write(`{"n":1}`, `{"n":2}`, `{"out":"`+tok+" "+tok+`"}`)
			a.turnEnd()
			id := f.condense(t, "split")[0].Checkpoint
			cp, err := f.repo.Read(id)
			if err != nil {
				t.Fatal(err)
			}
			if len(cp.Transcript.Files) < 2 {
				t.Fatalf("files %q, want several chunks", cp.Transcript.Files)
			}
			if got := cp.Transcript.Redactions; !maps.Equal(got, redact.Counts{"github-token": 3}) {
				t.Errorf("transcript redactions = %v, want 3 GitHub tokens", got)
			}
			assertNoSecret(t, f.dir, tok)
			var joined strings.Builder
			for _, name := range cp.Transcript.Files {
				joined.WriteString(f.show(t, id, name))
			}
			if got := strings.Count(joined.String(), "[REDACTED:github-token]"); got != 3 {
				t.Errorf("chunks hold %d markers, want 3:\n%s", got, joined.String())
			}
			if sum := sha256.Sum256([]byte(joined.String())); cp.Transcript.SHA256 != hex.EncodeToString(sum[:]) || cp.Transcript.Bytes != int64(joined.Len()) {
				t.Errorf("transcript = %+v, stored %d bytes", cp.Transcript, joined.Len())
			}
		})
	}
}

func TestCondenseRedactsOtherFields(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tok := fakeGitHubToken()
	a := f.agent(t, "branchy")
	a.mutate(func(tx *state.Tx) error {
		tx.Session.Branch = "fix/" + tok
		return nil
	})
	a.turn("clean prompt")
	id := f.condense(t, "branchy")[0].Checkpoint
	assertNoSecret(t, f.dir, tok)
	cp, err := f.repo.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Branch != "fix/[REDACTED:github-token]" || !maps.Equal(cp.Redactions, redact.Counts{"github-token": 1}) {
		t.Errorf("branch %q, redactions %v", cp.Branch, cp.Redactions)
	}
}

func TestCondenseLeavesNoStagingFiles(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tmp := filepath.Join(f.st.Dir(), "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	// Left by a crash on a system that cannot unlink an open file: the
	// old one goes, a recent one (a condense running now) stays.
	old, recent := filepath.Join(tmp, tempPrefix+"old"), filepath.Join(tmp, tempPrefix+"recent")
	for _, p := range []string{old, recent} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-48 * time.Hour) // staging files live for seconds; a day old is a leftover
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	f.agent(t, "tidy").turn("one")
	f.condense(t, "tidy")
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{tempPrefix + "recent"}) {
		t.Errorf("staging dir holds %q, want only the recent leftover", names)
	}
}

// TestCondenseRedactsPasswords: the passwords, typed into a prompt
// and run in a tool call, reach no git object.
func TestCondenseRedactsPasswords(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.agent(t, "passwords")
	a.turnStart("clone https://user:pass@host/org/repo.git and set password=hunter2hunter2")
	a.write(`{"type":"tool_use","input":{"command":"psql postgres://app:secret@db/prod"}}`)
	a.turnEnd()
	res := f.condense(t, "passwords")
	cp, err := f.repo.Read(res[0].Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if want := (redact.Counts{"url-credentials": 2, "password": 1}); !maps.Equal(cp.Redactions, want) {
		t.Errorf("redactions %v, want %v", cp.Redactions, want)
	}
	objs := allObjects(t, f.dir)
	for _, s := range []string{"user:pass@", "app:secret@", "hunter2hunter2"} {
		if strings.Contains(objs, s) {
			t.Errorf("a git object holds %q", s)
		}
	}
}
