package jsontext

import (
	"bytes"
	"iter"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the type of a JSON value.
type Kind byte

const (
	Invalid Kind = iota // the zero Value
	Null
	Bool
	Number
	String
	Object
	Array
)

// String names the kind as encoding/json's type errors do.
func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "bool"
	case Number:
		return "number"
	case String:
		return "string"
	case Object:
		return "object"
	case Array:
		return "array"
	}
	return "invalid"
}

// A Value is one valid JSON value, as Parse returned it or as an object or
// array of it holds it: a view of the value's bytes in the parsed input,
// without surrounding whitespace.
type Value struct{ raw []byte }

// Raw returns the bytes of the value, as they are in the input.
func (v Value) Raw() []byte { return v.raw }

// Kind returns the type of the value; the zero Value is Invalid.
func (v Value) Kind() Kind {
	if len(v.raw) == 0 {
		return Invalid
	}
	switch v.raw[0] {
	case 'n':
		return Null
	case 't', 'f':
		return Bool
	case '"':
		return String
	case '{':
		return Object
	case '[':
		return Array
	}
	return Number
}

// Members iterates over the members of an object in order, yielding each
// key (a String value) with its value. A repeated key is yielded each
// time. A value of another kind has no members.
func (v Value) Members() iter.Seq2[Value, Value] {
	return func(yield func(Value, Value) bool) {
		if v.Kind() != Object {
			return
		}
		b := v.raw
		for i := space(b, 1); i < len(b) && b[i] == '"'; {
			k := stringEnd(b, i)
			key := Value{b[i:k]}
			i = space(b, space(b, k)+1) // past the colon
			end := valueEnd(b, i)
			if !yield(key, Value{b[i:end]}) {
				return
			}
			if i = space(b, end); i < len(b) && b[i] == ',' {
				i = space(b, i+1)
			}
		}
	}
}

// Elements iterates over the elements of an array in order. A value of
// another kind has no elements.
func (v Value) Elements() iter.Seq[Value] {
	return func(yield func(Value) bool) {
		if v.Kind() != Array {
			return
		}
		b := v.raw
		for i := space(b, 1); i < len(b) && b[i] != ']'; {
			end := valueEnd(b, i)
			if !yield(Value{b[i:end]}) {
				return
			}
			if i = space(b, end); i < len(b) && b[i] == ',' {
				i = space(b, i+1)
			}
		}
	}
}

// valueEnd returns the index just past the valid value that starts at i.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	// A number or a literal runs to the next delimiter.
	for i < len(b) && !isSpace(b[i]) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
		i++
	}
	return i
}

// stringEnd returns the index just past the valid string that starts at i.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// A TypeError reports a JSON value that does not fit the Go type asked
// for, in encoding/json's words.
type TypeError struct {
	Value string // what the JSON holds: "string", "number 1.5", "object"...
	Type  string // the Go type asked for, e.g. "int"
}

func (e *TypeError) Error() string {
	return "json: cannot unmarshal " + e.Value + " into Go value of type " + e.Type
}

func (v Value) typeError(typ string) error {
	return &TypeError{Value: v.Kind().String(), Type: typ}
}

// Unquote decodes a string as json.Unmarshal does: escapes resolved,
// invalid UTF-8 and unpaired surrogates replaced by U+FFFD.
func (v Value) Unquote() (string, error) {
	if v.Kind() != String {
		return "", v.typeError("string")
	}
	s := v.raw[1 : len(v.raw)-1]
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s), nil
	}
	b, err := v.AppendUnquote(make([]byte, 0, len(s)))
	return string(b), err
}

// AppendUnquote appends the decoded string to dst, like Unquote.
func (v Value) AppendUnquote(dst []byte) ([]byte, error) {
	if v.Kind() != String {
		return dst, v.typeError("string")
	}
	s := v.raw[1 : len(v.raw)-1]
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\\':
			switch e := s[i+1]; e {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := escapedRune(s[i:])
				i += len(`\uXXXX`)
				if utf16.IsSurrogate(r) {
					// Only a high surrogate followed by a low one is a
					// character; anything else is replaced on its own.
					if pair := utf16.DecodeRune(r, escapedRune(s[i:])); pair != utf8.RuneError {
						r = pair
						i += len(`\uXXXX`)
					} else {
						r = utf8.RuneError
					}
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default: // " \ /
				dst = append(dst, e)
			}
			i += 2
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf && s[j] != '\\' {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
		default:
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = utf8.AppendRune(dst, r)
			} else {
				dst = append(dst, s[i:i+n]...)
			}
			i += n
		}
	}
	return dst, nil
}

// escapedRune decodes the \uXXXX escape at the start of s, or returns -1.
func escapedRune(s []byte) rune {
	if len(s) < len(`\uXXXX`) || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case isDigit(c):
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// Bool decodes true or false.
func (v Value) Bool() (bool, error) {
	if v.Kind() != Bool {
		return false, v.typeError("bool")
	}
	return v.raw[0] == 't', nil
}

// Int decodes a number that is an integer within int's range: no fraction,
// no exponent, as json.Unmarshal requires.
func (v Value) Int() (int, error) {
	n, err := v.integer(strconv.IntSize, "int")
	return int(n), err
}

// Int64 decodes a number that is an integer within int64's range.
func (v Value) Int64() (int64, error) { return v.integer(64, "int64") }

func (v Value) integer(bits int, typ string) (int64, error) {
	if v.Kind() != Number {
		return 0, v.typeError(typ)
	}
	n, err := strconv.ParseInt(string(v.raw), 10, bits)
	if err != nil {
		return 0, &TypeError{Value: "number " + string(v.raw), Type: typ}
	}
	return n, nil
}

// Uint64 decodes a number that is a non-negative integer within uint64's
// range ("-0" is refused, as json.Unmarshal refuses it).
func (v Value) Uint64() (uint64, error) {
	if v.Kind() != Number {
		return 0, v.typeError("uint64")
	}
	n, err := strconv.ParseUint(string(v.raw), 10, 64)
	if err != nil {
		return 0, &TypeError{Value: "number " + string(v.raw), Type: "uint64"}
	}
	return n, nil
}

// Time decodes an RFC 3339 string with (*time.Time).UnmarshalJSON, as
// json.Unmarshal does: the bytes between the quotes are parsed as they are
// (escapes are not resolved), and null is no time (the zero Time).
func (v Value) Time() (time.Time, error) {
	var t time.Time
	if err := t.UnmarshalJSON(v.raw); err != nil {
		return time.Time{}, err
	}
	return t, nil
}
