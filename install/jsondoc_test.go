package install

import (
	"strings"
	"testing"
)

func TestParseDocumentKeepsBytes(t *testing.T) {
	for name, src := range map[string]string{
		"pretty":       "{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ]\n}\n",
		"tabs":         "{\n\t\"a\": {\n\t\t\"b\": \"c\"\n\t}\n}",
		"crlf":         "{\r\n  \"a\": 1\r\n}\r\n",
		"compact":      `{"a":1,"b":{"c":[1,2,3]}}`,
		"odd spacing":  " {  \"a\" :1 ,\"b\":[ ] }  \n\n",
		"escapes":      `{"\u00e9t\u00e9": "caf\u00e9 \"quoted\" \\ back", "n": -1.5e+10}`,
		"duplicates":   `{"a": 1, "a": 2}`,
		"empty object": "{}",
		"nested empty": `{"a": {}, "b": [], "c": [{}, []]}`,
	} {
		t.Run(name, func(t *testing.T) {
			d, err := parseDocument([]byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(d.bytes()); got != src {
				t.Errorf("round trip changed the bytes:\n got %q\nwant %q", got, src)
			}
		})
	}
}

func TestParseDocumentRejects(t *testing.T) {
	for name, src := range map[string]string{
		"array":                `[1, 2]`,
		"string":               `"x"`,
		"truncated":            `{"a": `,
		"unterminated comment": "{\"a\": 1 /* x }",
		"comment in a key":     `{"a" / "b": 1}`,
		"comma alone":          `{,}`,
		"two commas":           `[1,,]`,
	} {
		if _, err := parseDocument([]byte(src)); err == nil {
			t.Errorf("%s: parsed %q without error", name, src)
		}
	}
}

func TestParseDocumentEmptyIsObject(t *testing.T) {
	for _, src := range []string{"", "  \n"} {
		d, err := parseDocument([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if d.root.kind != objectNode || len(d.root.members) != 0 {
			t.Errorf("%q: root is not an empty object", src)
		}
	}
}

func TestDetectStyle(t *testing.T) {
	for _, tc := range []struct {
		src, indent, newline string
	}{
		{"{\n  \"a\": 1\n}", "  ", "\n"},
		{"{\n    \"a\": 1\n}", "    ", "\n"},
		{"{\n\t\"a\": 1\n}", "\t", "\n"},
		{"{\r\n   \"a\": 1\r\n}", "   ", "\r\n"},
		{`{"a": 1}`, "  ", "\n"},
		{"{\n\n\"a\": 1\n}", "  ", "\n"},
		{"{\n  \n    \"a\": 1\n}", "    ", "\n"}, // a line of blanks is no indentation
	} {
		indent, newline := detectStyle(tc.src)
		if indent != tc.indent || newline != tc.newline {
			t.Errorf("detectStyle(%q) = %q, %q; want %q, %q", tc.src, indent, newline, tc.indent, tc.newline)
		}
	}
}

func TestSerializeRewritesOnlyTheChangedPath(t *testing.T) {
	src := "{\n    \"keep\": {\"inline\":   [1,2]},\n    \"change\": {\n        \"x\": 1\n    }\n}\n"
	d, err := parseDocument([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	d.root.get("change").set("y", newString("a && b"))
	want := "{\n    \"keep\": {\"inline\":   [1,2]},\n    \"change\": {\n        \"x\": 1,\n        \"y\": \"a && b\"\n    }\n}\n"
	if got := string(d.bytes()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestNodeEditing(t *testing.T) {
	d, err := parseDocument([]byte(`{"a": 1, "b": 2, "a": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.root.get("a").raw; got != "3" {
		t.Errorf("get with a duplicate key = %s, want the last value 3", got)
	}
	d.root.set("a", newLiteral("4"))
	if got := compact(d.root); got != `{"a":1,"b":2,"a":4}` {
		t.Errorf("set replaced the wrong duplicate: %s", got)
	}
	d.root.del("a")
	if got := compact(d.root); got != `{"b":2}` {
		t.Errorf("del left %s", got)
	}
	if !equal(mustParse(t, `{"x": [1, {"y": true}], "z": "s"}`), mustParse(t, "{\"z\":\"s\",\n\"x\":[1,{\"y\":true}]}")) {
		t.Error("equal is sensitive to key order or layout")
	}
	if equal(mustParse(t, `{"x": 1}`), mustParse(t, `{"x": 2}`)) {
		t.Error("equal ignores values")
	}
}

func mustParse(t testing.TB, src string) *node {
	t.Helper()
	d, err := parseDocument([]byte(src))
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	return d.root
}

func TestQuoteDoesNotEscapeHTML(t *testing.T) {
	if got := quote(`a && b <c>`); got != `"a && b <c>"` {
		t.Errorf("quote = %s", got)
	}
	if !strings.HasPrefix(quote("\x01"), `"\u0001`) {
		t.Errorf("control characters are not escaped: %s", quote("\x01"))
	}
}

// FuzzParseDocument: any input either is refused or parses into a tree that
// writes back the same bytes, and a rewrite of every container is still the
// same JSON value.
func FuzzParseDocument(f *testing.F) {
	for _, s := range []string{"{}", " {\"a\" : [1, {\"b\": \"\\u00e9\"}]}\n", "{\r\n\t\"x\": null\r\n}", "[]", "", `{"a":1,"a":{}}`,
		"// c\n{\"a\": [1, /* x */ 2,], // y\n}", "{\"a\": \"//\", \"b\": \"/*\"}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		d, err := parseDocument([]byte(src))
		if err != nil {
			return
		}
		if strings.TrimSpace(src) != "" && string(d.bytes()) != src {
			t.Fatalf("round trip changed %q to %q", src, d.bytes())
		}
		var dirtyAll func(*node)
		dirtyAll = func(n *node) {
			n.dirty = n.kind != scalarNode
			for _, m := range n.members {
				dirtyAll(m.val)
			}
			for _, e := range n.elems {
				dirtyAll(e)
			}
		}
		before := canonical(d.root)
		dirtyAll(d.root)
		re, err := parseDocument(d.bytes())
		if err != nil {
			t.Fatalf("rewritten document does not parse: %v\n%s", err, d.bytes())
		}
		if canonical(re.root) != before {
			t.Fatalf("rewrite changed the value: %s became %s", before, canonical(re.root))
		}
	})
}

// JSON with comments, as Copilot CLI writes its config.json and Gemini CLI
// reads its settings: parsed, written back byte for byte, and a rewrite
// keeps every comment.
func TestParseDocumentJSONC(t *testing.T) {
	for name, src := range map[string]string{
		"line comments":          "// User settings belong in settings.json.\n// This file is managed automatically.\n{\n  \"firstLaunchAt\": \"2026-11-24T00:50:23.894Z\"\n}\n",
		"block comment":          "{ /* the hooks */ \"a\": 1 }",
		"trailing commas":        "{\n  \"a\": [1, 2,],\n  \"b\": {\"c\": 3,},\n}\n",
		"comment after a member": "{\n  \"a\": 1, // one\n  \"b\": 2 // two\n}\n",
		"slashes in strings":     `{"url": "http://x//y", "glob": "/*.go", "q": "\"//\""}`,
		"crlf":                   "{\r\n  // c\r\n  \"a\": 1\r\n}\r\n",
		"multi-line block":       "{\n  /*\n   * about a\n   */\n  \"a\": 1\n}",
	} {
		t.Run(name, func(t *testing.T) {
			d, err := parseDocument([]byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(d.bytes()); got != src {
				t.Errorf("round trip changed the bytes:\n got %q\nwant %q", got, src)
			}
		})
	}

	for _, tc := range []struct {
		name, src, want string
	}{
		{
			"copilot's config, a key added",
			"// User settings belong in settings.json.\n// This file is managed automatically.\n{\n  \"firstLaunchAt\": \"x\"\n}\n",
			"// User settings belong in settings.json.\n// This file is managed automatically.\n{\n  \"firstLaunchAt\": \"x\",\n  \"k\": \"v\"\n}\n",
		},
		{
			"comments between members kept in place",
			"{\n  // about a\n  \"a\": 1,\n  /* about b */\n  \"b\": 2,\n  // the end\n}\n",
			"{\n  // about a\n  \"a\": 1,\n  /* about b */\n  \"b\": 2,\n  \"k\": \"v\"\n  // the end\n}\n",
		},
		{
			"a comment after a comma moves before the next member",
			"{\n  \"a\": 1, // one\n  \"b\": 2\n}",
			"{\n  \"a\": 1,\n  // one\n  \"b\": 2,\n  \"k\": \"v\"\n}",
		},
		{
			"comments around the colon",
			"{\"a\" /* x */ : /* y */ 1}",
			"{\n  /* x */\n  /* y */\n  \"a\": 1,\n  \"k\": \"v\"\n}",
		},
		{
			"untouched values keep their comments",
			"{\n  \"keep\": [1, /* two */ 2,],\n  \"x\": 0\n}",
			"{\n  \"keep\": [1, /* two */ 2,],\n  \"x\": 0,\n  \"k\": \"v\"\n}",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := parseDocument([]byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			d.root.set("k", newString("v"))
			if got := string(d.bytes()); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}

	// Comments in a rewritten array.
	d, err := parseDocument([]byte("{\"a\": [\n  // first\n  1,\n  2 // last\n]}"))
	if err != nil {
		t.Fatal(err)
	}
	a := d.root.get("a")
	a.elems = append(a.elems, newLiteral("3"))
	a.dirty = true
	want := "{\n  \"a\": [\n    // first\n    1,\n    2,\n    3\n    // last\n  ]\n}"
	if got := string(d.bytes()); got != want {
		t.Errorf("array: got\n%s\nwant\n%s", got, want)
	}
}
