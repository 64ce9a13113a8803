package redact

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
)

// transcript builds a Claude Code-like JSONL transcript of about size bytes
// with n fake secrets planted in it, and returns it with the planted
// secrets. It is deterministic. Its clean parts are full of what must not
// be flagged: UUIDs, hashes, paths, timestamps, token counts, code that
// mentions tokens and passwords, escapes and non-ASCII text.
func transcript(size, n int) ([]byte, []string) {
	rng := rand.New(rand.NewPCG(uint64(size), uint64(n)))
	var buf bytes.Buffer
	var planted []string
	// Spread the secrets evenly over the output.
	next := func(i int) int { return (i + 1) * size / (n + 1) }
	session := uuid(rng)
	big := size >= 1<<20 // one line longer than the lookahead window and a read chunk
	for line := 0; buf.Len() < size; line++ {
		var content string
		switch {
		case big && line == 7:
			content = code(rng, 600<<10)
		case line%4 == 0:
			content = prose(rng, 20+rng.IntN(200))
		case line%4 == 1:
			content = "Here is the change:\n```go\n" + code(rng, 300+rng.IntN(2000)) + "```\nRun `go test ./...` — it should pass ✓."
		case line%4 == 2:
			content = "$ git log --oneline -3\n" + hexString(rng, 7) + " Fix tokenizer edge case\n" + hexString(rng, 7) + " Bump deps\n"
		default:
			content = code(rng, 200+rng.IntN(8000))
		}
		if len(planted) < n && buf.Len() >= next(len(planted)) {
			f := fakeSecret(rng, len(planted))
			content += "\nexport " + f.text + "\n"
			planted = append(planted, f.secret)
		}
		fmt.Fprintf(&buf, `{"parentUuid":"%s","isSidechain":false,"userType":"external","cwd":"/home/dev/project","sessionId":"%s","version":"2.1.328","gitBranch":"main","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_%s","type":"tool_result","content":%s}]},"uuid":"%s","timestamp":"2025-11-21T10:%02d:%02d.%03dZ","requestId":"req_%s","usage":{"input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d},"sha":"%s"}`+"\n",
			uuid(rng), session, randFrom(rng, alphaNum, 24), jsonString(content, line%3 == 0), uuid(rng),
			line%60, rng.IntN(60), rng.IntN(1000), randFrom(rng, alphaNum, 24),
			rng.IntN(100000), rng.IntN(100000), rng.IntN(4000), hexString(rng, 40))
	}
	return buf.Bytes(), planted
}

func uuid(rng *rand.Rand) string {
	h := hexString(rng, 32)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func hexString(rng *rand.Rand, n int) string {
	const hx = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = hx[rng.IntN(16)]
	}
	return string(b)
}

var words = strings.Fields(`the a to of and in is that for it with as on this be are
	function token tokenizer password secret key session test build error value file line
	change update fix run check config user request response handler cache commit branch
	café naïve 日本語 ключ — “quoted” api keys should never be logged`)

func prose(rng *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(" \n"[min(1, rng.IntN(12)/11)])
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()
}

var codeLines = []string{
	`func (s *Server) handle(w http.ResponseWriter, r *http.Request) {`,
	`	token := r.Header.Get("Authorization")`,
	`	if token == "" {`,
	`		http.Error(w, "missing token", http.StatusUnauthorized)`,
	`		return`,
	`	}`,
	`	cfg, err := config.Load(filepath.Join(home, ".config", "app.json"))`,
	`	password := os.Getenv("DB_PASSWORD")`,
	`	for i, line := range strings.Split(string(data), "\n") {`,
	`		fmt.Printf("%d: %s\t%q\n", i, line, path)`,
	`max_tokens = 4096`,
	`tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")`,
	`secret_name: prod/db/credentials`,
	`api_key: ${API_KEY}`,
	`// TODO: rotate the signing key before the release; see docs/keys.md`,
	`	"sessionId": "5ce3152c-4aa7-4e1f-9785-88b12ca7e6c9",`,
	`const sumSHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"`,
	`	if got, want := h.Sum(nil), digest; !bytes.Equal(got, want) {`,
	`<a href="https://example.com/docs?page=2&lang=en">docs</a>`,
	`SELECT id, password_hash FROM users WHERE email = $1 AND active = true;`,
	`	return fmt.Errorf("load session %s: %w", id, err)`,
	`}`,
}

func code(rng *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(codeLines[rng.IntN(len(codeLines))])
		b.WriteByte('\n')
	}
	return b.String()
}

type runtimeStats struct{ totalAlloc uint64 }

func (s *runtimeStats) read() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	s.totalAlloc = m.TotalAlloc
}
