package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// The agents' config files belong to the user. To change them without
// clobbering anything, they are parsed into an ordered tree that remembers
// the source text of every value: a value we did not touch is written back
// byte for byte, and only the objects and arrays on the path to our entries
// are re-indented, in the file's own style.
//
// Some agents write and read JSON with comments (JSONC: Copilot CLI's
// config.json starts with // lines; Gemini CLI strips comments from its
// settings): // and /* */ comments and trailing commas are accepted. The
// comments inside a container we rewrite are kept, each before the member
// or element it preceded (or before the closing bracket); trailing commas
// there are dropped.

type kind uint8

const (
	scalarNode kind = iota
	objectNode
	arrayNode
)

type node struct {
	kind    kind
	raw     string // source text of the value; authoritative while !dirty
	dirty   bool   // changed since parsing: serialize from members/elems
	members []member
	elems   []*node
	lead    string // comments before this element of an array
	tail    string // comments before the container's closing bracket
}

type member struct {
	key    string // decoded
	rawKey string // as written, quotes included
	val    *node
	lead   string // comments before the member (and around its colon)
}

// document is a parsed JSON file whose top level is an object.
type document struct {
	root    *node
	lead    string // whitespace before the root value
	trail   string // whitespace after it (usually one newline)
	indent  string // one level of indentation
	newline string // "\n" or "\r\n"
}

var errNotObject = errors.New("top level is not a JSON object")

// parseDocument parses a config file. Empty (or all-whitespace) input is an
// empty object, so a truncated file can be repaired rather than refused.
func parseDocument(src []byte) (*document, error) {
	s := string(src)
	d := &document{indent: "  ", newline: "\n"}
	if strings.TrimSpace(s) == "" {
		d.root = newObject()
		d.trail = "\n"
		return d, nil
	}
	plain := plainJSON(s)
	if !json.Valid([]byte(plain)) {
		return nil, errors.New("not valid JSON (nor JSON with comments)")
	}
	p := parser{s: plain, src: s}
	p.skipSpace()
	d.lead = s[:p.i]
	root := p.value()
	d.trail = s[p.i:]
	if root.kind != objectNode {
		return nil, errNotObject
	}
	d.root = root
	d.indent, d.newline = detectStyle(s)
	return d, nil
}

// detectStyle takes the indentation unit from the first indented line (in a
// pretty-printed object that line is one level deep) and the line ending
// from the first line break.
func detectStyle(s string) (indent, newline string) {
	indent, newline = "  ", "\n"
	i := strings.IndexByte(s, '\n')
	if i < 0 {
		return indent, newline
	}
	if i > 0 && s[i-1] == '\r' {
		newline = "\r\n"
	}
	for ; i >= 0 && i < len(s); i = nextLine(s, i) {
		j := i + 1
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j > i+1 && j < len(s) && s[j] != '\n' && s[j] != '\r' {
			return s[i+1 : j], newline
		}
	}
	return indent, newline
}

func nextLine(s string, i int) int {
	k := strings.IndexByte(s[i+1:], '\n')
	if k < 0 {
		return -1
	}
	return i + 1 + k
}

// plainJSON blanks out what JSONC adds to JSON: comments and trailing
// commas become spaces (line breaks stay), so every value keeps its offset
// and the source text can be sliced where the plain text was parsed.
func plainJSON(s string) string {
	b := []byte(s)
	unterminated := false
	outsideStrings(b, func(i int) int {
		switch {
		case b[i] != '/' || i+1 >= len(b):
		case b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case b[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				unterminated = true
				return len(b)
			}
			for j := i; j < i+2+end+2; j++ {
				if b[j] != '\n' && b[j] != '\r' {
					b[j] = ' '
				}
			}
			i += 2 + end + 1
		}
		return i
	})
	if unterminated {
		return s // left for json.Valid to refuse
	}
	// Trailing commas: a comma after a value whose next token closes its
	// container.
	outsideStrings(b, func(i int) int {
		if b[i] != ',' {
			return i
		}
		j := i + 1
		for j < len(b) && strings.IndexByte(" \t\r\n", b[j]) >= 0 {
			j++
		}
		k := i - 1
		for k >= 0 && strings.IndexByte(" \t\r\n", b[k]) >= 0 {
			k--
		}
		if j < len(b) && (b[j] == '}' || b[j] == ']') && k >= 0 && strings.IndexByte("{[,", b[k]) < 0 {
			b[i] = ' '
		}
		return i
	})
	return string(b)
}

