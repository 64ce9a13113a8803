package redact

import (
	"bytes"
	"math"
)

// The assignment rules look at NAME = VALUE and NAME: VALUE in any syntax a
// transcript carries (env files, shell, YAML, JSON, code, HTTP headers, URL
// queries), including JSON nested in JSON strings ("token\": \"...\").

const (
	maxKeyLen = 64 // longer "names" are data (base64, hashes), not keys
	// maxValueLen bounds a judged value, in decoded bytes. Credentials are
	// far shorter; longer runs are data.
	maxValueLen = 512
	// minSecretLen is the shortest value the generic rule judges.
	minSecretLen = 16
	// minEntropy is the Shannon entropy, in bits per character, a value
	// needs to be judged a generic secret. Random alphanumeric values
	// average 3.77 bits at 16 characters (95% reach 3.5), 4.03 at 20
	// (99.7%) and 4.24 at 24 (all of 10,000 samples); words, dates and
	// repeated passwords stay below it (hunter2hunter2hunter2: 2.8,
	// 2025-11-21T10:43:00.123Z: 3.2). Long words and word lists can pass
	// it, so UUIDs, git object names, numbers, paths, URLs, identifiers and
	// placeholders are excluded by shape first (see looksSecret).
	minEntropy = 3.5
)

// keyKind is what a name says about the value assigned to it.
type keyKind int

const (
	keyNone      keyKind = iota
	keySecret            // token, api_key, client_secret, password_salt, ...
	keyPassword          // password, DB_PASSWORD, adminPasswd, --pass: the last word says so
	keyAWSSecret         // aws_secret_access_key, SecretAccessKey
)

// keyBefore returns the name that ends just before the operator at b[i]:
// the run of identifier characters before any closing quotes, escaped
// quotes, brackets and blanks. It looks no further back than lo.
func keyBefore(b []byte, lo, i int) []byte {
	j := i
	for n := 0; n < 6 && j > lo; n++ {
		switch b[j-1] {
		case '"', '\'', '`', '\\', ']', ' ', '\t':
			j--
			continue
		}
		break
	}
	e := j
	for stop := max(lo, e-maxKeyLen-1); j > stop && identChar[b[j-1]]; {
		j--
	}
	if e == j || e-j > maxKeyLen {
		return nil
	}
	key := b[j:e]
	// A name right after an escape (\nPASSWORD=, \u0020token:) starts after
	// the escape's letters, which the identifier run swallowed.
	if j > lo && b[j-1] == '\\' {
		switch key[0] {
		case 'n', 'r', 't', 'b', 'f':
			key = key[1:]
		case 'u':
			if _, ok := hex4(key[1:]); ok {
				key = key[5:]
			}
		}
	}
	return key
}

