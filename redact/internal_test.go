package redact

import (
	"strings"
	"testing"
)

func TestClassifyKey(t *testing.T) {
	tests := []struct {
		key  string
		want keyKind
	}{
		{"password", keyPassword},
		{"DB_PASSWORD", keyPassword},
		{"passwd", keyPassword},
		{"db_pass", keyPassword},
		{"secret", keySecret},
		{"clientSecret", keySecret},
		{"client_secret", keySecret},
		{"token", keySecret},
		{"GITHUB_TOKEN", keySecret},
		{"accessToken", keySecret},
		{"api_key", keySecret},
		{"apiKey", keySecret},
		{"APIKey", keySecret},
		{"x-api-key", keySecret},
		{"apikey", keySecret},
		{"OPENAI_API_KEY", keySecret},
		{"MISTRAL_API_KEY", keySecret},
		{"CO_API_KEY", keySecret},
		{"private_key", keySecret},
		{"Authorization", keySecret},
		{"GH_PAT", keySecret},
		{"spring.datasource.password", keyPassword},
		{"adminPasswd", keyPassword},
		{"--password", keyPassword},
		{"PWD", keyPassword},
		{"PGPASSWORD", keyPassword},
		{"bypass", keyNone},
		{"password_length", keySecret},
		{"passwordHash", keySecret},
		{"aws_secret_access_key", keyAWSSecret},
		{"AWS_SECRET_ACCESS_KEY", keyAWSSecret},
		{"SecretAccessKey", keyAWSSecret},
		{"aws_secret_key", keyAWSSecret},
		{"tokenizer", keyNone},
		{"max_tokens", keyNone},
		{"input_tokens", keyNone},
		{"passthrough", keyNone},
		{"key", keyNone},
		{"cache_key", keyNone},
		{"keyword", keyNone},
		{"sessionId", keyNone},
		{"type", keyNone},
		{"https", keyNone},
		{"", keyNone},
		{strings.Repeat("token_", 11), keyNone}, // longer than maxKeyLen
	}
	for _, tt := range tests {
		if got := classifyKey([]byte(tt.key)); got != tt.want {
			t.Errorf("classifyKey(%q) = %d, want %d", tt.key, got, tt.want)
		}
	}
}

