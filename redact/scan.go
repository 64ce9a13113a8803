package redact

// Every decision about a candidate at position i depends only on the input
// in [i-lookback, i+lookahead) (less at the start and end of the input) and
// on the scan state carried from the left, never on where a read ended.
// That is what makes Copy's output identical to Bytes'.
const (
	// lookahead is how far past a candidate, in raw bytes, any rule may
	// look: room for the largest private key block, escapes included.
	lookahead = 64 << 10
	// lookback is how far before a candidate any rule may look: the name
	// of an assignment and the escape before it.
	lookback = 256
	// maxSpan caps one merged redaction. Overlapping matches that would grow
	// it further start a new redaction, so pending output stays bounded.
	maxSpan = 1 << 20
)

// span is a redaction of buf[start:end] by rule.
type span struct{ start, end, rule int }

// scanner is the state of one redaction pass. Positions are indices into
// buf; Copy shifts them when it drops consumed input.
type scanner struct {
	r   *Redactor
	buf []byte
	// pos is the next byte to scan. It is always at an escape boundary.
	pos int
	// emitted is where output stops: buf[:emitted] has been copied to out
	// or replaced by a marker.
	emitted int
	// cur is the redaction being built; it may still grow while later
	// matches overlap it. Matches arrive in order of their start: a token
	// starts at its candidate position and a value after its operator, and
	// nothing that a value skips (blanks, quotes, an auth scheme) can hold a
	// token.
	cur     span
	pending bool
	// keyEnd is the furthest end of a private key match, so that a header
	// inside an already redacted block is not scanned again (which would
	// make a run of truncated headers quadratic).
	keyEnd int
	out    []byte
	counts Counts
	dec    []byte // scratch for decoded values
}

// scan advances pos through buf: to the end at EOF, otherwise as far as
// leaves lookahead bytes after it.
func (s *scanner) scan(eof bool) {
	b := s.buf
	end := len(b)
	if !eof {
		end -= lookahead
	}
	// The last byte of the input needs no look: a token takes at least two
	// bytes, and an operator or a backslash at the very end has nothing
	// after it to redact.
	stop := min(end, len(b)-1)
	class := &s.r.class
	i := s.pos
	for i < stop {
		cl := class[int(b[i])<<8|int(b[i+1])]
		if cl == 0 {
			i++
			continue
		}
		switch {
		case cl&clsEscape != 0:
			i += escapeLen(b, i)
			continue
		case cl&clsAnchor != 0:
			s.assignment(i)
		case b[i] == '-' || !wordBefore(b, max(0, i-lookback), i):
			s.token(i)
		}
		i++
	}
	s.pos = max(i, end)
	if s.pending && s.cur.end <= s.pos {
		s.finish()
	}
}

// wordBefore reports whether the character before b[i] is a letter or a
// digit, so that no token starts at i. Escapes are read backwards: \n, \t
// and the like are breaks (as is a doubly escaped \\n), and \uXXXX is the
// character it encodes.
func wordBefore(b []byte, lo, i int) bool {
	if i <= lo || !alnum[b[i-1]] {
		return false
	}
	c := b[i-1]
	if i-2 >= lo && b[i-2] == '\\' && (c == 'n' || c == 'r' || c == 't' || c == 'b' || c == 'f') {
		return false
	}
	if i-6 >= lo && b[i-6] == '\\' && b[i-5] == 'u' {
		if r, ok := hex4(b[i-4:]); ok {
			return r < 0x80 && alnum[r]
		}
	}
	return true
}

// token tries the token rules whose prefix starts at b[i].
func (s *scanner) token(i int) {
	b := s.buf
	w := b[i:min(len(b), i+lookahead)]
	for _, tr := range s.r.byFirst[b[i]] {
		if len(w) < len(tr.prefix) || string(w[:len(tr.prefix)]) != tr.prefix {
			continue
		}
		if tr.rule == rulePrivateKey && i < s.keyEnd {
			return
		}
		if n := tr.match(w); n > 0 {
			s.add(span{i, i + n, tr.rule})
			return
		}
	}
}

// assignment judges the value after the operator at b[i] when the name
// before it names a secret, and the credentials of a URL whose "://" starts
// there.
func (s *scanner) assignment(i int) {
	b := s.buf
	w := b[:min(len(b), i+lookahead)]
	if b[i] == ':' && i+1 < len(w) && (w[i+1] == '/' || w[i+1] == '\\') {
		if start, end, ok := urlCredentials(w, i); ok {
			s.add(span{start, end, ruleURLCredentials})
			return
		}
	}
	key := keyBefore(b, max(0, i-lookback), i)
	if key == nil {
		return
	}
	kind := classifyKey(key)
	if kind == keyNone {
		return
	}
	j := valueStart(w, i)
	var (
		dec []byte
		end int
		ok  bool
	)
	if kind == keyPassword && j > 0 && isQuote(w[j-1]) {
		// A quoted password may hold spaces: a passphrase.
		dec, end, ok = decodeQuoted(w, j, w[j-1], s.dec)
	}
	if !ok {
		dec, end, ok = decodeValue(w, j, s.dec)
	}
	s.dec = dec
	if !ok {
		return
	}
	if rule := judge(kind, dec); rule >= 0 {
		s.add(span{j, end, rule})
	}
}

// add records a match, merging it into the pending redaction when they
// overlap; the merged redaction is named by the higher-priority rule.
func (s *scanner) add(sp span) {
	if sp.rule == rulePrivateKey {
		s.keyEnd = max(s.keyEnd, sp.end)
	}
	if s.pending && sp.start < s.cur.end {
		s.cur.rule = min(s.cur.rule, sp.rule)
		if sp.end <= s.cur.end {
			return
		}
		if sp.end-s.cur.start <= maxSpan {
			s.cur.end = sp.end
			return
		}
		sp.start = s.cur.end
	}
	if s.pending {
		s.finish()
	}
	s.cur, s.pending = sp, true
}

// finish writes the input before the pending redaction and its marker.
func (s *scanner) finish() {
	if s.out == nil {
		s.out = make([]byte, 0, len(s.buf)+64)
	}
	s.out = append(s.out, s.buf[s.emitted:s.cur.start]...)
	s.out = append(s.out, s.r.markers[s.cur.rule]...)
	if s.counts == nil {
		s.counts = Counts{}
	}
	s.counts[ruleNames[s.cur.rule]]++
	s.emitted = s.cur.end
	s.pending = false
}

// flush copies the scanned input that no redaction can touch any more.
func (s *scanner) flush() {
	upto := s.pos
	if s.pending {
		upto = s.cur.start
	}
	if upto > s.emitted {
		s.out = append(s.out, s.buf[s.emitted:upto]...)
		s.emitted = upto
	}
}

// compact drops input that is both written and out of lookback range.
func (s *scanner) compact() {
	k := min(s.emitted, s.pos-lookback)
	if k <= 0 {
		return
	}
	n := copy(s.buf, s.buf[k:])
	s.buf = s.buf[:n]
	s.pos -= k
	s.emitted -= k
	s.cur.start -= k
	s.cur.end -= k
	s.keyEnd -= k
}
