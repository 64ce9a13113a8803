package redact

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// The benchmarks report throughput on a 2 MiB Claude Code-like JSONL
// transcript (see transcript), clean and with 30 planted secrets.

func BenchmarkBytes(b *testing.B) {
	r := New()
	for _, bc := range []struct {
		name    string
		secrets int
	}{{"clean", 0}, {"secrets", 30}} {
		sample, _ := transcript(2<<20, bc.secrets)
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(sample)))
			for b.Loop() {
				r.Bytes(sample)
			}
		})
	}
}

func BenchmarkCopy(b *testing.B) {
	r := New()
	sample, _ := transcript(2<<20, 30)
	b.SetBytes(int64(len(sample)))
	for b.Loop() {
		if _, _, err := r.Copy(io.Discard, bytes.NewReader(sample)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStringPrompt(b *testing.B) {
	r := New()
	prompt := "Fix the failing test in redact/redact_test.go: the tokenizer splits " +
		"api_key=${API_KEY} wrongly. Run `go test ./...` afterwards and commit with a short message. " +
		strings.Repeat("Keep the change small. ", 10)
	b.SetBytes(int64(len(prompt)))
	for b.Loop() {
		r.String(prompt)
	}
}
