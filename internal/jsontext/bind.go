package jsontext

import "bytes"

// The two rules of encoding/json's struct decoding that are easy to get
// subtly wrong, for callers that map objects onto their own types.

// Match returns the index in names of the field name an object key
// selects, as json.Unmarshal matches keys to a struct's fields: the first
// name equal to key, else the first equal under Unicode case folding
// (bytes.EqualFold: "ID" selects "id", and "ſtart", with a long s,
// selects "start"); -1 if none. key is the decoded key (see
// AppendUnquote).
func Match(key []byte, names []string) int {
	for i, n := range names {
		if string(key) == n {
			return i
		}
	}
	for i, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return i
		}
	}
	return -1
}

// DecodeSlice decodes v into *s as json.Unmarshal decodes an array into a
// slice, elem decoding each element. Null sets nil, [] an empty slice, and
// any other kind is a *TypeError naming typ (the slice's Go type). The
// elements are decoded over those of the slice's backing array, growing it
// as append does: when a key is repeated, the later array merges into what
// the earlier one left (an element that is null keeps it), as it does with
// encoding/json. After an error, *s is not to be used.
func DecodeSlice[T any](s *[]T, v Value, typ string, elem func(*T, Value) error) error {
	switch v.Kind() {
	case Null:
		*s = nil
		return nil
	case Array:
	default:
		return v.typeError(typ)
	}
	a := (*s)[:0]
	for e := range v.Elements() {
		if len(a) < cap(a) {
			a = a[:len(a)+1]
		} else {
			var zero T
			a = append(a, zero)
		}
		if err := elem(&a[len(a)-1], e); err != nil {
			return err
		}
	}
	if len(a) == 0 {
		a = []T{}
	}
	*s = a
	return nil
}
