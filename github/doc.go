// Package github reconciles tether sessions with GitHub issue and pull
// request state, for `tether-sweep run --github` and `status --github`.
//
// A session can look running locally long after its work finished on
// GitHub. When local evidence cannot settle it, GitHub's state may; but a
// GitHub failure never invents an ending.
//
// Promises:
//   - Map is a pure function from an Observation to a Decision, following
//     the first-match table documented on it. Any failure other than a
//     404/410 (network, 5xx, 401/403, rate limits) is "no change" with the
//     error recorded, never an ending.
//   - A Reconciler lives for one sweep of one repository. It makes at most
//     one call per repository, per branch's PR list, per PR and per issue,
//     and after the first failure it makes none: a rate limit returns the
//     reset time (Decision.RetryAt) for the caller to persist and honour in
//     later sweeps.
//   - The token is never logged, stored, or put in an error or a Decision.
//     Without a token (ErrNoToken) no client exists and no call is made.
//     GH_TOKEN/GITHUB_TOKEN go only to github.com (and GHE.com tenants);
//     redirects to another host are refused.
//
// When to ask (the caller's part): only for sessions that have not ended,
// whose owner is Dead, or Unknown past the stale-after threshold, may a
// Decision with End set end the session (end_reason "github", the state in
// GitHubLink.State) — Allowed says so. For sessions whose owner is Alive,
// the caller may still observe and store Decision.Link as an annotation
// ("PR #12 merged"), but never ends them. Ended sessions are not observed.
//
// Linking: the repository comes from the origin remote (ParseRemote); the
// pull request from GitHubLink.PR or from the session's branch; the issue
// from GitHubLink.Issue, the branch name (IssueFromBranch) or the PR body's
// closing keywords (ClosingIssues).
package github
