package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

// jsonString encodes s as a JSON string the way Go does, optionally also
// escaping '/' as \/ and '+' as \u002b as other encoders do.
func jsonString(s string, extraEscapes bool) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // strings always marshal
	}
	out := string(b)
	if extraEscapes {
		out = strings.NewReplacer("/", `\/`, "+", `\u002b`).Replace(out)
	}
	return out
}

// contexts are the ways a secret reaches a transcript or a prompt; each
// wraps text and says whether the result must be valid JSON.
var contexts = []struct {
	name string
	wrap func(text string) string
	json bool
}{
	{"plain", func(t string) string { return t }, false},
	{"prose", func(t string) string { return "Use this: " + t + " and tell me if it works.\n" }, false},
	{"env-file", func(t string) string { return "FOO=bar\n" + t + "\nDEBUG=1\n" }, false},
	{"json-string", func(t string) string {
		return `{"type":"user","message":{"role":"user","content":` + jsonString("see "+t+" ok", false) + `}}`
	}, true},
	{"json-extra-escapes", func(t string) string {
		return `{"type":"tool_result","content":` + jsonString("line one\n"+t+"\nline three", true) + `}`
	}, true},
	{"json-in-json", func(t string) string {
		inner := `{"output":` + jsonString("got "+t+"\n", false) + `}`
		return `{"type":"tool_result","content":` + jsonString(inner, false) + `}`
	}, true},
}

func TestRulesPositive(t *testing.T) {
	r := New()
	rng := rand.New(rand.NewPCG(1, 2))
	for kind := range fakeKinds {
		for _, ctx := range contexts {
			f := fakeSecret(rng, kind)
			in := ctx.wrap(f.text)
			t.Run(fmt.Sprintf("%s/%d/%s", f.rule, kind, ctx.name), func(t *testing.T) {
				out, counts := r.String(in)
				if want := (Counts{f.rule: 1}); !maps.Equal(counts, want) {
					t.Fatalf("counts = %v, want %v\nin:  %s\nout: %s", counts, want, in, out)
				}
				if !strings.Contains(out, "[REDACTED:"+f.rule+"]") {
					t.Errorf("no marker in %s", out)
				}
				if ctx.json {
					if !json.Valid([]byte(out)) {
						t.Fatalf("output is not valid JSON: %s", out)
					}
					if decodedContains(t, out, f.secret) {
						t.Errorf("decoded output still holds the secret: %s", out)
					}
				} else if strings.Contains(out, f.secret) {
					t.Errorf("output still holds the secret: %s", out)
				}
			})
		}
	}
}

