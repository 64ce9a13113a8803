package redact

import "bytes"

// Rule identifiers. The order is the priority used to label a redaction
// where matches of several rules overlap: the more specific rule names it.
const (
	rulePrivateKey = iota
	ruleJWT
	ruleAnthropic
	ruleOpenAI
	ruleGoogle
	ruleHuggingFace
	ruleGroq
	ruleXAI
	ruleGitHub
	ruleGitLab
	ruleAWSKeyID
	ruleAWSSecret
	ruleSlack
	ruleStripe
	ruleURLCredentials
	rulePassword
	ruleGeneric
	numRules
)

// ruleNames are the keys of Counts and the names inside markers. They are
// stable: checkpoints record them.
var ruleNames = [numRules]string{
	rulePrivateKey:     "private-key",
	ruleJWT:            "jwt",
	ruleAnthropic:      "anthropic-key",
	ruleOpenAI:         "openai-key",
	ruleGoogle:         "google-api-key",
	ruleHuggingFace:    "huggingface-token",
	ruleGroq:           "groq-key",
	ruleXAI:            "xai-key",
	ruleGitHub:         "github-token",
	ruleGitLab:         "gitlab-token",
	ruleAWSKeyID:       "aws-access-key-id",
	ruleAWSSecret:      "aws-secret-access-key",
	ruleSlack:          "slack-token",
	ruleStripe:         "stripe-key",
	ruleURLCredentials: "url-credentials", // scheme://user:password@host
	rulePassword:       "password",        // assigned to a password's name, however guessable
	ruleGeneric:        "generic-secret",
}

// charset is a byte-membership table.
type charset [256]bool

// newCharset builds a charset from literal bytes and a-b ranges.
func newCharset(spec string) *charset {
	var cs charset
	for i := 0; i < len(spec); i++ {
		if i+2 < len(spec) && spec[i+1] == '-' {
			for c := int(spec[i]); c <= int(spec[i+2]); c++ {
				cs[c] = true
			}
			i += 2
			continue
		}
		cs[spec[i]] = true
	}
	return &cs
}

// Lookup tables: read-only after package initialisation.
var (
	alnum       = newCharset("A-Za-z0-9")
	upperDigit  = newCharset("A-Z0-9")
	lower       = newCharset("a-z")
	b64url      = newCharset("A-Za-z0-9_-")               // base64url, and most token bodies
	b64urlDot   = newCharset("A-Za-z0-9_.-")              // GitLab's newer tokens carry dots
	alnumUnder  = newCharset("A-Za-z0-9_")                // github_pat_ bodies
	alnumDash   = newCharset("A-Za-z0-9-")                // Slack
	awsSecretCS = newCharset("A-Za-z0-9/+")               // AWS secret access keys (decoded)
	pemLabel    = newCharset("A-Z0-9 ")                   // RSA, EC, OPENSSH, ENCRYPTED, PGP ...
	identChar   = newCharset("A-Za-z0-9_.-")              // names on the left of '=' or ':'
	userinfo    = newCharset("A-Za-z0-9._~%!$&'()*+,;=-") // a URL's user or password (RFC 3986), decoded
	valueChar   = newCharset("A-Za-z0-9!#$%*+./:=?@^_~-") // decoded characters of an assigned value
	// pemBody holds the raw characters of a PEM body as it appears in plain
	// text or in a JSON string: base64, whitespace, escapes (\n, \/, \u002b,
	// also doubled), and the header lines of encrypted keys.
	pemBody = newCharset("A-Za-z0-9+/=\\ \t\r\n:,.-")
)

// tokenRule recognises a token that starts with prefix. match is called
// with the window starting at the prefix and returns the length of the
// secret in raw bytes, or 0.
type tokenRule struct {
	prefix string
	rule   int
	match  func(w []byte) int
}

// tokenRules lists every prefix-anchored rule. Longer prefixes come before
// their own prefixes (sk-ant- before sk-), because the first match wins.
func tokenRules() []tokenRule {
	github := prefixed(4, alnum, 36, 255)
	gitlab := func(prefix string) tokenRule {
		return tokenRule{prefix, ruleGitLab, prefixed(len(prefix), b64urlDot, 20, 255)}
	}
	stripe := prefixed(8, alnum, 16, 255)
	slack := prefixed(5, alnumDash, 20, 255)
	aws := exact(4, upperDigit, 16)
	rules := []tokenRule{
		{"-----BEGIN ", rulePrivateKey, privateKey},
		{"eyJ", ruleJWT, jwt},
		{"sk-ant-", ruleAnthropic, prefixed(7, b64url, 32, 512)},
		{"sk-", ruleOpenAI, prefixed(3, b64url, 32, 512)},
		{"sk_live_", ruleStripe, stripe},
		{"sk_test_", ruleStripe, stripe},
		{"rk_live_", ruleStripe, stripe},
		{"rk_test_", ruleStripe, stripe},
		{"AIza", ruleGoogle, exact(4, b64url, 35)},
		{"hf_", ruleHuggingFace, prefixed(3, alnum, 30, 255)},
		{"gsk_", ruleGroq, prefixed(4, alnum, 40, 255)},
		{"xai-", ruleXAI, prefixed(4, alnum, 40, 255)},
		{"ghp_", ruleGitHub, github},
		{"gho_", ruleGitHub, github},
		{"ghu_", ruleGitHub, github},
		{"ghs_", ruleGitHub, github},
		{"ghr_", ruleGitHub, github},
		{"github_pat_", ruleGitHub, prefixed(11, alnumUnder, 50, 255)},
		{"GR1348941", ruleGitLab, prefixed(9, b64url, 20, 255)},
		{"AKIA", ruleAWSKeyID, aws},
		{"ASIA", ruleAWSKeyID, aws},
		{"ABIA", ruleAWSKeyID, aws},
		{"ACCA", ruleAWSKeyID, aws},
		{"xoxa-", ruleSlack, slack},
		{"xoxb-", ruleSlack, slack},
		{"xoxp-", ruleSlack, slack},
		{"xoxr-", ruleSlack, slack},
		{"xoxs-", ruleSlack, slack},
	}
	for _, p := range []string{"glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-", "glimt-", "glagent-", "gloas-", "glffct-"} {
		rules = append(rules, gitlab(p))
	}
	return rules
}

