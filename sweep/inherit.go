package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/github"
	"github.com/tetherdev/tether/inherit"
	"github.com/tetherdev/tether/state"
)

// InheritOptions say which commits arrived, and how, for Inherit.
type InheritOptions struct {
	// Revs select the arriving commits as git rev-list takes them
	// ("HEAD", "^ORIG_HEAD").
	Revs []string
	// Replay is how a commit with a linked commit's patch-id came:
	// "cherry-pick" or "rebase".
	Replay string
	// Remote, when set, adds what its tracking branches gained since the
	// last look (a git fetch).
	Remote string
	// Rewritten holds a post-rewrite hook's "old new" lines; Rewrite is
	// its argument, "amend" or "rebase".
	Rewritten io.Reader
	Rewrite   string
	// GitHub, when set, asks GitHub about the arrivals content did not
	// match: the merged pull requests they are the merge commit of.
	GitHub *GitHubOptions
}

// Inherit gives the commits that arrived the links of the linked commits
// whose change they carry (package inherit), after indexing what was
// linked since the last look. It returns what was inherited; a GitHub
// failure is a warning, never a link.
func Inherit(repo gitdir.Repo, st *state.Store, opts InheritOptions) (found []inherit.Inherited, warnings []string, err error) {
	cp, err := checkpoint.Open(repo.CommonDir)
	if err != nil {
		return nil, nil, fmt.Errorf("open repository: %w", err)
	}
	m, err := inherit.New(repo, st, cp)
	if err != nil {
		return nil, nil, err
	}
	if _, err := m.Update(); err != nil {
		return nil, nil, err
	}
	if opts.Rewritten != nil {
		got, err := m.Rewritten(opts.Rewritten, opts.Rewrite)
		if err != nil {
			return nil, nil, err
		}
		found = append(found, got...)
	}
	var arrived []string
	if len(opts.Revs) > 0 {
		if arrived, err = m.Arrived(maxInherit, opts.Revs...); err != nil {
			return found, nil, err
		}
	}
	save := func() error { return nil }
	if opts.Remote != "" {
		more, s, err := m.RemoteArrivals(opts.Remote)
		if err != nil {
			return found, nil, err
		}
		arrived, save = append(arrived, more...), s
	}
	ctx, cancel := context.WithTimeout(context.Background(), githubBudget)
	defer cancel()
	if opts.GitHub != nil && len(arrived) > 0 {
		if c, owner, name, err := connectGitHub(ctx, repo, opts.GitHub); err != nil {
			warnings = append(warnings, "github: not asked about pull requests: "+err.Error())
		} else {
			m.Forge = pulls{c, owner, name}
		}
	}
	matched, err := m.Match(ctx, arrived, opts.Replay)
	found = append(found, matched...)
	if err != nil && m.Forge != nil && !errors.Is(err, context.Canceled) {
		warnings = append(warnings, "github: "+err.Error())
		err = nil
	}
	if err != nil {
		return found, warnings, err
	}
	if err := m.Apply(found); err != nil {
		return found, warnings, err
	}
	if len(found) > 0 {
		// What inherited is linked now: a cherry-pick of it matches too.
		if _, err := m.Update(); err != nil {
			return found, warnings, err
		}
	}
	return found, warnings, save()
}

// maxInherit bounds the commits one hook matches.
const maxInherit = 10_000

// pulls is GitHub as package inherit asks it.
type pulls struct {
	c           *github.Client
	owner, name string
}

func (p pulls) MergedPulls(ctx context.Context, commit string) ([]inherit.Pull, error) {
	got, err := p.c.MergedPulls(ctx, p.owner, p.name, commit)
	out := make([]inherit.Pull, len(got))
	for i, g := range got {
		out[i] = inherit.Pull{Number: g.Number, Commits: g.Commits}
	}
	return out, err
}

// indexLinks records what matching needs of the commits this sweep
// linked: in the sweep that makes a link, so that matching what arrives
// later costs what arrived.
func indexLinks(repo gitdir.Repo, st *state.Store, rep *Report) {
	if len(rep.Linked) == 0 {
		return
	}
	start := time.Now()
	cp, err := checkpoint.Open(repo.CommonDir)
	var m *inherit.Matcher
	if err == nil {
		m, err = inherit.New(repo, st, cp)
	}
	n := 0
	if err == nil {
		n, err = m.Update()
	}
	if err != nil {
		rep.Warnings = append(rep.Warnings, "index linked commits: "+err.Error())
		return
	}
	st.Logger().Info("linked commits indexed", "commits", n, "took", time.Since(start).String())
}