// classifyKey splits a name into lower-case words at '_', '-', '.' and
// case changes (apiKey, APIKey, OPENAI_API_KEY) and decides whether it
// names a secret. Whole words are compared, so tokenizer and max_tokens
// are not secrets.
func classifyKey(key []byte) keyKind {
	if len(key) < 3 || len(key) > maxKeyLen {
		return keyNone
	}
	var buf [maxKeyLen]byte
	var prev []byte
	n, start, kind := 0, 0, keyNone // buf[start:n] is the word being read
	for k := 0; k <= len(key); k++ {
		sep := k < len(key) && isSep(key[k])
		if (k == len(key) || sep || (k > 0 && caseBreak(key, k))) && n > start {
			word := buf[start:n]
			if kind == keyNone && secretWord(word, prev) {
				kind = keySecret
			}
			prev, start = word, n
		}
		if k == len(key) || sep {
			continue
		}
		c := key[k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	if kind == keySecret && (bytes.Contains(buf[:n], []byte("secretaccesskey")) || bytes.Contains(buf[:n], []byte("awssecret"))) {
		return keyAWSSecret
	}
	if passwordWord(prev) {
		return keyPassword
	}
	return kind
}

// passwordWord reports whether a name whose last word is word names a
// password: DB_PASSWORD, PGPASSWORD, adminPasswd, --pass, MYSQL_PWD.
func passwordWord(word []byte) bool {
	if len(word) < 3 {
		return false
	}
	switch word[len(word)-1] {
	case 'd', 'e', 's': // the last letters of the words below; most names end otherwise
	default:
		return false
	}
	switch string(word) {
	case "pass", "pwd":
		return true
	}
	for _, w := range []string{"password", "passwd", "passphrase"} {
		if bytes.HasSuffix(word, []byte(w)) {
			return true
		}
	}
	return false
}

// secretWord reports whether a word of a name, after the word prev, makes
// the name a secret's.
func secretWord(word, prev []byte) bool {
	switch string(word) {
	case "password", "passwd", "passphrase", "pass", "pwd", "secret", "secrets", "token",
		"apikey", "accesskey", "secretkey", "privatekey", "authorization", "auth",
		"credential", "credentials", "pat", "secretaccesskey", "awssecretkey":
		return true
	case "key":
		switch string(prev) {
		case "api", "access", "secret", "private", "signing", "encryption", "master", "client", "app":
			return true
		}
	}
	return false
}

// caseBreak reports whether a new word starts at key[k] by case: apiKey,
// v2Token, and the last capital of an acronym followed by lower case
// (APIKey).
func caseBreak(key []byte, k int) bool {
	c, p := key[k], key[k-1]
	if c < 'A' || c > 'Z' {
		return false
	}
	if ('a' <= p && p <= 'z') || ('0' <= p && p <= '9') {
		return true
	}
	return 'A' <= p && p <= 'Z' && k+1 < len(key) && 'a' <= key[k+1] && key[k+1] <= 'z'
}

// valueStart returns where the value after the operator at w[i] begins:
// past a second operator character (:=, ==, =>), blanks, an opening quote
// (possibly escaped, \" or \\\"), and an HTTP auth scheme (Bearer, Basic,
// token). The result is an escape boundary.
func valueStart(w []byte, i int) int {
	j := i + 1
	if j < len(w) && (w[j] == '=' || (w[i] == '=' && w[j] == '>')) {
		j++
	}
	for n := 0; n < 16 && j < len(w) && (w[j] == ' ' || w[j] == '\t'); n++ {
		j++
	}
	k := j
	for k < len(w) && k-j < 8 && w[k] == '\\' {
		k++
	}
	if k < len(w) && (w[k] == '"' || w[k] == '\'' || w[k] == '`') {
		j = k + 1
	}
	for _, scheme := range [...]string{"bearer ", "basic ", "token "} {
		if len(w)-j > len(scheme) && bytes.EqualFold(w[j:j+len(scheme)], []byte(scheme)) {
			return j + len(scheme)
		}
	}
	return j
}

// decodeValue decodes the run of value characters starting at w[j] into
// dec (reusing its storage) and returns it with the raw end of the run.
// ok is false when the run is longer than maxValueLen.
func decodeValue(w []byte, j int, dec []byte) (_ []byte, end int, ok bool) {
	dec = dec[:0]
	for j < len(w) {
		c, n := decodeAt(w, j)
		if !valueChar[c] {
			break
		}
		if len(dec) == maxValueLen {
			return dec, j, false
		}
		dec = append(dec, c)
		j += n
	}
	return dec, j, true
}

func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }

// decodeQuoted decodes the value starting at w[j], just after the opening
// quote q, up to the closing one (plain or escaped), into dec, and returns
// it with the raw end. A backslash in the value ends it too, so a
// redaction never takes part of a deeper level of escaping. ok is false
// for a value longer than maxValueLen, or one with a character that is
// neither a value's nor a space (a marker, a line break, markup).
func decodeQuoted(w []byte, j int, q byte, dec []byte) (_ []byte, end int, ok bool) {
	dec = dec[:0]
	for j < len(w) {
		c, n := decodeAt(w, j)
		switch {
		case c == q || c == '\\':
			return dec, j, true
		case !valueChar[c] && c != ' ' || len(dec) == maxValueLen:
			return dec, j, false
		}
		dec = append(dec, c)
		j += n
	}
	return dec, j, false
}

// judge decides which rule, if any, redacts value v assigned to a name of
// kind k. It returns -1 for no rule.
func judge(k keyKind, v []byte) int {
	if k == keyAWSSecret && len(v) == 40 && all(v, awsSecretCS) && mixed(v) {
		return ruleAWSSecret
	}
	if looksSecret(v) {
		return ruleGeneric
	}
	if k == keyPassword && looksPassword(v) {
		return rulePassword // guessable, or it would be a generic secret
	}
	return -1
}

// looksSecret reports whether a value is long and random enough to be a
// credential rather than a word, identifier, path, number, URL, UUID,
// digest or placeholder.
func looksSecret(v []byte) bool {
	if len(v) < minSecretLen || len(v) > maxValueLen {
		return false
	}
	switch v[0] {
	case '$', '%', '*', '/', '~', '.':
		// $VAR, ${{ secrets.X }}, %VAR%, ****, absolute and relative paths.
		return false
	}
	if bytes.Contains(v, []byte("://")) || hasFileExt(v) || isUUID(v) || isHexDigest(v) ||
		fewLetters(v) || isIdentifier(v) || !multiClass(v) {
		return false
	}
	return entropy(v) >= minEntropy
}

// minPasswordLen is the shortest value the password rule redacts.
const minPasswordLen = 6

// looksPassword reports whether a value assigned to a password's name is a
// password, however guessable (hunter2hunter2): anything but a reference
// ($VAR, %VAR%, a URL), a mask (****), a path, a YAML tag (!vault) or a
// name (string, None, getpass, process.env.DB_PASSWORD), which code
// assigns to passwords as often as people type them. So a password of
// letters alone (correcthorse) is kept: the price of not redacting every
// `password: string`.
func looksPassword(v []byte) bool {
	if len(v) < minPasswordLen || len(v) > maxValueLen {
		return false
	}
	switch v[0] {
	case '$', '%', '*', '/', '~', '.', '!':
		return false
	}
	return !bytes.Contains(v, []byte("://")) && !isIdentifier(v)
}

// maxUserinfo bounds the user:password part of a URL, in raw bytes.
const maxUserinfo = 512

// urlCredentials finds the user:password of a URL whose "://" starts at
// the ':' at w[i] (slashes plain or JSON-escaped) and returns its raw span,
// up to the '@'. Both are redacted: a token is as often the user
// (https://ghp_...@github.com) as the password. A URL without a password,
// with a variable for one ($TOKEN), or a mask (****) has none.
func urlCredentials(w []byte, i int) (start, end int, ok bool) {
	j := i + 1
	for range 2 {
		if j >= len(w) {
			return 0, 0, false
		}
		c, n := decodeAt(w, j)
		if c != '/' {
			return 0, 0, false
		}
		j += n
	}
	start = j
	pass, masked := -1, true // where the password starts; whether it is all '*'
	for j < len(w) && j-start <= maxUserinfo {
		c, n := decodeAt(w, j)
		switch {
		case c == '@':
			if pass < 0 || pass == j || w[pass] == '$' || masked {
				return 0, 0, false
			}
			return start, j, true
		case c == ':':
			if pass < 0 {
				pass = j + n
			}
		case !userinfo[c]:
			return 0, 0, false
		case pass >= 0 && c != '*':
			masked = false
		}
		j += n
	}
	return 0, 0, false
}

// all reports whether every byte of b is in cs.
func all(b []byte, cs *charset) bool {
	for _, c := range b {
		if !cs[c] {
			return false
		}
	}
	return true
}

// hasFileExt reports a path-like value: it contains '/' and ends in a file
// extension (src/app/main.go).
func hasFileExt(v []byte) bool {
	dot := bytes.LastIndexByte(v, '.')
	if dot < 0 || bytes.IndexByte(v, '/') < 0 {
		return false
	}
	ext := v[dot+1:]
	return len(ext) >= 1 && len(ext) <= 5 && all(ext, alnum) && bytes.IndexByte(ext, '/') < 0
}

// isUUID reports the canonical 8-4-4-4-12 hex form.
func isUUID(v []byte) bool {
	if len(v) != 36 {
		return false
	}
	for i, c := range v {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !isHex(c) {
			return false
		}
	}
	return true
}

// isHexDigest reports a git object name or SHA-256 digest (40 or 64 hex).
func isHexDigest(v []byte) bool {
	if len(v) != 40 && len(v) != 64 {
		return false
	}
	for _, c := range v {
		if !isHex(c) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// fewLetters reports numbers, dates, times, versions and addresses: values
// with at most two letters.
func fewLetters(v []byte) bool {
	letters := 0
	for _, c := range v {
		if letter(c) {
			letters++
		}
	}
	return letters <= 2
}

// isIdentifier reports values made only of letters and '_', '-', '.', '/'
// whose words (split as in classifyKey) are at least three letters long,
// lower case, or a two-letter acronym: process.env.OPENAI_API_KEY,
// this-is-my-key. Random mixed-case letters break into short capitalised
// words (xKqPzmRt: x, Kq, Pzm, Rt), so they are not identifiers.
func isIdentifier(v []byte) bool {
	start := 0
	for k := 0; k <= len(v); k++ {
		if k < len(v) {
			c := v[k]
			if !letter(c) && !isSep(c) && c != '/' {
				return false
			}
			if letter(c) && (k == start || !caseBreak(v, k)) {
				continue
			}
		}
		// A word ends at k: at a separator, a case break or the end.
		if w := v[start:k]; len(w) > 0 && len(w) < 3 && !all(w, lower) && !(len(w) == 2 && all(w, upperDigit)) {
			return false
		}
		start = k
		if k < len(v) && !letter(v[k]) {
			start = k + 1
		}
	}
	return true
}

func letter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

// isSep reports the characters that separate words in names.
func isSep(c byte) bool { return c == '_' || c == '-' || c == '.' }

// multiClass reports whether v has at least two of: lower case, upper
// case, digits, other characters.
func multiClass(v []byte) bool {
	var lower, upper, digit, other int
	for _, c := range v {
		switch {
		case 'a' <= c && c <= 'z':
			lower = 1
		case 'A' <= c && c <= 'Z':
			upper = 1
		case '0' <= c && c <= '9':
			digit = 1
		default:
			other = 1
		}
	}
	return lower+upper+digit+other >= 2
}

// entropy returns the Shannon entropy of v in bits per byte.
func entropy(v []byte) float64 {
	var freq [256]int
	for _, c := range v {
		freq[c]++
	}
	n := float64(len(v))
	h := 0.0
	for _, f := range freq {
		if f > 0 {
			p := float64(f) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