// decodedContains reports whether any string in the JSON document doc, decoded
// as many times as it holds JSON itself, contains s.
func decodedContains(t *testing.T, doc, s string) bool {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("unmarshal %s: %v", doc, err)
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			if strings.Contains(v, s) {
				return true
			}
			var inner any
			if json.Unmarshal([]byte(v), &inner) == nil {
				return walk(inner)
			}
		case map[string]any:
			for _, e := range v {
				if walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range v {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

func TestRulesPatterned(t *testing.T) {
	// Fixed, obviously fake tokens of each exact format.
	r := New()
	p := func(n int) string { return strings.Repeat("a1B2", n/4) + "a1B2"[:n%4] }
	tests := []struct {
		in, rule string
	}{
		{"ghp_" + p(36), "github-token"},
		{"github_pat_" + p(22) + "_" + p(59), "github-token"},
		{"glpat-" + p(20), "gitlab-token"},
		{"glpat-" + p(27) + ".01." + p(9), "gitlab-token"},
		{"AKIA" + strings.Repeat("Q3", 8), "aws-access-key-id"},
		{"AIza" + p(35), "google-api-key"},
		{"sk-ant-admin01-" + p(40), "anthropic-key"},
		{"sk-svcacct-" + p(60), "openai-key"},
		{"hf_" + p(34), "huggingface-token"},
		{"xoxp-" + p(40), "slack-token"},
		{"sk_test_" + p(24), "stripe-key"},
		{"-----BEGIN PRIVATE KEY-----\n" + p(64) + "\n-----END PRIVATE KEY-----", "private-key"},
		{"-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + p(64) + "\n-----END ENCRYPTED PRIVATE KEY-----", "private-key"},
		{"-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: x\n\n" + p(64) + "\n-----END PGP PRIVATE KEY BLOCK-----", "private-key"},
		{"-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,AB12\n\n" + p(64) + "\n-----END EC PRIVATE KEY-----", "private-key"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			in := "x " + tt.in + " y"
			out, counts := r.String(in)
			if want := "x [REDACTED:" + tt.rule + "] y"; out != want {
				t.Errorf("String(%q) = %q, want %q", in, out, want)
			}
			if counts[tt.rule] != 1 || len(counts) != 1 {
				t.Errorf("counts = %v", counts)
			}
		})
	}
}

func TestNegatives(t *testing.T) {
	r := New()
	p := func(n int) string { return strings.Repeat("a1B2", n/4) + "a1B2"[:n%4] }
	tests := []struct{ name, in string }{
		{"uuid", `{"sessionId":"5ce3152c-4aa7-4e1f-9785-88b12ca7e6c9","token":"5ce3152c-4aa7-4e1f-9785-88b12ca7e6c9"}`},
		{"sha1", "commit da39a3ee5e6b4b0d3255bfef95601890afd80709 token=da39a3ee5e6b4b0d3255bfef95601890afd80709"},
		{"sha256", "secret: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"base64 text", `{"data":"VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZy4gU28gaXQgZ29lcy4="}`},
		{"base64 json", `{"blob":"eyJhIjoxLCJiIjoiYyJ9"}`},
		{"paths", `{"file_path":"/home/dev/project/src/main.go","token_file":"./secrets/token.txt","password_file":"~/.config/app/pass"}`},
		{"relative path", "token = src/redact/redact_test.go"},
		{"tokenizer", `tokenizer: bert-base-uncased-v2x, max_tokens: 4096, "input_tokens": 12345, tokenizer_path=models/tok`},
		{"words", "password: changeme\nsecret: my-app-secret\ntoken: this-is-my-secret-value"},
		{"code assigning passwords", "password: string;\npassword = None\npassword := r.FormValue(\"password\")\npassword=getpass.getpass()\nPWD=/home/dev/project\npassword: !vault |"},
		{"quoted non-passwords", "password: \"string\"\npassword: '${DB_PASSWORD}'\nPASSWORD=\"\"\npassword: \"********\""},
		{"password references", "password: ${DB_PASSWORD}\nDB_PASSWORD=$(cat /run/secrets/db)\npassword: \"********\"\npassword=https://vault.internal/v1/db\npassword_length=128"},
		{"urls without credentials", "ssh://git@github.com/org/repo.git https://user@host/x https://host:8080/a@b postgres://app:$DB_PASS@db/x https://u:****@host/ ftp://anonymous:@ftp.example.com/ http://[::1]:80/"},
		{"placeholders", "API_KEY=${OPENAI_API_KEY}\nGITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\npassword=********************\napi_key=%API_KEY_FROM_ENV%"},
		{"identifiers", "api_key = process.env.OPENAI_API_KEY\ntoken := os.Getenv(\"GITHUB_TOKEN\")\nsecret=your-secret-key-here"},
		{"timestamps", `{"token_expires_at":"2025-11-21T10:43:00.123Z","token_id":1234567890123456789}`},
		{"url", "token: https://example.com/oauth/authorize?client=abc"},
		{"numbers", `{"token": -1.5e+10, "secret": 123456789012345678901234567890}`},
		{"mid-word prefixes", "task-" + p(40) + " disk-" + p(40) + " highghp_" + p(36) + " AAKIA" + strings.Repeat("Q3", 8)},
		{"single-class words", "sk-learning-resources-for-everyone-who-wants-it xai-abcdefghijklmnopqrstuvwxyzabcdefghijklmnop"},
		{"too short", "ghp_" + p(20) + " sk-" + p(20) + " hf_" + p(10)},
		{"aws id too long", "AKIA" + strings.Repeat("Q3", 10)},
		{"jwt without payload", "eyJhbGciOiJIUzI1NiJ9.notapayload.sig"},
		{"pem public key", "-----BEGIN PUBLIC KEY-----\n" + p(64) + "\n-----END PUBLIC KEY-----"},
		{"pem certificate", "-----BEGIN CERTIFICATE-----\n" + p(64) + "\n-----END CERTIFICATE-----"},
		{"session key", `{"key":"` + p(40) + `","cache_key":"` + p(40) + `"}`},
		{"empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, counts := r.String(tt.in)
			if out != tt.in || counts != nil {
				t.Errorf("String(%q) = %q, %v; want it unchanged", tt.in, out, counts)
			}
		})
	}
}

func TestEscapes(t *testing.T) {
	r := New()
	rng := rand.New(rand.NewPCG(3, 4))
	awsSecret := "wJalr/" + randFrom(rng, alphaNum, 27) + "+K7MDEN"
	pem := fakePEM(rng, "RSA PRIVATE KEY", "\n")
	tests := []struct {
		name, in, secret, rule string
	}{
		{"escaped slash and plus", `{"content":"aws_secret_access_key=` + strings.NewReplacer("/", `\/`, "+", `\u002b`).Replace(awsSecret) + `"}`, awsSecret, "aws-secret-access-key"},
		{"pem with escaped newlines", `{"content":` + jsonString(pem, false) + `}`, pem, "private-key"},
		{"pem with escaped slashes", `{"content":` + jsonString(pem, true) + `}`, pem, "private-key"},
		{"pem doubly escaped", `{"content":` + jsonString(`{"key":`+jsonString(pem, false)+`}`, false) + `}`, pem, "private-key"},
		{"token after escaped newline", `{"content":"export X=1\nghp_` + randFrom(rng, alphaNum, 36) + `\n"}`, "", "github-token"},
		{"token after doubly escaped newline", `{"content":"{\"a\":\"x\\nghp_` + randFrom(rng, alphaNum, 36) + `\"}"}`, "", "github-token"},
		{"name after escaped newline", `{"content":"A=1\nSTRIPE_SECRET=` + randFrom(rng, alphaNum, 30) + `\n"}`, "", "generic-secret"},
		{"escaped quotes around value", `{"content":"{\"password\": \"` + randFrom(rng, alphaNum, 30) + `\"}"}`, "", "generic-secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !json.Valid([]byte(tt.in)) {
				t.Fatalf("test input is not JSON: %s", tt.in)
			}
			out, counts := r.String(tt.in)
			if !maps.Equal(counts, Counts{tt.rule: 1}) {
				t.Fatalf("counts = %v, want %s:1\nin:  %s\nout: %s", counts, tt.rule, tt.in, out)
			}
			if !json.Valid([]byte(out)) {
				t.Fatalf("output is not valid JSON: %s", out)
			}
			if tt.secret != "" && decodedContains(t, out, tt.secret) {
				t.Errorf("secret survives decoding: %s", out)
			}
		})
	}
}

func TestOverlapsAreNamedBySpecificRule(t *testing.T) {
	r := New()
	rng := rand.New(rand.NewPCG(5, 6))
	gh := "ghp_" + randFrom(rng, alphaNum, 36)
	oa := "sk-proj-" + randFrom(rng, base64URL, 100)
	tests := []struct{ in, want string }{
		{"GITHUB_TOKEN=" + gh, "GITHUB_TOKEN=[REDACTED:github-token]"},
		{`{"api_key": "` + oa + `"}`, `{"api_key": "[REDACTED:openai-key]"}`},
		{"Authorization: Bearer " + oa, "Authorization: Bearer [REDACTED:openai-key]"},
		{"token=" + gh + "," + gh, "token=[REDACTED:github-token],[REDACTED:github-token]"},
	}
	for _, tt := range tests {
		out, counts := r.String(tt.in)
		if out != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, out, tt.want)
		}
		var total int
		for _, n := range counts {
			total += n
		}
		if total != strings.Count(tt.want, "[REDACTED:") {
			t.Errorf("counts %v disagree with %q", counts, tt.want)
		}
	}
}

