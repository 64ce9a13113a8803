package redact

import (
	"fmt"
	"io"
	"slices"
)

// Counts maps a rule name (such as "github-token") to how many secrets it
// redacted. It records what was redacted, never the secret itself. Calls
// that redact nothing return a nil Counts.
type Counts map[string]int

// Add adds o's counts into c. c must be non-nil unless o is empty.
func (c Counts) Add(o Counts) {
	for k, v := range o {
		c[k] += v
	}
}

// Redactor finds and replaces secrets. It is immutable after New and safe
// for concurrent use.
type Redactor struct {
	// class is the scan loop's table, indexed by a byte and the one after
	// it, so that the loop carries no state from byte to byte and stops
	// only at escapes, operators and the first two bytes of token prefixes.
	class   [1 << 16]uint8
	byFirst [256][]tokenRule // token rules by the first byte of their prefix
	markers [numRules]string
}

// Classes of the scan loop.
const (
	clsToken  = 1 << iota // the bytes start some token prefix
	clsAnchor             // ':' or '=': may follow a secret's name
	clsEscape             // '\\': starts a JSON escape
)

// New returns a Redactor with the built-in rules.
func New() *Redactor {
	r := &Redactor{}
	for next := range 256 {
		r.class[':'<<8|next] |= clsAnchor
		r.class['='<<8|next] |= clsAnchor
		r.class['\\'<<8|next] |= clsEscape
	}
	for _, tr := range tokenRules() {
		r.class[int(tr.prefix[0])<<8|int(tr.prefix[1])] |= clsToken
		r.byFirst[tr.prefix[0]] = append(r.byFirst[tr.prefix[0]], tr)
	}
	for id, name := range ruleNames {
		r.markers[id] = "[REDACTED:" + name + "]"
	}
	return r
}

// String returns s with every secret replaced by a marker, and what was
// replaced. When nothing is, s itself is returned.
func (r *Redactor) String(s string) (string, Counts) {
	sc := scanner{r: r, buf: []byte(s)}
	sc.scan(true)
	if sc.counts == nil {
		return s, nil
	}
	sc.flush()
	return string(sc.out), sc.counts
}

// Bytes returns a copy of b with every secret replaced by a marker, and
// what was replaced. The result never aliases b.
func (r *Redactor) Bytes(b []byte) ([]byte, Counts) {
	sc := scanner{r: r, buf: b}
	sc.scan(true)
	if sc.counts == nil {
		return append([]byte(nil), b...), nil
	}
	sc.flush()
	return sc.out, sc.counts
}

// readChunk is the size of each read in Copy. A scan step covers at least
// this much input, so the cost of keeping the lookahead window is amortised.
const readChunk = 128 << 10

// Copy redacts src into dst as a stream and returns what was redacted and
// the number of bytes written. Its output is exactly Bytes' output on the
// whole of src. Memory stays bounded (a few hundred KiB, plus up to
// maxSpan while a long redaction is pending) whatever the line lengths.
func (r *Redactor) Copy(dst io.Writer, src io.Reader) (Counts, int64, error) {
	// Start small for prompts; a long input grows the buffer by doubling to
	// a few hundred KiB, where it stays.
	sc := scanner{r: r, buf: make([]byte, 0, 16<<10)}
	var written int64
	write := func() error {
		if len(sc.out) == 0 {
			return nil
		}
		n, err := dst.Write(sc.out)
		written += int64(n)
		sc.out = sc.out[:0]
		if err != nil {
			return fmt.Errorf("redact: write: %w", err)
		}
		return nil
	}
	for eof := false; !eof; {
		if len(sc.buf) == cap(sc.buf) {
			sc.buf = slices.Grow(sc.buf, cap(sc.buf))
		}
		n, err := src.Read(sc.buf[len(sc.buf):cap(sc.buf)])
		sc.buf = sc.buf[:len(sc.buf)+n]
		switch {
		case err == io.EOF:
			eof = true
		case err != nil:
			return sc.counts, written, fmt.Errorf("redact: read: %w", err)
		case len(sc.buf)-sc.pos < lookahead+readChunk:
			continue // too little ahead of the scan position to make progress
		}
		sc.scan(eof)
		sc.flush()
		if err := write(); err != nil {
			return sc.counts, written, err
		}
		sc.compact()
	}
	return sc.counts, written, nil
}