// outsideStrings calls at for each byte of b outside JSON string literals;
// at returns the index of the last byte it consumed.
func outsideStrings(b []byte, at func(i int) int) {
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		default:
			i = at(i)
		}
	}
}

// comments are the comments in src, a stretch between two tokens, one
// per line.
func comments(src string) string {
	var out []string
	for i := 0; i < len(src); i++ {
		if src[i] != '/' || i+1 >= len(src) {
			continue
		}
		var end int
		switch src[i+1] {
		case '/':
			end = strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
		case '*':
			end = strings.Index(src[i+2:], "*/") + 4
		default:
			continue
		}
		out = append(out, strings.TrimRight(src[i:i+end], " \t\r"))
		i += end - 1
	}
	return strings.Join(out, "\n")
}

// parser walks text that json.Valid has accepted (s, with JSONC's
// additions blanked out), so it only has to find where values begin and
// end, never to diagnose; what it keeps is sliced from the source, src.
type parser struct {
	s, src string
	i      int
}

// since collects the comments in the source from start to where the parser
// is.
func (p *parser) since(start int) string { return comments(p.src[start:p.i]) }

// joinComments joins the non-empty ones.
func joinComments(cs ...string) string {
	var kept []string
	for _, c := range cs {
		if c != "" {
			kept = append(kept, c)
		}
	}
	return strings.Join(kept, "\n")
}

func (p *parser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// items reads the members of an object or the elements of an array, past
// its opening bracket, up to and including end: item reads each, given the
// comments before it. It returns the comments after the last.
func (p *parser) items(end byte, item func(lead string)) (tail string) {
	p.i++
	var pending string // comments since the last item
	for {
		from := p.i
		p.skipSpace()
		pending = joinComments(pending, p.since(from))
		switch p.s[p.i] {
		case end:
			p.i++
			return pending
		case ',':
			p.i++
			continue
		}
		item(pending)
		pending = ""
	}
}

func (p *parser) value() *node {
	start := p.i
	n := &node{}
	switch p.s[p.i] {
	case '{':
		n.kind = objectNode
		n.tail = p.items('}', func(lead string) {
			rawKey := p.str()
			from := p.i
			p.skipSpace()
			p.i++ // ':'
			p.skipSpace()
			lead = joinComments(lead, p.since(from))
			var key string
			// The key was validated by json.Valid; decoding cannot fail.
			_ = json.Unmarshal([]byte(rawKey), &key)
			n.members = append(n.members, member{key: key, rawKey: rawKey, val: p.value(), lead: lead})
		})
	case '[':
		n.kind = arrayNode
		n.tail = p.items(']', func(lead string) {
			e := p.value()
			e.lead = lead
			n.elems = append(n.elems, e)
		})
	case '"':
		p.str()
	default:
		for p.i < len(p.s) && !strings.ContainsRune(" \t\r\n,]}", rune(p.s[p.i])) {
			p.i++
		}
	}
	n.raw = p.src[start:p.i]
	return n
}

// str consumes a string literal and returns it with its quotes.
func (p *parser) str() string {
	start := p.i
	p.i++
	for p.s[p.i] != '"' {
		if p.s[p.i] == '\\' {
			p.i++
		}
		p.i++
	}
	p.i++
	return p.src[start:p.i]
}

// bytes serializes the document: untouched values keep their source text.
func (d *document) bytes() []byte {
	markDirty(d.root)
	var b strings.Builder
	b.WriteString(d.lead)
	d.write(&b, d.root, 0)
	b.WriteString(d.trail)
	return []byte(b.String())
}

// markDirty propagates changes upwards, so a container is rewritten when
// anything inside it changed.
func markDirty(n *node) bool {
	for _, m := range n.members {
		if markDirty(m.val) {
			n.dirty = true
		}
	}
	for _, e := range n.elems {
		if markDirty(e) {
			n.dirty = true
		}
	}
	return n.dirty
}

func (d *document) write(b *strings.Builder, n *node, depth int) {
	if !n.dirty {
		b.WriteString(n.raw)
		return
	}
	pad := func(level int) {
		b.WriteString(d.newline)
		for range level {
			b.WriteString(d.indent)
		}
	}
	// note writes comments on lines of their own at level.
	note := func(cs string, level int) {
		if cs == "" {
			return
		}
		for c := range strings.SplitSeq(cs, "\n") {
			pad(level)
			b.WriteString(c)
		}
	}
	switch n.kind {
	case objectNode:
		if len(n.members) == 0 && n.tail == "" {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, m := range n.members {
			if i > 0 {
				b.WriteByte(',')
			}
			note(m.lead, depth+1)
			pad(depth + 1)
			b.WriteString(m.rawKey)
			b.WriteString(": ")
			d.write(b, m.val, depth+1)
		}
		note(n.tail, depth+1)
		pad(depth)
		b.WriteByte('}')
	case arrayNode:
		if len(n.elems) == 0 && n.tail == "" {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			note(e.lead, depth+1)
			pad(depth + 1)
			d.write(b, e, depth+1)
		}
		note(n.tail, depth+1)
		pad(depth)
		b.WriteByte(']')
	default:
		b.WriteString(n.raw)
	}
}

// Builders for the values we add. They are born dirty: they have no source.

func newObject(ms ...member) *node {
	return &node{kind: objectNode, dirty: true, members: ms}
}

func newArray(es ...*node) *node {
	return &node{kind: arrayNode, dirty: true, elems: es}
}

func newString(s string) *node {
	return &node{kind: scalarNode, dirty: true, raw: quote(s)}
}

// newLiteral makes a number, true, false or null from its JSON text.
func newLiteral(text string) *node {
	return &node{kind: scalarNode, dirty: true, raw: text}
}

func field(key string, v *node) member {
	return member{key: key, rawKey: quote(key), val: v}
}

// quote writes a JSON string without HTML escaping, so a shell command's
// "&&" stays readable in the file.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	// Encoding a string cannot fail (invalid UTF-8 becomes U+FFFD).
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// get returns the value of key, or nil. With duplicate keys the last one
// wins, as it does for the agents' own JSON parsers.
func (n *node) get(key string) *node {
	if n == nil || n.kind != objectNode {
		return nil
	}
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return n.members[i].val
		}
	}
	return nil
}