func TestTruncatedPrivateKey(t *testing.T) {
	r := New()
	rng := rand.New(rand.NewPCG(7, 8))
	body := randFrom(rng, base64Std, 64) + "\n" + randFrom(rng, base64Std, 64)
	in := "$ head -3 id_rsa\n-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n(output truncated)"
	out, counts := r.String(in)
	if want := "$ head -3 id_rsa\n[REDACTED:private-key](output truncated)"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
	if counts["private-key"] != 1 {
		t.Errorf("counts = %v", counts)
	}
	// Headers without bodies, back to back: one redaction, each header
	// examined once.
	rep := strings.Repeat("-----BEGIN EC PRIVATE KEY-----\n", 1000)
	if out, counts := r.String(rep); out != "[REDACTED:private-key]" || counts["private-key"] != 1 {
		t.Errorf("repeated headers: got %q..., %v", out[:min(len(out), 60)], counts)
	}
	// In a JSON string, a truncated block ends at the closing quote, and the
	// redaction must not swallow half of an escape before it.
	js := `{"c":"-----BEGIN RSA PRIVATE KEY-----\n` + randFrom(rng, base64Std, 64) + `\"x"}`
	out, _ = r.String(js)
	if !json.Valid([]byte(out)) {
		t.Errorf("truncated key in JSON: invalid output %s", out)
	}
}

