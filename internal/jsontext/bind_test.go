package jsontext

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
)

// matchTarget has fields named like the payload and session keys whose
// matching matters.
type matchTarget struct {
	ID        int `json:"id"`
	Start     int `json:"start"`
	Kind      int `json:"kind"`
	SessionID int `json:"session_id"`
	Camel     int `json:"sessionId"`
	ThreadID  int `json:"thread-id"`
}

var matchNames = []string{"id", "start", "kind", "session_id", "sessionId", "thread-id"}

// checkMatch compares Match with the field json.Unmarshal sets for key.
func checkMatch(t *testing.T, key string) {
	t.Helper()
	data := `{` + string(AppendString(nil, key)) + `:1}`
	var target matchTarget
	if err := json.Unmarshal([]byte(data), &target); err != nil {
		t.Fatal(err)
	}
	want := -1
	for i, f := range reflect.ValueOf(target).Fields() {
		if f.Int() == 1 {
			want = i.Index[0]
		}
	}
	v, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	for k := range v.Members() {
		decoded, err := k.AppendUnquote(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := Match(decoded, matchNames); got != want {
			t.Fatalf("Match(%q) = %d, encoding/json chose field %d", decoded, got, want)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, k := range []string{"id", "ID", "Id", "ıd", "İd", "ſtart", "\u212aind", "KIND", "session_id", "SESSIONID",
		"sessionid", "Session_Id", "thread-id", "THREAD-ID", "thread_id", "", "x", "i\u0307d"} {
		checkMatch(t, k)
	}
}

// checkDecodeSlice decodes data into a slice of length n and capacity c
// holding old, with DecodeSlice and with json.Unmarshal: same verdict, same
// slice (contents, length, capacity, nil-ness).
func checkDecodeSlice(t *testing.T, data []byte, old []string, n, c int) {
	t.Helper()
	v, err := Parse(data)
	if err != nil {
		return
	}
	mk := func() []string {
		if c == 0 && n == 0 && len(old) == 0 {
			return nil
		}
		s := make([]string, max(c, n))
		copy(s, old)
		return s[:n]
	}
	got, want := mk(), mk()
	err = DecodeSlice(&got, v, "[]string", func(s *string, v Value) error {
		if v.Kind() == Null {
			return nil
		}
		u, err := v.Unquote()
		*s = u
		return err
	})
	jerr := json.Unmarshal(data, &want)
	if (err == nil) != (jerr == nil) {
		t.Fatalf("DecodeSlice(%s) into %q: %v; encoding/json: %v", data, old, err, jerr)
	}
	if err != nil {
		var te *TypeError
		var jte *json.UnmarshalTypeError
		if !errors.As(err, &te) || !errors.As(jerr, &jte) || te.Value != jte.Value || te.Type != jte.Type.String() {
			t.Fatalf("DecodeSlice(%s): %v; encoding/json: %v", data, err, jerr)
		}
		return
	}
	if !reflect.DeepEqual(got, want) || cap(got) != cap(want) || !slices.Equal(got[:cap(got)], want[:cap(want)]) {
		t.Fatalf("DecodeSlice(%s) into %q (len %d, cap %d) = %q (cap %d); encoding/json: %q (cap %d)",
			data, old, n, c, got, cap(got), want, cap(want))
	}
}

func TestDecodeSlice(t *testing.T) {
	old := []string{"a", "b", "c", "d"}
	for _, data := range []string{`null`, `[]`, `["x"]`, `[null]`, `[null,null,null]`, `["x",null,"y",null,"z"]`, `"x"`, `{}`, `1`, `[1]`, `["x",{}]`} {
		for _, lc := range [][2]int{{0, 0}, {0, 4}, {1, 4}, {2, 2}, {4, 4}} {
			checkDecodeSlice(t, []byte(data), old, lc[0], lc[1])
		}
	}
}

// FuzzMatch: Match picks the field json.Unmarshal picks.
func FuzzMatch(f *testing.F) {
	for _, k := range []string{"id", "ıd", "ſtart", "\u212aind", "SESSIONID", "THREAD-ID"} {
		f.Add(k)
	}
	f.Fuzz(checkMatch)
}

// FuzzDecodeSlice: DecodeSlice leaves a slice as json.Unmarshal leaves it,
// whatever the slice held before.
func FuzzDecodeSlice(f *testing.F) {
	f.Add([]byte(`[null,"x",null]`), uint8(2), uint8(3))
	f.Add([]byte(`[]`), uint8(1), uint8(1))
	f.Add([]byte(`[1]`), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, n, c uint8) {
		n, c = n%6, c%6
		checkDecodeSlice(t, data, []string{"a", "b", "c", "d", "e", "f"}, int(min(n, c)), int(c))
	})
}
