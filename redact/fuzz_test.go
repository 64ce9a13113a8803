package redact

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzRedact plants a fake secret of some kind between fuzzed text (mode
// 0: plain, 1: in a JSON string, 2: in a JSON string with \/ and \u002b
// escapes) or redacts the fuzzed text alone (mode 3), and checks that
// redaction never panics, removes the planted secret, keeps valid JSON
// valid, is a fixed point, and that Copy agrees with Bytes.
func FuzzRedact(f *testing.F) {
	f.Add("", "", uint8(0), uint64(1), uint8(0))
	f.Add(`{"a":"`, `"}`, uint8(7), uint64(2), uint8(1))
	f.Add("password=", "\n", uint8(18), uint64(3), uint8(2))
	f.Add(`{"type":"user","message":{"content":"token: x\n"}}`, "", uint8(0), uint64(4), uint8(3))
	f.Add(`{"c":"-----BEGIN RSA PRIVATE KEY-----\nAAAA\"}`, "", uint8(0), uint64(5), uint8(3))
	f.Add(`x\`, `\u00`, uint8(13), uint64(6), uint8(0))
	f.Add(`{"k":"token=",-1.5e+10}`, "", uint8(0), uint64(7), uint8(3))
	r := New()
	f.Fuzz(func(t *testing.T, prefix, suffix string, kind uint8, seed uint64, mode uint8) {
		fk := fakeSecret(rand.New(rand.NewPCG(seed, uint64(kind))), int(kind))
		text := prefix + " " + fk.text + " " + suffix
		var in string
		switch mode % 4 {
		case 0:
			in = text
		case 1:
			in = `{"c":` + jsonString(text, false) + "}\n"
		case 2:
			in = `{"c":` + jsonString(text, true) + "}\n"
		default:
			in = prefix + suffix
		}

		out, counts := r.Bytes([]byte(in))
		for name := range counts {
			if !slices.Contains(ruleNames[:], name) {
				t.Fatalf("unknown rule %q in counts", name)
			}
		}
		if json.Valid([]byte(in)) && !json.Valid(out) {
			t.Fatalf("valid JSON became invalid:\nin:  %q\nout: %q", in, out)
		}
		if again, c := r.Bytes(out); c != nil || !bytes.Equal(again, out) {
			t.Fatalf("redacting the output again found %v:\nout:   %q\nagain: %q", c, out, again)
		}
		var streamed bytes.Buffer
		sc, n, err := r.Copy(&streamed, iotest.OneByteReader(strings.NewReader(in)))
		if err != nil || n != int64(len(out)) || !bytes.Equal(streamed.Bytes(), out) || len(sc) != len(counts) {
			t.Fatalf("Copy = %q, %v, %d, %v; Bytes = %q, %v", streamed.Bytes(), sc, n, err, out, counts)
		}

		if mode%4 == 3 || strings.Contains(prefix, fk.secret) || strings.Contains(suffix, fk.secret) {
			return
		}
		survived := bytes.Contains(out, []byte(fk.secret))
		if mode%4 != 0 {
			var doc struct{ C string }
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatalf("unmarshal output: %v\n%q", err, out)
			}
			survived = strings.Contains(doc.C, fk.secret)
		}
		if survived {
			t.Fatalf("planted %s survived:\nin:  %q\nout: %q", fk.rule, in, out)
		}
	})
}