func TestJSONValidityOnSample(t *testing.T) {
	r := New()
	sample, planted := transcript(400<<10, 40)
	out, counts := r.Bytes(sample)
	var total int
	for _, n := range counts {
		total += n
	}
	if total != len(planted) {
		t.Errorf("redacted %d secrets (%v), planted %d", total, counts, len(planted))
	}
	inLines := bytes.Split(sample, []byte("\n"))
	outLines := bytes.Split(out, []byte("\n"))
	if len(inLines) != len(outLines) {
		t.Fatalf("line count changed: %d -> %d", len(inLines), len(outLines))
	}
	for i, line := range outLines {
		if json.Valid(inLines[i]) && !json.Valid(line) {
			t.Fatalf("line %d lost JSON validity: %s", i, line)
		}
	}
	for _, s := range planted {
		if bytes.Contains(out, []byte(s)) {
			t.Errorf("planted secret survives: %s", s)
		}
	}
	if again, c := r.Bytes(out); c != nil || !bytes.Equal(again, out) {
		t.Errorf("redacting the output again changed it: %v", c)
	}
}

func TestBytesDoesNotAlias(t *testing.T) {
	r := New()
	in := []byte("nothing to see")
	out, _ := r.Bytes(in)
	out[0] = 'N'
	if in[0] != 'n' {
		t.Error("Bytes returned its input")
	}
}

// chunkReader returns reads of pseudo-random sizes between 1 and max.
type chunkReader struct {
	r   io.Reader
	rng *rand.Rand
	max int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	n := 1 + c.rng.IntN(c.max)
	return c.r.Read(p[:min(n, len(p))])
}

func TestCopyMatchesBytes(t *testing.T) {
	r := New()
	// Long enough to exercise compaction many times; lines up to 600 KiB,
	// secrets at many offsets relative to the read and lookahead windows.
	sample, _ := transcript(3<<20/2, 120)
	want, wantCounts := r.Bytes(sample)
	readers := map[string]func() io.Reader{
		"whole":    func() io.Reader { return bytes.NewReader(sample) },
		"one-byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(sample)) },
		"half":     func() io.Reader { return iotest.HalfReader(bytes.NewReader(sample)) },
		"data-err": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(sample)) },
		"random": func() io.Reader {
			return &chunkReader{bytes.NewReader(sample), rand.New(rand.NewPCG(9, 10)), 3 * lookahead}
		},
	}
	for name, mk := range readers {
		t.Run(name, func(t *testing.T) {
			var got bytes.Buffer
			counts, n, err := r.Copy(&got, mk())
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(got.Len()) {
				t.Errorf("reported %d bytes written, wrote %d", n, got.Len())
			}
			if !maps.Equal(counts, wantCounts) {
				t.Errorf("counts = %v, want %v", counts, wantCounts)
			}
			if !bytes.Equal(got.Bytes(), want) {
				i := 0
				for i < min(len(want), got.Len()) && want[i] == got.Bytes()[i] {
					i++
				}
				t.Fatalf("Copy differs from Bytes at byte %d of %d/%d", i, got.Len(), len(want))
			}
		})
	}
}

