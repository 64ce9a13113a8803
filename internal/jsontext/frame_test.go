package jsontext

import (
	"testing"
)

func TestFrame(t *testing.T) {
	for _, tc := range []struct {
		in   string
		end  int // -1: not done
		desc string
	}{
		{`{"a":1}`, 7, "an object"},
		{"  \n{\"a\":[1,{\"b\":2}]} and the stream stays open", 20, "nested, after leading space"},
		{`{"s":"}]\"{["}rest`, 14, "brackets and quotes inside strings"},
		{`{"s":"\\"}x`, 10, "an escaped backslash before the closing quote"},
		{`[1,2]`, 5, "an array"},
		{`"just a string" x`, 15, "a string"},
		{`null `, 4, "a literal, ended by space"},
		{`12,`, 2, "a number, ended by a delimiter"},
		{`12`, -1, "a scalar at the end of the stream: the stream's end decides"},
		{`{"a":`, -1, "an incomplete object"},
		{`{"a":"}`, -1, "a brace inside an unfinished string"},
		{``, -1, "nothing"},
		{"   ", -1, "only space"},
		{`{]`, 2, "mismatched: framed, Parse refuses it"},
	} {
		// Fed whole, and a byte at a time: the same answer.
		var whole Frame
		end, done := whole.Next([]byte(tc.in))
		if !done {
			end = -1
		}
		if end != tc.end {
			t.Errorf("%s: Next(%q) = %d, want %d", tc.desc, tc.in, end, tc.end)
		}
		var bytewise Frame
		end = -1
		for i := range len(tc.in) {
			if e, ok := bytewise.Next([]byte{tc.in[i]}); ok {
				end = e
				break
			}
		}
		if end != tc.end {
			t.Errorf("%s: byte by byte %q ends at %d, want %d", tc.desc, tc.in, end, tc.end)
		}
	}
}

// FuzzFrame: however the stream is cut into pieces, Frame ends at the same
// byte; and a valid object, array or string is framed exactly, whatever
// follows it.
func FuzzFrame(f *testing.F) {
	for _, s := range syntaxSeeds {
		f.Add([]byte(s), uint8(3), []byte(" tail"))
	}
	f.Add([]byte(`{"a":"\"}"}`), uint8(1), []byte(`{"b":2}`))
	f.Fuzz(func(t *testing.T, value []byte, cut uint8, tail []byte) {
		data := append(append([]byte(nil), value...), tail...)
		var whole Frame
		want, wantDone := whole.Next(data)
		var pieces Frame
		got, gotDone, pos := 0, false, 0
		step := int(cut)%7 + 1
		for pos < len(data) && !gotDone {
			next := min(pos+step, len(data))
			got, gotDone = pieces.Next(data[pos:next])
			pos = next
		}
		if gotDone != wantDone || got != want {
			t.Fatalf("in pieces of %d: %d, %v; whole: %d, %v", step, got, gotDone, want, wantDone)
		}
		v, err := Parse(value)
		if err != nil {
			return
		}
		switch v.Kind() {
		case Object, Array, String:
		default:
			return
		}
		end := len(value)
		for end > 0 && isSpace(value[end-1]) {
			end--
		}
		if !wantDone || want != end {
			t.Fatalf("valid %q followed by %q framed at %d, %v; want %d", value, tail, want, wantDone, end)
		}
	})
}
