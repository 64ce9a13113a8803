package redact

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
)

// Fake secrets are built at run time so that the repository never holds a
// string that a secret scanner would flag.

const (
	alphaNum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upperNum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	base64Std = alphaNum + "+/"
	base64URL = alphaNum + "-_"
	digits    = "0123456789"
	symbols   = "!#%*+-.:=?@^_~"
)

// randFrom returns n characters of alphabet, starting with one lower case
// letter, one upper case letter and one digit where the alphabet has them,
// so that every fake mixes classes the way generated credentials do.
func randFrom(rng *rand.Rand, alphabet string, n int) string {
	var b strings.Builder
	for _, class := range []string{"abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", digits} {
		if b.Len() < n && strings.ContainsAny(alphabet, class) {
			for {
				c := alphabet[rng.IntN(len(alphabet))]
				if strings.IndexByte(class, c) >= 0 {
					b.WriteByte(c)
					break
				}
			}
		}
	}
	for b.Len() < n {
		b.WriteByte(alphabet[rng.IntN(len(alphabet))])
	}
	return b.String()
}

// fake is a secret as it appears in text (text) and the part of it that
// must not survive redaction (secret), with the rule expected to name it.
type fake struct {
	rule   string
	text   string
	secret string
}

// fakeKinds is the number of kinds fakeSecret can build.
const fakeKinds = 31

// fakeSecret builds a fake secret of the given kind (taken modulo
// fakeKinds).
func fakeSecret(rng *rand.Rand, kind int) fake {
	tok := func(rule, s string) fake { return fake{rule, s, s} }
	assign := func(rule, name, v string) fake { return fake{rule, name + v, v} }
	switch kind % fakeKinds {
	case 0:
		return tok("anthropic-key", "sk-ant-api03-"+randFrom(rng, base64URL, 93)+"AA")
	case 1:
		return tok("openai-key", "sk-proj-"+randFrom(rng, base64URL, 156))
	case 2:
		return tok("openai-key", "sk-"+randFrom(rng, alphaNum, 48))
	case 3:
		return tok("google-api-key", "AIza"+randFrom(rng, base64URL, 35))
	case 4:
		return tok("huggingface-token", "hf_"+randFrom(rng, alphaNum, 34))
	case 5:
		return tok("groq-key", "gsk_"+randFrom(rng, alphaNum, 52))
	case 6:
		return tok("xai-key", "xai-"+randFrom(rng, alphaNum, 80))
	case 7:
		return tok("github-token", "ghp_"+randFrom(rng, alphaNum, 36))
	case 8:
		return tok("github-token", []string{"gho_", "ghu_", "ghs_", "ghr_"}[rng.IntN(4)]+randFrom(rng, alphaNum, 36))
	case 9:
		return tok("github-token", "github_pat_"+randFrom(rng, alphaNum, 22)+"_"+randFrom(rng, alphaNum, 59))
	case 10:
		return tok("gitlab-token", "glpat-"+randFrom(rng, base64URL, 20))
	case 11:
		return tok("gitlab-token", []string{"gldt-", "glrt-", "glptt-", "glcbt-", "GR1348941"}[rng.IntN(5)]+randFrom(rng, alphaNum, 20))
	case 12:
		return tok("aws-access-key-id", []string{"AKIA", "ASIA"}[rng.IntN(2)]+randFrom(rng, upperNum, 16))
	case 13:
		return assign("aws-secret-access-key", "aws_secret_access_key = ", randFrom(rng, base64Std, 40))
	case 14:
		return assign("aws-secret-access-key", `"SecretAccessKey": "`, randFrom(rng, base64Std, 40))
	case 15:
		return tok("slack-token", "xoxb-"+randFrom(rng, digits, 12)+"-"+randFrom(rng, digits, 13)+"-"+randFrom(rng, alphaNum, 24))
	case 16:
		return tok("stripe-key", []string{"sk_live_", "rk_live_"}[rng.IntN(2)]+randFrom(rng, alphaNum, 24))
	case 17:
		return tok("jwt", fakeJWT(rng))
	case 18:
		return tok("private-key", fakePEM(rng, "RSA PRIVATE KEY", "\n"))
	case 19:
		return tok("private-key", fakePEM(rng, "OPENSSH PRIVATE KEY", "\r\n"))
	case 20:
		return assign("generic-secret", "password=", randFrom(rng, alphaNum+symbols, 24))
	case 21:
		return assign("generic-secret", "GITHUB_TOKEN=", randFrom(rng, alphaNum, 32))
	case 22:
		return assign("generic-secret", "MISTRAL_API_KEY: ", randFrom(rng, alphaNum, 32))
	case 23:
		return assign("generic-secret", `"client_secret": "`, randFrom(rng, alphaNum+"-_", 40))
	case 24:
		return assign("generic-secret", "Authorization: Bearer ", randFrom(rng, base64URL, 40))
	case 25:
		return assign("generic-secret", "apiKey := \"", randFrom(rng, alphaNum, 40))
	case 26:
		return assign("generic-secret", "https://example.com/cb?access_token=", randFrom(rng, base64URL, 30))
	case 27:
		pass := guessable(rng)
		return fake{"url-credentials", "git clone https://deploy:" + pass + "@git.example.com/org/repo.git", pass}
	case 28:
		pass := randFrom(rng, alphaNum+"-._~", 16)
		return fake{"url-credentials", "DATABASE_URL=postgres://app:" + pass + "@db.internal:5432/prod", pass}
	case 29:
		return assign("password", "DB_PASSWORD=", guessable(rng))
	default:
		return assign("password", `"adminPassword": "`, guessable(rng))
	}
}

// guessable builds a password of the kind people choose: a word, a number,
// maybe a symbol. Its entropy is too low for the generic rule.
func guessable(rng *rand.Rand) string {
	word := []string{"summer", "Dragon", "monkey", "Hunter", "letmein"}[rng.IntN(5)]
	return word + []string{"", "!", "."}[rng.IntN(3)] + randFrom(rng, digits, 4)
}

// fakeJWT builds a signed-looking JWT.
func fakeJWT(rng *rand.Rand) string {
	enc := base64.RawURLEncoding
	sig := make([]byte, 32)
	for i := range sig {
		sig[i] = byte(rng.Uint32())
	}
	return enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		enc.EncodeToString([]byte(`{"sub":"`+randFrom(rng, digits, 10)+`","name":"dev","iat":1516239022}`)) + "." +
		enc.EncodeToString(sig)
}

// fakePEM builds a private key block with the given label and line break.
func fakePEM(rng *rand.Rand, label, nl string) string {
	var b strings.Builder
	b.WriteString("-----BEGIN " + label + "-----" + nl)
	for range 8 {
		b.WriteString(randFrom(rng, base64Std, 64) + nl)
	}
	b.WriteString(randFrom(rng, base64Std, 20) + "==" + nl)
	b.WriteString("-----END " + label + "-----")
	return b.String()
}
