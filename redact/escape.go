package redact

// JSON string escapes are decoded lexically, left to right, wherever they
// appear: in valid JSON a backslash occurs only inside strings, so this is
// exact there, and in plain text it only changes what the rules see, never
// the bytes that are kept. A backslash that does not start a valid escape
// stands for itself.

// escapeLen returns the length of the escape sequence starting with the
// backslash at b[i]: 2 for \" \\ \/ \b \f \n \r \t, 6 for \uXXXX, and 1
// for a backslash that starts no valid escape.
func escapeLen(b []byte, i int) int {
	if i+1 >= len(b) {
		return 1
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if _, ok := hex4(b[i+2:]); ok {
			return 6
		}
	}
	return 1
}

// hex4 decodes four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// decodeAt decodes the character at b[i] (which must be at an escape
// boundary) and returns it with its raw length. Characters outside ASCII
// (from \u escapes, or raw UTF-8 bytes) come back as 0x80, which no rule
// accepts.
func decodeAt(b []byte, i int) (byte, int) {
	c := b[i]
	if c != '\\' {
		if c >= 0x80 {
			return 0x80, 1
		}
		return c, 1
	}
	n := escapeLen(b, i)
	switch n {
	case 2:
		switch b[i+1] {
		case 'b':
			return '\b', 2
		case 'f':
			return '\f', 2
		case 'n':
			return '\n', 2
		case 'r':
			return '\r', 2
		case 't':
			return '\t', 2
		default:
			return b[i+1], 2
		}
	case 6:
		if r, _ := hex4(b[i+2:]); r < 0x80 {
			return byte(r), 6
		}
		return 0x80, 6
	}
	return '\\', 1
}

// escapeBoundary returns the largest escape boundary of w that is at most
// end, where w[0] is at a boundary. A redaction ending there never splits an
// escape sequence, so it cannot turn a JSON string invalid.
func escapeBoundary(w []byte, end int) int {
	p := 0
	for p < end {
		n := 1
		if w[p] == '\\' {
			n = escapeLen(w, p)
		}
		if p+n > end {
			break
		}
		p += n
	}
	return p
}