// set replaces the value of key in place, or appends the key at the end.
func (n *node) set(key string, v *node) {
	n.dirty = true
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			n.members[i].val = v
			return
		}
	}
	n.members = append(n.members, field(key, v))
}

// del removes every member named key.
func (n *node) del(key string) {
	n.filter(func(m member) bool { return m.key != key })
}

// delValue removes the member holding v, leaving any duplicate of its key.
func (n *node) delValue(v *node) {
	n.filter(func(m member) bool { return m.val != v })
}

func (n *node) filter(keep func(member) bool) {
	kept := n.members[:0]
	for _, m := range n.members {
		if keep(m) {
			kept = append(kept, m)
		}
	}
	if len(kept) != len(n.members) {
		n.dirty = true
	}
	n.members = kept
}

// str decodes a string scalar; ok is false for anything else.
func (n *node) str() (string, bool) {
	if n == nil || n.kind != scalarNode || !strings.HasPrefix(n.raw, `"`) {
		return "", false
	}
	var s string
	if err := json.Unmarshal([]byte(n.raw), &s); err != nil {
		return "", false
	}
	return s, true
}

// objectMembers are an object's members; none for anything else.
func (n *node) objectMembers() []member {
	if n == nil || n.kind != objectNode {
		return nil
	}
	return n.members
}

func (n *node) isTrue() bool { return n != nil && n.kind == scalarNode && n.raw == "true" }

// equal compares two values as JSON (key order and formatting aside).
func equal(a, b *node) bool {
	if a == nil || b == nil {
		return a == b
	}
	return canonical(a) == canonical(b)
}

// canonical is a node's value re-encoded with sorted keys; duplicate keys
// collapse to the last, as in get. Numbers keep their text, so that no two
// of them compare equal by rounding.
func canonical(n *node) string {
	dec := json.NewDecoder(strings.NewReader(compact(n)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return ""
	}
	out, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(out)
}

// compact serializes a node on one line, ignoring its source formatting.
func compact(n *node) string {
	var b strings.Builder
	var walk func(*node)
	walk = func(n *node) {
		switch n.kind {
		case objectNode:
			b.WriteByte('{')
			for i, m := range n.members {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(m.rawKey)
				b.WriteByte(':')
				walk(m.val)
			}
			b.WriteByte('}')
		case arrayNode:
			b.WriteByte('[')
			for i, e := range n.elems {
				if i > 0 {
					b.WriteByte(',')
				}
				walk(e)
			}
			b.WriteByte(']')
		default:
			b.WriteString(n.raw)
		}
	}
	walk(n)
	return b.String()
}