func TestKeyBefore(t *testing.T) {
	tests := []struct {
		in   string // the operator is the last byte
		want string
	}{
		{"password=", "password"},
		{"export API_KEY=", "API_KEY"},
		{`{"token":`, "token"},
		{`{\"token\":`, "token"},
		{`{\"token\" :`, "token"},
		{`os.environ["API_KEY"]=`, "API_KEY"},
		{`x\nPASSWORD=`, "PASSWORD"},
		{`x\u0020token:`, "token"},
		{`x\\nPASSWORD=`, "PASSWORD"},
		{"   =", ""},
		{"a:=", ""},
		{strings.Repeat("k", maxKeyLen+1) + "=", ""},
		{strings.Repeat("k", maxKeyLen) + "=", strings.Repeat("k", maxKeyLen)},
	}
	for _, tt := range tests {
		b := []byte(tt.in)
		if got := string(keyBefore(b, 0, len(b)-1)); got != tt.want {
			t.Errorf("keyBefore(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// The lookback bound is respected.
	b := []byte("password=")
	if got := keyBefore(b, 8, 8); got != nil {
		t.Errorf("keyBefore past its bound = %q", got)
	}
}

func TestValueStart(t *testing.T) {
	tests := []struct {
		in   string // the operator is the first byte
		want string // what follows the value start
	}{
		{"=abc", "abc"},
		{"= abc", "abc"},
		{`: "abc"`, `abc"`},
		{`:\"abc\"`, `abc\"`},
		{`:\\\"abc`, `abc`},
		{":=abc", "abc"},
		{"==abc", "abc"},
		{"=>'abc'", "abc'"},
		{": Bearer abc", "abc"},
		{": basic abc", "abc"},
		{`: "token abc"`, `abc"`},
		{`:\nabc`, `\nabc`}, // an escape is not skipped: the value starts at it
	}
	for _, tt := range tests {
		w := []byte(tt.in)
		if got := string(w[valueStart(w, 0):]); got != tt.want {
			t.Errorf("valueStart(%q) leaves %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDecodeValue(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		rawEnd  int
		wantOK  bool
		comment string
	}{
		{`abc"x`, "abc", 3, true, "stops at a quote"},
		{`a\/b\u002bc d`, "a/b+c", 11, true, "decodes escapes"},
		{`abc\"`, "abc", 3, true, "stops at an escaped quote"},
		{`abc\nxyz`, "abc", 3, true, "stops at an escaped newline"},
		{`ab\u00e9cd`, "ab", 2, true, "stops at non-ASCII"},
		{`abc&x=1`, "abc", 3, true, "stops at a query separator"},
		{strings.Repeat("a", maxValueLen), strings.Repeat("a", maxValueLen), maxValueLen, true, "longest value"},
		{strings.Repeat("a", maxValueLen+1), "", 0, false, "too long"},
	}
	for _, tt := range tests {
		dec, end, ok := decodeValue([]byte(tt.in), 0, nil)
		if ok != tt.wantOK || (ok && (string(dec) != tt.want || end != tt.rawEnd)) {
			t.Errorf("%s: decodeValue(%q) = %q, %d, %v", tt.comment, tt.in, dec, end, ok)
		}
	}
}

func TestLooksSecret(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{"Xk29vLq0ZpR7mN3wYt8bAe", true},
		{"MyS3cr3tP@ssw0rd!xyz", true},
		{"f3a9c1e07b2d4e6f8a0b1c2d3e4f5a6b", true}, // 32 hex: not a git object name
		{"a1B2a1B2a1B2a1B2", false},                // repeated pattern: 2 bits
		{"short1A", false},
		{"5ce3152c-4aa7-4e1f-9785-88b12ca7e6c9", false},
		{"da39a3ee5e6b4b0d3255bfef95601890afd80709", false},
		{"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", false},
		{"/usr/local/bin/python3.12", false},
		{"~/.ssh/id_ed25519", false},
		{"./node_modules/.bin/tsc", false},
		{"src/internal/app/server.go", false},
		{"prod/db/credentials", false},
		{"https://Xk29vLq0ZpR7mN3wYt8bAe.example.com", false},
		{"${{ secrets.GITHUB_TOKEN }}", false},
		{"$OPENAI_API_KEY_FROM_ENV", false},
		{"process.env.OPENAI_API_KEY", false},
		{"CorrectHorseBatteryStaple", false},
		{"this-is-my-secret-value", false},
		{"2025-11-21T10:43:00.123Z", false},
		{"-1.5e+10000000000000", false},
		{"192.168.100.200:8080", false},
		{"supercalifragilisticexpialidocious", false},
		{"thequickbrownfoxjumpsoverthelazydog", false}, // one class only
	}
	for _, tt := range tests {
		if got := looksSecret([]byte(tt.v)); got != tt.want {
			t.Errorf("looksSecret(%q) = %v (%.2f bits), want %v", tt.v, got, entropy([]byte(tt.v)), tt.want)
		}
	}
}

func TestEscapeLenAndDecode(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		char byte
	}{
		{`\n`, 2, '\n'},
		{`\"`, 2, '"'},
		{`\\`, 2, '\\'},
		{`\/`, 2, '/'},
		{`\u002b`, 6, '+'},
		{`\u002B`, 6, '+'},
		{`\u00e9`, 6, 0x80},
		{`\u00g9`, 1, '\\'},
		{`\u00`, 1, '\\'},
		{`\x`, 1, '\\'},
		{`\`, 1, '\\'},
		{"é", 1, 0x80},
		{"a", 1, 'a'},
	}
	for _, tt := range tests {
		c, n := decodeAt([]byte(tt.in), 0)
		if c != tt.char || n != tt.n {
			t.Errorf("decodeAt(%q) = %q, %d; want %q, %d", tt.in, c, n, tt.char, tt.n)
		}
	}
}

func TestEscapeBoundary(t *testing.T) {
	tests := []struct {
		in   string
		end  int
		want int
	}{
		{`abc`, 2, 2},
		{`ab\"c`, 3, 2},
		{`ab\"c`, 4, 4},
		{`ab\u002bc`, 5, 2},
		{`ab\u002bc`, 8, 8},
		{`ab\\`, 3, 2},
		{`ab\x`, 3, 3},
	}
	for _, tt := range tests {
		if got := escapeBoundary([]byte(tt.in), tt.end); got != tt.want {
			t.Errorf("escapeBoundary(%q, %d) = %d, want %d", tt.in, tt.end, got, tt.want)
		}
	}
}

func TestAddMergesOverlaps(t *testing.T) {
	buf := []byte(strings.Repeat(".", maxSpan+200))
	tests := []struct {
		name  string
		spans []span
		want  []span // finished redactions, in order
	}{
		{"disjoint", []span{{0, 10, ruleGeneric}, {20, 30, ruleJWT}}, []span{{0, 10, ruleGeneric}, {20, 30, ruleJWT}}},
		{"adjacent stay apart", []span{{0, 10, ruleGeneric}, {10, 20, ruleGeneric}}, []span{{0, 10, ruleGeneric}, {10, 20, ruleGeneric}}},
		{"same start, specific wins", []span{{5, 40, ruleGeneric}, {5, 40, ruleGitHub}}, []span{{5, 40, ruleGitHub}}},
		{"nested", []span{{0, 50, ruleGitHub}, {10, 20, ruleGeneric}}, []span{{0, 50, ruleGitHub}}},
		{"overlap extends", []span{{0, 30, ruleGeneric}, {20, 60, ruleJWT}}, []span{{0, 60, ruleJWT}}},
		{"too long splits", []span{{0, maxSpan - 10, ruleGeneric}, {100, maxSpan + 100, ruleJWT}}, []span{{0, maxSpan - 10, ruleJWT}, {maxSpan - 10, maxSpan + 100, ruleJWT}}},
	}
	r := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := scanner{r: r, buf: buf}
			for _, sp := range tt.spans {
				s.add(sp)
			}
			s.pos = len(buf)
			s.finish()
			s.flush()
			var want strings.Builder
			at := 0
			for _, sp := range tt.want {
				want.Write(buf[at:sp.start])
				want.WriteString(r.markers[sp.rule])
				at = sp.end
			}
			want.Write(buf[at:])
			if string(s.out) != want.String() {
				t.Errorf("output differs: got %d bytes with %d markers, want %d with %d",
					len(s.out), strings.Count(string(s.out), "[REDACTED"), want.Len(), len(tt.want))
			}
			var n int
			for _, c := range s.counts {
				n += c
			}
			if n != len(tt.want) {
				t.Errorf("counts = %v, want %d redactions", s.counts, len(tt.want))
			}
		})
	}
}
