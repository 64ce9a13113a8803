package jsontext

import "strconv"

// maxDepth is encoding/json's limit on nested objects and arrays.
const maxDepth = 10000

// A SyntaxError describes input that is not JSON. Its message and offset
// are those of encoding/json's *json.SyntaxError for the same input.
type SyntaxError struct {
	msg    string
	Offset int64 // the error occurred after reading Offset bytes
}

func (e *SyntaxError) Error() string { return e.msg }

// Parse checks that data holds exactly one JSON value, with optional
// whitespace around it, and returns that value.
func Parse(data []byte) (Value, error) {
	s := scanner{data: data}
	start := space(data, 0)
	end, err := s.value(start)
	if err != nil {
		return Value{}, err
	}
	if i := space(data, end); i < len(data) {
		return Value{}, s.errAt(i, "after top-level value")
	}
	return Value{raw: data[start:end]}, nil
}

// Valid reports whether data is one JSON value, as json.Valid does.
func Valid(data []byte) bool {
	_, err := Parse(data)
	return err == nil
}

// scanner validates JSON by recursive descent. Its methods take the index
// where a token starts and return the index just past it. Errors are worded
// as encoding/json's state machine words them; that machine reads the end
// of the input as one more space, which peek and errAt mimic.
type scanner struct {
	data  []byte
	depth int
}

// peek returns the byte at i, or a space past the end.
func (s *scanner) peek(i int) byte {
	if i < len(s.data) {
		return s.data[i]
	}
	return ' '
}

// errAt reports the unexpected byte at i (a space past the end).
func (s *scanner) errAt(i int, context string) error {
	off := min(i+1, len(s.data))
	return &SyntaxError{msg: "invalid character " + quoteChar(s.peek(i)) + " " + context, Offset: int64(off)}
}

func (s *scanner) eof() error {
	return &SyntaxError{msg: "unexpected end of JSON input", Offset: int64(len(s.data))}
}

// value scans the value at i, after optional whitespace.
func (s *scanner) value(i int) (int, error) {
	i = space(s.data, i)
	if i == len(s.data) {
		return i, s.eof()
	}
	switch c := s.data[i]; {
	case c == '{':
		return s.object(i)
	case c == '[':
		return s.array(i)
	case c == '"':
		return s.str(i)
	case c == '-' || isDigit(c):
		return s.number(i)
	case c == 't':
		return s.literal(i, "true")
	case c == 'f':
		return s.literal(i, "false")
	case c == 'n':
		return s.literal(i, "null")
	}
	return i, s.errAt(i, "looking for beginning of value")
}

// push enters the object or array opened at i.
func (s *scanner) push(i int) error {
	if s.depth++; s.depth > maxDepth {
		return s.errAt(i, "exceeded max depth")
	}
	return nil
}

func (s *scanner) object(i int) (int, error) {
	if err := s.push(i); err != nil {
		return i, err
	}
	i = space(s.data, i+1)
	if s.peek(i) == '}' {
		s.depth--
		return i + 1, nil
	}
	for {
		var err error
		if i == len(s.data) {
			return i, s.eof()
		}
		if s.data[i] != '"' {
			return i, s.errAt(i, "looking for beginning of object key string")
		}
		if i, err = s.str(i); err != nil {
			return i, err
		}
		if i = space(s.data, i); i == len(s.data) {
			return i, s.eof()
		}
		if s.data[i] != ':' {
			return i, s.errAt(i, "after object key")
		}
		if i, err = s.value(i + 1); err != nil {
			return i, err
		}
		if i = space(s.data, i); i == len(s.data) {
			return i, s.eof()
		}
		switch s.data[i] {
		case ',':
			i = space(s.data, i+1)
		case '}':
			s.depth--
			return i + 1, nil
		default:
			return i, s.errAt(i, "after object key:value pair")
		}
	}
}

func (s *scanner) array(i int) (int, error) {
	if err := s.push(i); err != nil {
		return i, err
	}
	i = space(s.data, i+1)
	if s.peek(i) == ']' {
		s.depth--
		return i + 1, nil
	}
	for {
		var err error
		if i, err = s.value(i); err != nil {
			return i, err
		}
		if i = space(s.data, i); i == len(s.data) {
			return i, s.eof()
		}
		switch s.data[i] {
		case ',':
			i++
		case ']':
			s.depth--
			return i + 1, nil
		default:
			return i, s.errAt(i, "after array element")
		}
	}
}

func (s *scanner) str(i int) (int, error) {
	d := s.data
	for i++; i < len(d); i++ {
		switch c := d[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			i++
			switch s.peek(i) {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for range 4 {
					if i++; !isHex(s.peek(i)) {
						return i, s.errAt(i, `in \u hexadecimal character escape`)
					}
				}
			default:
				return i, s.errAt(i, "in string escape code")
			}
		case c < 0x20:
			return i, s.errAt(i, "in string literal")
		}
	}
	return i, s.eof()
}

func (s *scanner) number(i int) (int, error) {
	if s.data[i] == '-' {
		if i++; !isDigit(s.peek(i)) {
			return i, s.errAt(i, "in numeric literal")
		}
	}
	if s.data[i] == '0' {
		i++
	} else {
		i = s.digits(i + 1)
	}
	if s.peek(i) == '.' {
		if i++; !isDigit(s.peek(i)) {
			return i, s.errAt(i, "after decimal point in numeric literal")
		}
		i = s.digits(i)
	}
	if c := s.peek(i); c == 'e' || c == 'E' {
		if i++; s.peek(i) == '+' || s.peek(i) == '-' {
			i++
		}
		if !isDigit(s.peek(i)) {
			return i, s.errAt(i, "in exponent of numeric literal")
		}
		i = s.digits(i)
	}
	return i, nil
}

func (s *scanner) digits(i int) int {
	for i < len(s.data) && isDigit(s.data[i]) {
		i++
	}
	return i
}

// literal scans true, false or null; its first byte is already known.
func (s *scanner) literal(i int, word string) (int, error) {
	for k := 1; k < len(word); k++ {
		if s.peek(i+k) != word[k] {
			return i + k, s.errAt(i+k, "in literal "+word+" (expecting "+quoteChar(word[k])+")")
		}
	}
	return i + len(word), nil
}

// quoteChar formats c for an error message, as encoding/json does.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

// space returns the index of the first byte at or after i that is not JSON
// whitespace.
func space(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
