package state

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzDecodeSession feeds arbitrary bytes to the session file decoder. What
// it accepts must survive a write and a re-read unchanged, unknown fields
// included.
func FuzzDecodeSession(f *testing.F) {
	f.Add([]byte(`{"version":1,"id":"x","phase":"idle","turns":3,"future":{"a":[1,2]},"owner":{"os":"linux","pid":1,"start":2}}`))
	f.Add([]byte(`{"version":2,"id":"x","ID":"y","Turns":1,"extra":null}`))
	f.Add([]byte(`{"version":1,"id":"x","started_at":"2026-01-01T00:00:00.123456789+02:00","checkpoints":[{"id":"c","linked":["a"]}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := decodeSession(data, "x")
		if err != nil {
			return
		}
		// The known fields are what plain encoding/json makes of the input
		// (the decoder's fast path must not differ).
		var ref sessionFields
		if err := json.Unmarshal(data, &ref); err != nil {
			t.Fatalf("decodeSession accepted what json.Unmarshal refuses (%v): %q", err, data)
		}
		known := sessionFields(*s)
		known.extra = nil
		if !reflect.DeepEqual(known, ref) {
			t.Fatalf("decoded %+v, json.Unmarshal says %+v", known, ref)
		}
		out, err := encodeSession(s)
		if err != nil {
			t.Fatalf("re-encode %q: %v", data, err)
		}
		again, err := decodeSession(out, "x")
		if err != nil {
			t.Fatalf("re-read of %q (from %q): %v", out, data, err)
		}
		out2, err := encodeSession(again)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
		// Unknown fields come back as they were, up to insignificant
		// whitespace.
		if len(s.extra) != len(again.extra) {
			t.Fatalf("unknown fields changed: %s -> %s", data, out)
		}
		for k, v := range s.extra {
			var a, b bytes.Buffer
			if json.Compact(&a, v) != nil || json.Compact(&b, again.extra[k]) != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatalf("unknown field %q changed: %s -> %s", k, v, again.extra[k])
			}
		}
	})
}

// FuzzParseTurns feeds arbitrary bytes to the turn log parser: it must
// consume whole lines only, and reading in two steps at the offset it
// returns must give the same records as reading at once.
func FuzzParseTurns(f *testing.F) {
	f.Add([]byte("{\"t\":\"turn-start\",\"turn\":1,\"at\":\"2026-01-01T00:00:00Z\",\"transcript_size\":0}\n{\"t\":\"turn-end\",\"tu"), 10)
	f.Add([]byte("garbage\n\n{}\n{\"t\":\"x\"}\n"), 3)
	f.Fuzz(func(t *testing.T, data []byte, split int) {
		recs, n := parseTurns(data)
		if n < 0 || n > int64(len(data)) || (n > 0 && data[n-1] != '\n') {
			t.Fatalf("consumed %d of %d bytes, not at a line end", n, len(data))
		}
		if bytes.IndexByte(data[n:], '\n') >= 0 {
			t.Fatalf("left a complete line unconsumed at %d", n)
		}
		for _, r := range recs {
			if r.T == "" {
				t.Fatalf("record without kind: %+v", r)
			}
		}
		if split < 0 || split > len(data) {
			return
		}
		first, n1 := parseTurns(data[:split])
		rest, n2 := parseTurns(data[n1:])
		if n1+n2 != n || len(first)+len(rest) != len(recs) {
			t.Fatalf("two-step read differs: %d+%d bytes, %d+%d records; at once %d bytes, %d records",
				n1, n2, len(first), len(rest), n, len(recs))
		}
	})
}
