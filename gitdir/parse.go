package gitdir

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// parseGitFile parses a .git file: "gitdir: <path>", with trailing CR/LF
// removed and nothing else trimmed (git keeps other whitespace).
func parseGitFile(data []byte) (string, error) {
	const prefix = "gitdir: "
	if !bytes.HasPrefix(data, []byte(prefix)) {
		return "", errors.New(`invalid .git file: no "gitdir: " line`)
	}
	p := trimEOL(data[len(prefix):])
	if len(p) == 0 {
		return "", errors.New("invalid .git file: empty gitdir")
	}
	if bytes.IndexByte(p, 0) >= 0 {
		return "", errors.New("invalid .git file: NUL in gitdir")
	}
	return string(p), nil
}

// parseCommonDir parses a git dir's commondir file: one path, trailing
// CR/LF removed.
func parseCommonDir(data []byte) (string, error) {
	p := trimEOL(data)
	if len(p) == 0 {
		return "", errors.New("empty commondir")
	}
	if bytes.IndexByte(p, 0) >= 0 {
		return "", errors.New("NUL in commondir")
	}
	return string(p), nil
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// coreConfig is what discovery needs from a repository's config.
type coreConfig struct {
	bare     bool
	worktree string
}

// parseCoreConfig reads core.bare and core.worktree from git config text.
// It follows git's syntax (sections, subsections, quoting, escapes, comments,
// line continuations); the last value of a key wins.
func parseCoreConfig(data []byte) (coreConfig, error) {
	var cfg coreConfig
	p := configParser{data: bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), line: 1}
	inCore := false
	for {
		c, ok := p.skipSpace()
		if !ok {
			return cfg, nil
		}
		switch {
		case c == '\n':
			p.pos++
			p.line++
		case c == '#' || c == ';':
			p.skipLine()
		case c == '[':
			section, err := p.section()
			if err != nil {
				return cfg, err
			}
			inCore = strings.EqualFold(section, "core")
		case isAlpha(c):
			key := p.name()
			val, hasVal, err := p.value()
			if err != nil {
				return cfg, err
			}
			if !inCore {
				continue
			}
			switch strings.ToLower(key) {
			case "bare":
				b, err := parseBool(val, hasVal)
				if err != nil {
					return cfg, fmt.Errorf("line %d: core.bare: %w", p.line, err)
				}
				cfg.bare = b
			case "worktree":
				if !hasVal {
					return cfg, fmt.Errorf("line %d: core.worktree has no value", p.line)
				}
				cfg.worktree = val
			}
		default:
			return cfg, fmt.Errorf("bad config line %d", p.line)
		}
	}
}

type configParser struct {
	data []byte
	pos  int
	line int
}

// skipSpace skips blanks (not newlines) and returns the next byte.
func (p *configParser) skipSpace() (byte, bool) {
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c != ' ' && c != '\t' && c != '\r' && c != '\v' && c != '\f' {
			return c, true
		}
		p.pos++
	}
	return 0, false
}

func (p *configParser) skipLine() {
	for p.pos < len(p.data) && p.data[p.pos] != '\n' {
		p.pos++
	}
}

// section parses "[name]", "[name "sub"]" or the old "[name.sub]". Only
// the plain form can equal "core": a subsection is returned after a NUL.
func (p *configParser) section() (string, error) {
	p.pos++ // '['
	start := p.pos
	for p.pos < len(p.data) && (isAlnum(p.data[p.pos]) || p.data[p.pos] == '-' || p.data[p.pos] == '.') {
		p.pos++
	}
	name := string(p.data[start:p.pos])
	if name == "" {
		return "", fmt.Errorf("bad config line %d: empty section name", p.line)
	}
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return name, nil
	}
	if c, ok := p.skipSpace(); !ok || c != '"' {
		return "", fmt.Errorf("bad config line %d: bad section header", p.line)
	}
	p.pos++
	var b strings.Builder
	for {
		if p.pos >= len(p.data) || p.data[p.pos] == '\n' {
			return "", fmt.Errorf("bad config line %d: unterminated subsection", p.line)
		}
		c := p.data[p.pos]
		p.pos++
		if c == '"' {
			break
		}
		if c == '\\' && p.pos < len(p.data) && p.data[p.pos] != '\n' {
			c = p.data[p.pos]
			p.pos++
		}
		b.WriteByte(c)
	}
	if p.pos >= len(p.data) || p.data[p.pos] != ']' {
		return "", fmt.Errorf("bad config line %d: bad section header", p.line)
	}
	p.pos++
	return name + "\x00" + b.String(), nil
}

func (p *configParser) name() string {
	start := p.pos
	for p.pos < len(p.data) && (isAlnum(p.data[p.pos]) || p.data[p.pos] == '-') {
		p.pos++
	}
	return string(p.data[start:p.pos])
}