func TestCopyAcrossStepBoundaries(t *testing.T) {
	// Read one byte at a time, Copy scans in steps that end at multiples of
	// readChunk. Plant a secret across each step end, at a different offset
	// each time, so that matches, pending redactions and names on the left
	// of assignments straddle the points where Copy drops consumed input.
	r := New()
	rng := rand.New(rand.NewPCG(15, 16))
	filler := []byte(prose(rng, 400000))
	var in []byte
	var planted []string
	for k := 1; k <= fakeKinds; k++ {
		f := fakeSecret(rng, k)
		text := " " + f.text + " "
		at := k*readChunk - 1 - (k*13)%len(text)
		for len(in) < at {
			in = append(in, filler[len(in)%len(filler)])
		}
		in = append(in, text...)
		planted = append(planted, f.secret)
	}
	want, wantCounts := r.Bytes(in)
	var total int
	for _, n := range wantCounts {
		total += n
	}
	if total != len(planted) {
		t.Fatalf("Bytes redacted %d secrets (%v), planted %d", total, wantCounts, len(planted))
	}
	var got bytes.Buffer
	counts, _, err := r.Copy(&got, iotest.OneByteReader(bytes.NewReader(in)))
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(counts, wantCounts) || !bytes.Equal(got.Bytes(), want) {
		t.Errorf("Copy differs from Bytes: counts %v, want %v", counts, wantCounts)
	}
	for _, s := range planted {
		if bytes.Contains(got.Bytes(), []byte(s)) {
			t.Errorf("planted secret survives: %s", s)
		}
	}
}

func TestCopySmallInputs(t *testing.T) {
	r := New()
	rng := rand.New(rand.NewPCG(11, 12))
	for kind := range fakeKinds {
		f := fakeSecret(rng, kind)
		in := []byte(`{"c":` + jsonString("a "+f.text+" b", kind%2 == 0) + "}\n")
		want, wantCounts := r.Bytes(in)
		var got bytes.Buffer
		counts, _, err := r.Copy(&got, iotest.OneByteReader(bytes.NewReader(in)))
		if err != nil || !bytes.Equal(got.Bytes(), want) || !maps.Equal(counts, wantCounts) {
			t.Errorf("kind %d: Copy = %q, %v, %v; Bytes = %q, %v", kind, got.Bytes(), counts, err, want, wantCounts)
		}
	}
}

// secretStream generates size bytes by repeating period, one endless line,
// without holding the whole of it in memory.
type secretStream struct {
	size, off int
	period    []byte
}

func (s *secretStream) Read(p []byte) (int, error) {
	if s.off >= s.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && s.off < s.size {
		k := copy(p[n:min(len(p), n+s.size-s.off)], s.period[s.off%len(s.period):])
		n += k
		s.off += k
	}
	return n, nil
}

