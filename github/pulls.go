package github

import (
	"context"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v92/github"
)

// MergedPull is a merged pull request and the commits it had.
type MergedPull struct {
	Number  int
	Commits []string
}

// maxPullCommits bounds the commits read of one pull request (GitHub
// lists at most 250).
const maxPullCommits = 250

// MergedPulls returns the merged pull requests of owner/repo whose merge
// commit is sha (GitHub's merge_commit_sha: the squash commit, the last
// commit a rebase merge replayed, or the merge commit), each with its
// commits: what GitHub itself says the commit carries, whatever its
// content became in review.
func (c *Client) MergedPulls(ctx context.Context, owner, repo, sha string) ([]MergedPull, error) {
	prs, _, err := c.api.PullRequests.ListPullRequestsWithCommit(ctx, owner, repo, sha, &gh.ListOptions{PerPage: 100})
	if err != nil {
		return nil, fmt.Errorf("pull requests of %s: %w", sha, err)
	}
	var out []MergedPull
	for _, pr := range prs {
		if pr.MergedAt == nil || !strings.EqualFold(pr.GetMergeCommitSHA(), sha) {
			continue
		}
		mp := MergedPull{Number: pr.GetNumber()}
		opts := &gh.ListOptions{PerPage: 100}
		for len(mp.Commits) < maxPullCommits {
			commits, resp, err := c.api.PullRequests.ListCommits(ctx, owner, repo, mp.Number, opts)
			if err != nil {
				return nil, fmt.Errorf("commits of pull request #%d: %w", mp.Number, err)
			}
			for _, rc := range commits {
				mp.Commits = append(mp.Commits, strings.ToLower(rc.GetSHA()))
			}
			if resp == nil || resp.NextPage == 0 {
				break
			}
			opts.Page = resp.NextPage
		}
		out = append(out, mp)
	}
	return out, nil
}