// run returns the length of the run of bytes of cs at the start of w,
// counting at most limit+1 so that callers can reject over-long runs
// without scanning them to the end.
func run(w []byte, cs *charset, limit int) int {
	n := 0
	for n < len(w) && n <= limit && cs[w[n]] {
		n++
	}
	return n
}

// prefixed matches a prefix of plen bytes followed by a maximal run of cs
// between lo and hi bytes long that mixes character classes. Over-long runs
// are data, not tokens; single-class runs are words (sk-learning-resources).
func prefixed(plen int, cs *charset, lo, hi int) func([]byte) int {
	return func(w []byte) int {
		body := w[plen:]
		n := run(body, cs, hi)
		if n < lo || n > hi || !mixed(body[:n]) {
			return 0
		}
		return plen + n
	}
}

// exact matches a prefix of plen bytes followed by exactly n bytes of cs,
// not followed by another letter or digit.
func exact(plen int, cs *charset, n int) func([]byte) int {
	return func(w []byte) int {
		body := w[plen:]
		if run(body, cs, n) != n || (n < len(body) && alnum[body[n]]) || !mixed(body[:n]) {
			return 0
		}
		return plen + n
	}
}

// mixed reports whether b has at least two of: lower case letters, upper
// case letters, digits. Generated tokens practically always do.
func mixed(b []byte) bool {
	var lower, upper, digit int
	for _, c := range b {
		switch {
		case 'a' <= c && c <= 'z':
			lower = 1
		case 'A' <= c && c <= 'Z':
			upper = 1
		case '0' <= c && c <= '9':
			digit = 1
		}
	}
	return lower+upper+digit >= 2
}

// maxJWTSegment bounds each dot-separated part of a JWT.
const maxJWTSegment = 8 << 10

// jwt matches header.payload.signature where header and payload are
// base64url JSON objects (they start with eyJ, the encoding of `{"`). More
// segments (JWE) are included; an empty signature (alg none) is allowed.
func jwt(w []byte) int {
	p := 0
	for seg := 0; ; seg++ {
		n := run(w[p:], b64url, maxJWTSegment)
		if n > maxJWTSegment || (seg < 2 && (n < 10 || !bytes.HasPrefix(w[p:], []byte("eyJ")))) {
			return 0
		}
		p += n
		if seg >= 2 && (p >= len(w) || w[p] != '.') {
			return p
		}
		if p >= len(w) || w[p] != '.' {
			return 0
		}
		p++
	}
}

// privateKey matches a PEM private key block from "-----BEGIN ... PRIVATE
// KEY-----" through the matching END line. The body may span real newlines
// or JSON escapes. A block without an END line (a truncated key) is redacted
// from the header through the end of its body run, within the window.
func privateKey(w []byte) int {
	const begin = "-----BEGIN "
	label, ok := pemHeader(w[len(begin):])
	if !ok {
		return 0
	}
	p := len(begin) + label + len("-----")
	body := p + run(w[p:], pemBody, len(w))
	if k := bytes.Index(w[p:body], []byte("-----END ")); k >= 0 {
		q := p + k + len("-----END ")
		if n, ok := pemHeader(w[q:]); ok {
			return q + n + len("-----")
		}
	}
	return escapeBoundary(w, body)
}

// pemHeader checks that w starts with a label ending in PRIVATE KEY (or
// PRIVATE KEY BLOCK) followed by "-----", and returns the label's length.
func pemHeader(w []byte) (int, bool) {
	n := run(w, pemLabel, 64)
	if n > 64 || !bytes.HasPrefix(w[n:], []byte("-----")) {
		return 0, false
	}
	label := w[:n]
	return n, bytes.HasSuffix(label, []byte("PRIVATE KEY")) || bytes.HasSuffix(label, []byte("PRIVATE KEY BLOCK"))
}
