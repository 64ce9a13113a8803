// Package redact finds secrets in agent transcripts and prompts and replaces
// them with a marker such as [REDACTED:github-token] before anything is
// written to the checkpoints.
//
// What it promises:
//
//   - Rules for provider API keys (Anthropic, OpenAI, Google, Hugging Face,
//     Groq, xAI), GitHub and GitLab tokens, AWS access key IDs and secret
//     access keys, Slack and Stripe keys, PEM private key blocks, JWTs, and
//     high-entropy values assigned to secret-looking names (password=,
//     "token": "...", api_key: ...). Mistral and Cohere keys have no
//     recognisable prefix and are caught only by the assignment rule (for
//     example MISTRAL_API_KEY=...).
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
// entropy per character (see looksSecret), so short or dictionary passwords
// are not caught by that rule.
package redact
