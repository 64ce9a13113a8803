package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tetherdev/tether/state"
	"github.com/tetherdev/tether/sweep"
)

func (a *app) linkCommand() *cobra.Command {
	var issueArg, prArg string
	c := &cobra.Command{
		Use:   "link SESSION --issue N | --pr N",
		Short: "link a session to a GitHub issue or pull request",
		Long: `Record the GitHub issue a session works on, its pull request, or both. The
sweep reconciles a stale session with their state (--github), and status and
show print the link.`,
		Example: `  tether-sweep link 3f2a9c1e --issue 12
  tether-sweep link 3f2a9c1e --pr '#34'`,
		GroupID:           "sessions",
		Args:              exactArgs(1, "link takes one SESSION"),
		ValidArgsFunction: a.completeSessions(true),
		RunE:              func(_ *cobra.Command, args []string) error { return a.link(args[0], issueArg, prArg) },
	}
	c.Flags().StringVar(&issueArg, "issue", "", "the GitHub issue the session works on (12 or #12)")
	c.Flags().StringVar(&prArg, "pr", "", "its pull request (12 or #12)")
	return c
}

func (a *app) link(arg, issueArg, prArg string) error {
	issue, err := parseNumber("--issue", issueArg)
	if err != nil {
		return err
	}
	pr, err := parseNumber("--pr", prArg)
	if err != nil {
		return err
	}
	if issue == 0 && pr == 0 {
		return usagef("give --issue N, --pr N or both")
	}
	w, id, err := a.openSession(arg, true)
	if err != nil {
		return err
	}
	l, changed, err := sweep.Link(w.store, id, issue, pr)
	if err != nil {
		return err
	}
	if changed {
		fmt.Fprintf(a.stdout, "linked %s to %s\n", shortID(id), describeLink(l))
	} else {
		fmt.Fprintf(a.stdout, "%s is already linked to %s\n", shortID(id), describeLink(l))
	}
	return nil
}

// parseNumber reads an issue or pull request number, "12" or "#12"; empty
// means not given (0). Anything else is a usage error.
func parseNumber(flag, s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	// Base-10 digits only (ParseUint takes no sign), within GitHub's 32-bit
	// numbers.
	n, err := strconv.ParseUint(strings.TrimPrefix(s, "#"), 10, 31)
	if err != nil || n == 0 {
		return 0, usagef("bad %s value %q: want a positive issue or pull request number, e.g. 12 or #12", flag, s)
	}
	return int(n), nil
}

func describeLink(l state.GitHubLink) string {
	var parts []string
	if l.Issue > 0 {
		parts = append(parts, fmt.Sprintf("issue #%d", l.Issue))
	}
	if l.PR > 0 {
		parts = append(parts, fmt.Sprintf("PR #%d", l.PR))
	}
	s := strings.Join(parts, ", ")
	if l.Repo != "" {
		s += " in " + l.Repo
	}
	return s
}