func TestCopyBoundedMemoryOnHugeLine(t *testing.T) {
	r := New()
	const size, period = 24 << 20, 100_000
	// Each period: a fake GitHub token, then filler full of escapes.
	unit := []byte(" ghp_" + strings.Repeat("a1B2", 9) + " ")
	filler := `lorem ipsum \"dolor\" sit amet, \u00e9 consectetur \\n adipiscing elit `
	for len(unit) < period {
		unit = append(unit, filler[:min(len(filler), period-len(unit))]...)
	}
	src := &secretStream{size: size, period: unit}
	var sink countingWriter
	var before, after runtimeStats
	before.read()
	counts, n, err := r.Copy(&sink, src)
	after.read()
	if err != nil {
		t.Fatal(err)
	}
	if want := (size + period - 1) / period; counts["github-token"] != want {
		t.Errorf("counts = %v, want %d github tokens", counts, want)
	}
	if n != sink.n {
		t.Errorf("reported %d bytes, wrote %d", n, sink.n)
	}
	if alloc := after.totalAlloc - before.totalAlloc; alloc > 4<<20 {
		t.Errorf("Copy of a %d MiB line allocated %d KiB; want bounded memory", size>>20, alloc>>10)
	}
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

func TestCopyErrors(t *testing.T) {
	r := New()
	boom := errors.New("boom")
	if _, _, err := r.Copy(io.Discard, iotest.ErrReader(boom)); !errors.Is(err, boom) {
		t.Errorf("read error: got %v", err)
	}
	in := "token=" + strings.Repeat("x", 10) + "\n"
	_, n, err := r.Copy(failWriter{boom}, strings.NewReader(in))
	if !errors.Is(err, boom) || n != 0 {
		t.Errorf("write error: got %d, %v", n, err)
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

func TestConcurrentUse(t *testing.T) {
	r := New()
	sample, planted := transcript(64<<10, 8)
	want, _ := r.Bytes(sample)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 5 {
				got, counts := r.Bytes(sample)
				if !bytes.Equal(got, want) || len(counts) == 0 {
					t.Errorf("concurrent Bytes differs (%d planted)", len(planted))
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestCountsAdd(t *testing.T) {
	c := Counts{"github-token": 1}
	c.Add(Counts{"github-token": 2, "jwt": 1})
	c.Add(nil)
	if want := (Counts{"github-token": 3, "jwt": 1}); !maps.Equal(c, want) {
		t.Errorf("got %v, want %v", c, want)
	}
}

func TestRandomValuesOfTwentyFourCharsAreSecrets(t *testing.T) {
	// Documents the entropy threshold: random alphanumeric values of 24
	// characters always pass it (shorter ones mostly do; see minEntropy).
	rng := rand.New(rand.NewPCG(13, 14))
	for range 2000 {
		v := randFrom(rng, alphaNum, 24)
		if !looksSecret([]byte(v)) {
			t.Fatalf("random value %q (%.2f bits) not judged a secret", v, entropy([]byte(v)))
		}
	}
}

// TestPasswordsAndURLCredentials: the cases, exactly. A URL's
// user:password goes whole, the host and path stay; a password goes
// however guessable.
func TestPasswordsAndURLCredentials(t *testing.T) {
	r := New()
	for _, tt := range []struct{ in, want string }{
		{"https://user:pass@host/org/repo.git", "https://[REDACTED:url-credentials]@host/org/repo.git"},
		{"postgres://app:secret@db/prod", "postgres://[REDACTED:url-credentials]@db/prod"},
		{"password=hunter2hunter2", "password=[REDACTED:password]"},
		{`{"cmd":"git push https:\/\/bot:s3cr3t-pw@git.example.com\/x"}`, `{"cmd":"git push https:\/\/[REDACTED:url-credentials]@git.example.com\/x"}`},
		{"mysql://root:p%40ss:word@127.0.0.1:3306/db", "mysql://[REDACTED:url-credentials]@127.0.0.1:3306/db"},
		{"redis://:Zx81kq@cache:6379", "redis://[REDACTED:url-credentials]@cache:6379"},
		{"export PGPASSWORD='Summer2024!'", "export PGPASSWORD='[REDACTED:password]'"},
		{`{"password": "123456"}`, `{"password": "[REDACTED:password]"}`},
		{"--password=hunter2", "--password=[REDACTED:password]"},
		{`DB_PASSWORD: "correct horse battery staple"`, `DB_PASSWORD: "[REDACTED:password]"`},
		{`{"content":"{\"password\": \"correct horse battery staple\"}"}`, `{"content":"{\"password\": \"[REDACTED:password]\"}"}`},
		{`{"c":"{\"k\":\"{\\\"pass\\\":\\\"open sesame\\\"}\"}"}`, `{"c":"{\"k\":\"{\\\"pass\\\":\\\"[REDACTED:password]\\\"}\"}"}`},
	} {
		out, counts := r.String(tt.in)
		if out != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, out, tt.want)
		}
		if len(counts) != 1 {
			t.Errorf("String(%q) counts %v, want one redaction", tt.in, counts)
		}
	}
	// A token in the user part is named by its own rule.
	tok := "ghp_" + randFrom(rand.New(rand.NewPCG(9, 9)), alphaNum, 36)
	if out, counts := r.String("https://" + tok + ":x-oauth-basic@github.com/o/r"); out != "https://[REDACTED:github-token]@github.com/o/r" || counts["github-token"] != 1 {
		t.Errorf("token as the URL's user: %q, %v", out, counts)
	}
}
