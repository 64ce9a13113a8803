package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// syntaxSeeds are inputs around every error encoding/json's scanner can
// report, and valid inputs close to them.
var syntaxSeeds = []string{
	``, ` `, `{}`, ` {} `, `[]`, `[ ]`, `{ }`, `null`, `true`, `false`, `0`, `-0`, `1.5e+10`, `-12.5E-3`,
	`"a"`, `"\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00"`, `{"a":[1,{"b":null}],"a":2}`, "\t\n\r {\"k\" : \"v\" }\n",
	`{`, `[`, `"`, `"\`, `"\u12`, `"\x"`, "\"\x01\"", `-`, `1.`, `1e`, `1e+`, `01`, `-a`, `.5`, `+1`,
	`t`, `tr`, `tru`, `trUe`, `f`, `fals`, `n`, `nul`, `nulL`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`, `{1:2}`,
	`[1,]`, `[,1]`, `[1 2]`, `{"a":1 "b":2}`, `{} {}`, `1 x`, `[1]]`, "\xef\xbb\xbf{}", "\v{}", `'a'`,
	"\"\xff\xfe\"", "\"\xed\xa0\x80\"", `{"a":-}`, `{"a":1`, `[1`, `{"a"`, `{"a":`, `[{"a":[`, `]`, `}`,
}

func TestParseMatchesEncodingJSON(t *testing.T) {
	for _, in := range syntaxSeeds {
		checkParse(t, []byte(in))
	}
}

func TestDepthLimit(t *testing.T) {
	for _, n := range []int{maxDepth, maxDepth + 1} {
		for _, open := range []string{"[", `{"a":`} {
			closer := map[string]string{"[": "]", `{"a":`: "}"}[open]
			checkParse(t, []byte(strings.Repeat(open, n)+"1"+strings.Repeat(closer, n)))
		}
	}
	if _, err := Parse([]byte(strings.Repeat("[", maxDepth+1))); err == nil || !strings.Contains(err.Error(), "exceeded max depth") {
		t.Fatalf("nesting past the limit: %v", err)
	}
}

// checkParse compares Parse with json.Unmarshal, which validates the whole
// input first: same verdict, same message and offset.
func checkParse(t *testing.T, data []byte) {
	t.Helper()
	v, err := Parse(data)
	var raw json.RawMessage
	jerr := json.Unmarshal(data, &raw)
	if (err == nil) != (jerr == nil) || (err == nil) != json.Valid(data) || (err == nil) != Valid(data) {
		t.Fatalf("Parse(%q) = %v; encoding/json says %v", data, err, jerr)
	}
	if err != nil {
		var se *SyntaxError
		var jse *json.SyntaxError
		if !errors.As(err, &se) || !errors.As(jerr, &jse) || se.Error() != jse.Error() || se.Offset != jse.Offset {
			t.Fatalf("Parse(%q) = %v (offset %d); encoding/json says %v (offset %d)", data, err, offsetOf(err), jerr, offsetOf(jerr))
		}
		return
	}
	if !bytes.Equal(v.Raw(), raw) {
		t.Fatalf("Parse(%q) raw = %q, want %q", data, v.Raw(), raw)
	}
	// Walking the value through Members and Elements must see all of it.
	var want bytes.Buffer
	if err := json.Compact(&want, data); err != nil {
		t.Fatal(err)
	}
	if got := walk(nil, v); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("walk(%q) = %q, want %q", data, got, want.Bytes())
	}
}

func offsetOf(err error) int64 {
	var se *SyntaxError
	var jse *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return se.Offset
	case errors.As(err, &jse):
		return jse.Offset
	}
	return -1
}

// walk rebuilds v compactly from its members and elements.
func walk(dst []byte, v Value) []byte {
	switch v.Kind() {
	case Object:
		dst = append(dst, '{')
		for k, m := range v.Members() {
			if dst[len(dst)-1] != '{' {
				dst = append(dst, ',')
			}
			dst = append(append(dst, k.Raw()...), ':')
			dst = walk(dst, m)
		}
		return append(dst, '}')
	case Array:
		dst = append(dst, '[')
		for e := range v.Elements() {
			if dst[len(dst)-1] != '[' {
				dst = append(dst, ',')
			}
			dst = walk(dst, e)
		}
		return append(dst, ']')
	}
	return append(dst, v.Raw()...)
}

func TestUnquote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`""`, ""},
		{`"plain"`, "plain"},
		{`"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"},
		{`"\u00e9\u20AC"`, "é€"},
		{`"\ud83d\ude00"`, "😀"},
		{`"\ud83d"`, "\ufffd"},              // lone high surrogate
		{`"\ude00\ud83d"`, "\ufffd\ufffd"},  // low then high
		{`"\ud83dx"`, "\ufffdx"},            // high surrogate, then no escape
		{`"\ud83d\u0041"`, "\ufffdA"},       // high surrogate, then no low one
		{`"\ud83d\ud83d\ude00"`, "\ufffd😀"}, // the second high surrogate pairs
		{"\"a\xffb\"", "a\ufffdb"},          // invalid UTF-8
		{"\"\xed\xa0\x80\"", "\ufffd\ufffd\ufffd"},
		{"\"\xf0\x9f\x98\"", "\ufffd\ufffd\ufffd"}, // truncated 4-byte sequence
		{"\"\xef\xbf\xbd\"", "\ufffd"},
	} {
		v, err := Parse([]byte(tc.in))
		if err != nil {
			t.Fatalf("Parse(%s): %v", tc.in, err)
		}
		got, err := v.Unquote()
		if err != nil || got != tc.want {
			t.Errorf("Unquote(%s) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		checkDecode(t, []byte(tc.in))
	}
}

func TestNumbers(t *testing.T) {
	for _, in := range []string{
		`0`, `-0`, `1`, `-1`, `1.0`, `1e2`, `1E2`, `-1.5`, `9223372036854775807`, `9223372036854775808`,
		`-9223372036854775808`, `-9223372036854775809`, `18446744073709551615`, `18446744073709551616`,
		`2147483648`, `"1"`, `true`, `null`, `[]`, `{}`,
	} {
		checkDecode(t, []byte(in))
	}
}

func TestTimes(t *testing.T) {
	for _, in := range []string{
		`"2026-03-01T10:00:00Z"`, `"2026-03-01T10:00:00.123456789+02:00"`, `"2026-03-01T10:00:00"`,
		`"2026-03-01 10:00:00Z"`, `"2026-03-01T10:00:00\u005a"`, `"2026-03-01T24:00:00Z"`, `"0000-01-01T00:00:00Z"`,
		`"2026-03-01T10:00:00+24:00"`, `"2026-03-01T10:00:00.Z"`, `""`, `null`, `1`, `{}`,
	} {
		checkDecode(t, []byte(in))
	}
}

// checkDecode compares every accessor of the value in data with
// json.Unmarshal into the matching Go type.
func checkDecode(t *testing.T, data []byte) {
	t.Helper()
	v, err := Parse(data)
	if err != nil {
		return
	}
	var (
		s  string
		b  bool
		i  int
		i6 int64
		u6 uint64
		tm time.Time
	)
	check := func(typ string, got any, err error, want any, jerr error) {
		t.Helper()
		if v.Kind() == Null && typ != "time.Time" {
			// encoding/json leaves the target as it was; the callers
			// decide what null means.
			if err == nil {
				t.Fatalf("%s of null: no error", typ)
			}
			return
		}
		if (err == nil) != (jerr == nil) {
			t.Fatalf("%s of %q: %v; encoding/json: %v", typ, data, err, jerr)
		}
		if err == nil && got != want {
			t.Fatalf("%s of %q = %#v; encoding/json: %#v", typ, data, got, want)
		}
		var te *TypeError
		var jte *json.UnmarshalTypeError
		if errors.As(jerr, &jte) && (!errors.As(err, &te) || te.Value != jte.Value || te.Type != jte.Type.String()) {
			t.Fatalf("%s of %q: %v; encoding/json: %v", typ, data, err, jerr)
		}
	}
	gs, err := v.Unquote()
	check("string", gs, err, s, json.Unmarshal(data, &s))
	gb, err := v.Bool()
	check("bool", gb, err, b, json.Unmarshal(data, &b))
	gi, err := v.Int()
	check("int", gi, err, i, json.Unmarshal(data, &i))
	gi6, err := v.Int64()
	check("int64", gi6, err, i6, json.Unmarshal(data, &i6))
	gu6, err := v.Uint64()
	check("uint64", gu6, err, u6, json.Unmarshal(data, &u6))
	gt, err := v.Time()
	jerr := json.Unmarshal(data, &tm)
	if (err == nil) != (jerr == nil) || err == nil && !(gt.Equal(tm) && gt.Location().String() == tm.Location().String() && gt.String() == tm.String()) {
		t.Fatalf("Time of %q = %v, %v; encoding/json: %v, %v", data, gt, err, tm, jerr)
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{
		"", "plain", `"quoted" \ back`, "<a href='x'>&amp;</a>", "\x00\x01\x1f\x7f", "\b\f\n\r\t",
		"é€😀", "\u2028\u2029", "bad \xff\xfe utf8", "\xed\xa0\x80", "\xf0\x9f\x98",
	} {
		checkAppendString(t, s)
	}
}

func checkAppendString(t *testing.T, s string) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if got := AppendString([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
		t.Fatalf("AppendString(%q) = %s, want x%s", s, got, want)
	}
}

func TestAppendTime(t *testing.T) {
	for _, tm := range []time.Time{
		{},
		time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 1, 10, 0, 0, 120, time.FixedZone("", 5*3600+30*60)),
		time.Date(2026, 3, 1, 10, 0, 0, 0, time.FixedZone("", -(23*3600+59*60))),
		time.Date(2026, 3, 1, 10, 0, 0, 0, time.FixedZone("", 24*3600)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		checkAppendTime(t, tm)
	}
}

func checkAppendTime(t *testing.T, tm time.Time) {
	t.Helper()
	got, err := AppendTime([]byte("x"), tm)
	want, jerr := json.Marshal(tm)
	switch {
	case (err == nil) != (jerr == nil):
		t.Fatalf("AppendTime(%v) = %s, %v; encoding/json: %s, %v", tm, got, err, want, jerr)
	case err != nil:
		// encoding/json wraps time's error in its own.
		if !strings.HasSuffix(jerr.Error(), ": "+err.Error()) || string(got) != "x" {
			t.Fatalf("AppendTime(%v) = %q, %v; encoding/json: %v", tm, got, err, jerr)
		}
	case string(got) != "x"+string(want):
		t.Fatalf("AppendTime(%v) = %s, want x%s", tm, got, want)
	}
}

func TestAppendCompact(t *testing.T) {
	for _, in := range append(syntaxSeeds, " { \"a\" : [ 1 , 2.50 , \"x y\\\" z\" ] , \"b\" : { } } ", "\"\xff\"") {
		checkCompact(t, []byte(in))
	}
}

func checkCompact(t *testing.T, data []byte) {
	t.Helper()
	got, err := AppendCompact([]byte("x"), data)
	var want bytes.Buffer
	want.WriteString("x")
	jerr := json.Compact(&want, data)
	if (err == nil) != (jerr == nil) || err != nil && err.Error() != jerr.Error() {
		t.Fatalf("AppendCompact(%q): %v; json.Compact: %v", data, err, jerr)
	}
	if err == nil && !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("AppendCompact(%q) = %q, want %q", data, got, want.Bytes())
	}
	if err != nil && string(got) != "x" {
		t.Fatalf("AppendCompact(%q) failed but appended: %q", data, got)
	}
}

func TestZeroValue(t *testing.T) {
	var v Value
	if v.Kind() != Invalid {
		t.Fatalf("zero Value kind %v", v.Kind())
	}
	for range v.Members() {
		t.Fatal("zero Value has members")
	}
	for range v.Elements() {
		t.Fatal("zero Value has elements")
	}
	if _, err := v.Unquote(); err == nil {
		t.Fatal("zero Value unquotes")
	}
	if _, err := v.Time(); err == nil {
		t.Fatal("zero Value is a time")
	}
}

// FuzzParse: Parse accepts what encoding/json accepts, fails with the same
// error, and its values decode as encoding/json decodes them.
func FuzzParse(f *testing.F) {
	for _, s := range syntaxSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{`"\ud83d\ude00"`, `"\udead"`, "\"\xff\"", `18446744073709551615`, `-0`, `1e2`, `"2026-03-01T10:00:00.5+02:00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParse(t, data)
		checkDecode(t, data)
		checkCompact(t, data)
		// The same bytes as the inside of a string.
		checkDecode(t, append(append([]byte{'"'}, data...), '"'))
	})
}

// FuzzAppendString: AppendString writes what encoding/json writes.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c", "\x00\x1f\x7f", "<&>", "\u2028\u2029", "\xff", "\xed\xa0\x80", "é😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAppendString(t, s)
		// And it reads back as encoding/json reads it.
		v, err := Parse(AppendString(nil, s))
		if err != nil {
			t.Fatalf("AppendString(%q) does not parse: %v", s, err)
		}
		checkDecode(t, v.Raw())
	})
}

// FuzzAppendTime: AppendTime writes what time.Time.MarshalJSON writes, and
// Time reads it back.
func FuzzAppendTime(f *testing.F) {
	f.Add(int64(0), int64(0), 0)
	f.Add(int64(1772359200), int64(123456789), 19800)
	f.Add(int64(253402300800), int64(0), 0) // year 10000
	f.Add(int64(-62135596801), int64(0), 0) // year 0, one second before 0001
	f.Add(int64(1772359200), int64(1), -86400)
	f.Add(int64(math.MaxInt64), int64(math.MinInt64), math.MaxInt32)
	f.Fuzz(func(t *testing.T, sec, nsec int64, offset int) {
		tm := time.Unix(sec, nsec).In(time.FixedZone("", offset%(100*3600)))
		checkAppendTime(t, tm)
		if b, err := AppendTime(nil, tm); err == nil {
			checkDecode(t, b)
		}
	})
}
