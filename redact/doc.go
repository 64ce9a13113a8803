// Package redact finds secrets in agent transcripts and prompts and replaces
// them with a marker such as [REDACTED:github-token] before anything is
// written to the checkpoints.
//
// What it promises:
//
//   - Rules for provider API keys (Anthropic, OpenAI, Google, Hugging Face,
//     Groq, xAI), GitHub and GitLab tokens, AWS access key IDs and secret
//     access keys, Slack and Stripe keys, PEM private key blocks, JWTs, the
//     user:password of URLs (https://user:pass@host, postgres://app:x@db),
//     passwords however guessable when assigned to a password's name
//     (password=hunter2hunter2, PGPASSWORD='...', "adminPassword": "...",
//     a quoted passphrase with spaces), and high-entropy values assigned to
//     secret-looking names ("token": "...", api_key: ...). Mistral and
//     Cohere keys have no recognisable prefix and are caught only by the
//     assignment rule (for example MISTRAL_API_KEY=...).
//   - JSON awareness without parsing: secrets are found inside JSON strings
//     whose escapes (\n, \", \/, \u002b) are decoded for matching, and a
//     replacement always covers whole escape sequences and never a quote, so
//     a line that was valid JSON stays valid JSON. The marker contains no
//     character that JSON escapes.
//   - Counts records how many secrets each rule redacted, never the secrets.
//   - Copy streams with bounded memory, whatever the line lengths (a
//     transcript line of hundreds of MiB is fine), and gives exactly the
//     output of Bytes on the same input: every decision depends only on a
//     fixed window around the position examined (64 KiB ahead, 256 bytes
//     behind), never on how the input was chunked. Lines are not special:
//     a private key pasted across real newlines is one match.
//   - Speed: one pass over the input, looking up each byte and the next in
//     a table; rules run only at candidates (the first two bytes of a token
//     prefix at a word start, a ':' or '=', "--"), and the assignment rules
//     only after a secret-looking name.
//
// Limits, by design: token prefixes are matched as written (JSON encoders do
// not escape ASCII letters); a value is judged a generic secret only when it
// is at least 16 characters long and has at least 3.5 bits of Shannon
// entropy per character (see looksSecret). Under a password's name any value
// of 6 characters or more is a password, except references, masks, paths
// and names (string, None, process.env.X: see looksPassword), so a password
// of letters alone (correcthorse) is kept, and one not assigned to a name is
// not seen at all.
//
// Why our own rules rather than a maintained set: gitleaks v8.30.1's 222
// rules, run over the 2 MiB transcript the benchmarks use, took 1.4-2.9 s
// of CPU (0.7-1.5 MB/s: as a library, or its regexps as data behind its
// keyword filter) against 5-8 ms here (250-450 MB/s), found 15 of its 30
// planted secrets, and none of a URL's password or a guessable password.
// A transcript slice can be tens of MB, condensed inside a commit.
package redact
