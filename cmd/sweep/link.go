package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tetherdev/tether/state"
	"github.com/tetherdev/tether/sweep"
)

func cmdLink(a *app, args []string) error {
	fs := a.newFlags("link")
	issueArg := fs.String("issue", "", "the GitHub issue the session works on (12 or #12)")
	prArg := fs.String("pr", "", "its pull request (12 or #12)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("link takes one SESSION")
	}
	issue, err := parseNumber("--issue", *issueArg)
	if err != nil {
		return err
	}
	pr, err := parseNumber("--pr", *prArg)
	if err != nil {
		return err
	}
	if issue == 0 && pr == 0 {
		return usagef("give --issue N, --pr N or both")
	}
	w, err := a.open()
	if err != nil {
		return err
	}
	id, err := w.resolveSession(fs.Arg(0), true)
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
