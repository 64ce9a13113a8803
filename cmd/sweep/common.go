package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tetherdev/tether/agent"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/internal/table"
	"github.com/tetherdev/tether/state"
)

// noArgs, exactArgs and maxArgs check a command's arguments; what they
// refuse is a usage error (exit 2), in the command's own words.
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	return nil
}

func exactArgs(n int, msg string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{msg}
		}
		return nil
	}
}

func maxArgs(n int, msg string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > n {
			return usageError{msg}
		}
		return nil
	}
}

// workspace is the repository and store a command works on.
type workspace struct {
	repo  gitdir.Repo
	store *state.Store
}

// open finds the repository from the working directory and opens its store.
func (a *app) open() (*workspace, error) {
	repo, err := gitdir.FindEnv(a.dir, a.getenv)
	if err != nil {
		if errors.Is(err, gitdir.ErrNotRepo) {
			return nil, fmt.Errorf("not a git repository: %s", a.dir)
		}
		return nil, err
	}
	st, err := state.Open(repo.CommonDir, state.Options{Apply: agent.ApplySpooled})
	if err != nil {
		return nil, fmt.Errorf("open tether store: %w", err)
	}
	return &workspace{repo: repo, store: st}, nil
}

// openSession resolves a SESSION argument (see resolveSession) in the
// repository of the working directory, else, outside a repository or when
// it names no session there, in every store of the registry (status
// --all-repos shows them all): it works from any directory.
func (a *app) openSession(arg string, includeEnded bool) (*workspace, string, error) {
	w, id, err := a.findSession(arg, includeEnded)
	if err == nil {
		// Its spooled events go into its turn log, which the commands read;
		// busy, the session reads as it will be all the same (Load).
		_, _ = w.store.DrainSpool(id)
	}
	return w, id, err
}

// findSession is openSession's search.
func (a *app) findSession(arg string, includeEnded bool) (*workspace, string, error) {
	w, err := a.open()
	if err == nil {
		id, err := w.resolveSession(arg, includeEnded)
		if !errors.Is(err, errUnknownSession) {
			return w, id, err
		}
	}
	var found []*workspace
	var ids []string
	for _, o := range a.registered(w) {
		if id, err := o.resolveSession(arg, includeEnded); err == nil {
			found, ids = append(found, o), append(ids, id)
		} else if !errors.Is(err, errUnknownSession) {
			return nil, "", err
		}
	}
	switch {
	case len(found) == 1:
		return found[0], ids[0], nil
	case len(found) > 1:
		var where []string
		for i, o := range found {
			where = append(where, ids[i]+" ("+a.repoName(o.repo.CommonDir)+")")
		}
		return nil, "", fmt.Errorf("session prefix %q is ambiguous: %s", arg, strings.Join(where, ", "))
	case err != nil && w == nil:
		return nil, "", fmt.Errorf("%w, and no repository of this machine has a session %q", err, arg)
	}
	return nil, "", fmt.Errorf("%w %q", errUnknownSession, arg)
}

// errUnknownSession: no session has that ID or prefix.
var errUnknownSession = errors.New("unknown session")

// minPrefix is the shortest prefix that names a session: shorter ones
// would match by accident.
const minPrefix = 4

// resolveSession turns a full ID or a unique prefix of at least minPrefix
// characters into a session ID, looking at live sessions first.
func (w *workspace) resolveSession(arg string, includeEnded bool) (string, error) {
	if err := state.ValidateID(arg); err != nil {
		return "", usageError{fmt.Sprintf("bad session ID %q: %v", arg, err)}
	}
	if _, err := w.store.Load(arg); err == nil {
		return arg, nil
	} else if !errors.Is(err, state.ErrNotFound) {
		return "", err
	}
	if len(arg) < minPrefix {
		return "", usageError{fmt.Sprintf("session %q: give at least %d characters of a session's ID (tether-sweep status lists them)", arg, minPrefix)}
	}
	var matches []string
	collect := func(ss []*state.Session) {
		for _, s := range ss {
			if strings.HasPrefix(s.ID, arg) {
				matches = append(matches, s.ID)
			}
		}
	}
	live, _, err := w.store.List()
	if err != nil {
		return "", err
	}
	collect(live)
	if includeEnded {
		ended, _, err := w.store.ListEnded()
		if err != nil {
			return "", err
		}
		collect(ended)
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("%w %q", errUnknownSession, arg)
	case 1:
		return matches[0], nil
	default:
		return "", fmt.Errorf("session prefix %q is ambiguous: %s", arg, strings.Join(matches, ", "))
	}
}

// terminal is what status needs to know of where its output goes.
type terminal struct {
	width int  // columns to fit in; 0: no limit
	color bool // colour the words that matter
}

// terminal: colour on a terminal unless NO_COLOR is set; the width of the
// terminal, or COLUMNS when set (for a pipe to a pager, and for tests).
func (a *app) terminal() terminal {
	var t terminal
	if f, ok := a.stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		t.color = a.getenv("NO_COLOR") == ""
		if w, _, err := term.GetSize(int(f.Fd())); err == nil {
			t.width = w
		}
	}
	if n, err := strconv.Atoi(a.getenv("COLUMNS")); err == nil && n > 0 {
		t.width = n
	}
	return t
}

// abbrev abbreviates one session's ID as resolveSession will read it back:
// 8 characters, or as many more as it takes to tell it from every other
// session of the store, live or ended (OpenCode's IDs share long
// prefixes). It is for the commands tether-sweep suggests, which must name
// that one session.
func (w *workspace) abbrev(id string) string {
	ids, err := w.store.IDs()
	if err != nil {
		return id // unsure: the whole ID is always right
	}
	return shortIDs(append(ids, id))[id]
}

// shortIDs abbreviates the IDs of a listing as git abbreviates hashes: 8
// characters, or as many more as it takes to tell each from the others.
func shortIDs(ids []string) map[string]string {
	sorted := slices.Sorted(slices.Values(ids))
	sorted = slices.Compact(sorted)
	out := make(map[string]string, len(sorted))
	for i, id := range sorted {
		n := 8
		for _, j := range []int{i - 1, i + 1} {
			if j >= 0 && j < len(sorted) {
				n = max(n, commonPrefix(id, sorted[j])+1)
			}
		}
		out[id] = id[:min(n, len(id))]
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// count says how many of a thing: "1 turn", "2 turns".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// ago is how long ago something happened, for people.
func ago(d time.Duration) string {
	if d < 10*time.Second {
		return "just now"
	}
	return age(d) + " ago"
}

// age renders a duration the way people read it in a table.
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

// completeSessions completes a SESSION argument with the IDs of the
// sessions that have not ended, and with withEnded the ended ones too.
func (a *app) completeSessions(withEnded bool) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		w, err := a.open()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		add := func(ss []*state.Session) {
			for _, s := range ss {
				if strings.HasPrefix(s.ID, prefix) {
					desc := s.Agent + ", " + string(s.Phase)
					if s.LastPrompt != "" {
						desc += ": " + table.Cut(table.Clean(s.LastPrompt), 40)
					}
					out = append(out, cobra.CompletionWithDesc(s.ID, desc))
				}
			}
		}
		live, _, _ := w.store.List()
		add(live)
		if withEnded {
			ended, _, _ := w.store.ListEnded()
			add(ended)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
