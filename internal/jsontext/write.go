package jsontext

import (
	"time"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string, byte for byte as an
// encoding/json Encoder with SetEscapeHTML(false) writes it: \" \\ \b \f
// \n \r \t, \u00XX for the other control characters, \ufffd for each byte
// of invalid UTF-8, and \u2028 and \u2029 escaped (they break JavaScript).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += n
			continue
		}
		i += n
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendTime appends t as time.Time.MarshalJSON writes it (RFC 3339 with
// nanoseconds), or returns its error for a time RFC 3339 cannot express
// (a year outside [0,9999], a zone offset of a day or more).
func AppendTime(dst []byte, t time.Time) ([]byte, error) {
	b, err := t.MarshalJSON()
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// AppendCompact appends src without insignificant whitespace, as
// json.Compact does: strings and numbers are copied as they are. If src is
// not one JSON value it appends nothing and returns the *SyntaxError.
func AppendCompact(dst, src []byte) ([]byte, error) {
	v, err := Parse(src)
	if err != nil {
		return dst, err
	}
	b := v.raw
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case isSpace(c):
			i++
		case c == '"':
			end := stringEnd(b, i)
			dst = append(dst, b[i:end]...)
			i = end
		default:
			j := i + 1
			for j < len(b) && !isSpace(b[j]) && b[j] != '"' {
				j++
			}
			dst = append(dst, b[i:j]...)
			i = j
		}
	}
	return dst, nil
}