// value parses what follows a key: nothing (a bare boolean), or "= value"
// up to the end of the line, handling quotes, escapes, comments and
// backslash-newline continuations. Unquoted inner blanks are kept as
// spaces and trailing ones dropped, as git does.
func (p *configParser) value() (string, bool, error) {
	c, ok := p.skipSpace()
	if !ok || c == '\n' || c == '#' || c == ';' {
		return "", false, nil
	}
	if c != '=' {
		return "", false, fmt.Errorf("bad config line %d: expected '='", p.line)
	}
	p.pos++
	p.skipSpace()
	var b strings.Builder
	quoted, spaces := false, 0
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '\n' {
			if quoted {
				return "", false, fmt.Errorf("bad config line %d: unterminated quote", p.line)
			}
			break
		}
		p.pos++
		if !quoted && (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
			if b.Len() > 0 {
				spaces++
			}
			continue
		}
		if !quoted && (c == '#' || c == ';') {
			p.skipLine()
			break
		}
		for ; spaces > 0; spaces-- {
			b.WriteByte(' ')
		}
		switch c {
		case '"':
			quoted = !quoted
		case '\\':
			if p.pos >= len(p.data) {
				return "", false, fmt.Errorf("bad config line %d: trailing backslash", p.line)
			}
			e := p.data[p.pos]
			p.pos++
			switch e {
			case '\n':
				p.line++
			case '\\', '"':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			default:
				return "", false, fmt.Errorf("bad config line %d: bad escape \\%c", p.line, e)
			}
		default:
			b.WriteByte(c)
		}
	}
	if quoted {
		return "", false, fmt.Errorf("bad config line %d: unterminated quote", p.line)
	}
	return b.String(), true, nil
}

// parseBool follows git's boolean spelling: a key without value is true,
// an empty value false, then true/yes/on, false/no/off, or an integer.
func parseBool(v string, hasVal bool) (bool, error) {
	if !hasVal {
		return true, nil
	}
	switch strings.ToLower(v) {
	case "true", "yes", "on":
		return true, nil
	case "false", "no", "off", "":
		return false, nil
	}
	n, err := strconv.ParseInt(v, 0, 64)
	if err != nil {
		return false, fmt.Errorf("bad boolean %q", v)
	}
	return n != 0, nil
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }

// parseRefFile parses HEAD or a loose ref: either "ref: <name>" (a symbolic
// ref) or an object ID (SHA-1 or SHA-256 hex), followed by optional
// whitespace.
func parseRefFile(data []byte) (target, hash string, err error) {
	if rest, ok := bytes.CutPrefix(data, []byte("ref:")); ok {
		name := string(bytes.TrimSpace(rest))
		if err := checkRefName(name); err != nil {
			return "", "", err
		}
		return name, "", nil
	}
	n := hexPrefix(data)
	if n != 40 && n != 64 {
		return "", "", errors.New("not a ref: neither \"ref:\" nor an object ID")
	}
	if len(bytes.TrimSpace(data[n:])) != 0 {
		return "", "", errors.New("not a ref: trailing data after object ID")
	}
	return "", strings.ToLower(string(data[:n])), nil
}

// hexPrefix counts leading hex digits.
func hexPrefix(b []byte) int {
	n := 0
	for n < len(b) && (b[n] >= '0' && b[n] <= '9' || b[n] >= 'a' && b[n] <= 'f' || b[n] >= 'A' && b[n] <= 'F') {
		n++
	}
	return n
}

// checkRefName accepts the ref names HEAD may point to: under refs/, and
// nothing that could step out of the refs directory or that git itself
// rejects (check-ref-format).
func checkRefName(name string) error {
	if !strings.HasPrefix(name, "refs/") {
		return fmt.Errorf("bad ref name %q: not under refs/", name)
	}
	if strings.Contains(name, "..") || strings.Contains(name, "//") || strings.Contains(name, "@{") ||
		strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") || strings.HasSuffix(name, ".lock") ||
		strings.Contains(name, "/.") {
		return fmt.Errorf("bad ref name %q", name)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return fmt.Errorf("bad ref name %q", name)
		}
	}
	return nil
}

// lookupPackedRef finds name in packed-refs content. A file with the
// "sorted" trait is scanned only up to where name would be, which keeps
// branch lookups cheap even with many tags (refs/heads sorts first).
func lookupPackedRef(r io.Reader, name string) (hash string, found bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxSmallFile)
	sorted, first, prevRef := false, true, false
	for ln := 1; sc.Scan(); ln++ {
		line := sc.Bytes()
		if first {
			first = false
			if traits, ok := bytes.CutPrefix(line, []byte("# pack-refs with:")); ok {
				sorted = strings.Contains(string(traits)+" ", " sorted ")
				continue
			}
		}
		if len(line) > 0 && line[0] == '^' {
			if !prevRef || !validHash(line[1:]) {
				return "", false, fmt.Errorf("packed-refs line %d: bad peeled line", ln)
			}
			prevRef = false
			continue
		}
		n := hexPrefix(line)
		if (n != 40 && n != 64) || len(line) < n+2 || line[n] != ' ' {
			return "", false, fmt.Errorf("packed-refs line %d: bad line", ln)
		}
		ref := string(line[n+1:])
		if ref == name {
			return strings.ToLower(string(line[:n])), true, nil
		}
		if sorted && ref > name {
			return "", false, nil
		}
		prevRef = true
	}
	if err := sc.Err(); err != nil {
		return "", false, fmt.Errorf("packed-refs: %w", err)
	}
	return "", false, nil
}

func validHash(b []byte) bool {
	n := hexPrefix(b)
	return (n == 40 || n == 64) && n == len(b)
}
