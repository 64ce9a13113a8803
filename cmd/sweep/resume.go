package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetherdev/tether/agent"
	"github.com/tetherdev/tether/conversation"
	"github.com/tetherdev/tether/github"
	"github.com/tetherdev/tether/internal/table"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/snapshot"
	"github.com/tetherdev/tether/state"
	"github.com/tetherdev/tether/sweep"
)

func (a *app) resumeCommand() *cobra.Command {
	var printOnly, fresh, keep bool
	c := &cobra.Command{
		Use:   "resume [SESSION]",
		Short: "list interrupted sessions, or resume one",
		Long: `Without a SESSION, list the sessions worth resuming: interrupted ones, and
ones whose pull request is still open. With one, run the agent's own resume
command in the session's worktree, attached to this terminal; --fresh starts
the agent anew with the interrupted turn's prompt; when that turn left changes
in the worktree, it lists them and stops, so they can be rewound first
(tether-sweep rewind) or kept (--keep-changes).`,
		Example: `  tether-sweep resume
  tether-sweep resume 3f2a9c1e --print
  tether-sweep resume 3f2a9c1e --fresh`,
		GroupID:           "sessions",
		Args:              maxArgs(1, "resume takes at most one SESSION"),
		ValidArgsFunction: a.completeSessions(true),
		RunE: func(_ *cobra.Command, args []string) error {
			if keep && !fresh {
				return usagef("--keep-changes goes with --fresh")
			}
			return a.resume(args, printOnly, fresh, keep)
		},
	}
	c.Flags().BoolVar(&printOnly, "print", false, "print the command instead of running it")
	c.Flags().BoolVar(&fresh, "fresh", false, "start the agent anew with the interrupted turn's prompt")
	c.Flags().BoolVar(&keep, "keep-changes", false, "with --fresh: start on top of what the interrupted turn left in the worktree")
	return c
}

func (a *app) resume(args []string, printOnly, fresh, keep bool) error {
	w, err := a.open()
	if err != nil {
		return err
	}
	if len(args) == 0 {
		if fresh || printOnly {
			return usagef("--print and --fresh need a SESSION")
		}
		return a.listResumable(w)
	}
	id, err := w.resolveSession(args[0], true)
	if err != nil {
		return err
	}
	s, err := w.store.Load(id)
	if err != nil {
		return err
	}
	if s.Phase != state.PhaseEnded && state.OwnerVerdict(s).Liveness == proclive.Alive {
		return fmt.Errorf("session %s is still running (%s)", w.abbrev(id), state.OwnerVerdict(s).Reason)
	}

	var argv []string
	if fresh {
		prompt, err := interruptedPrompt(w, s)
		if err != nil {
			return err
		}
		if !keep && !printOnly {
			if err := a.leftovers(w, s); err != nil {
				return err
			}
		}
		var ok bool
		if argv, ok = agent.FreshCommand(s.Agent, prompt); !ok {
			return fmt.Errorf("no command to start %s; start it yourself in %s with the prompt:\n%s", s.Agent, s.Worktree, prompt)
		}
	} else {
		if reason := resumeBlocked(s); reason != "" {
			if !printOnly { // printing the command is read-only
				if err := markNotResumable(w.store, id, reason); err != nil {
					return err
				}
			}
			return fmt.Errorf("session %s can't be resumed: %s; start afresh with: tether-sweep resume --fresh %s", w.abbrev(id), reason, w.abbrev(id))
		}
		var ok bool
		if argv, ok = agent.ResumeCommand(s.Agent, s.ID); !ok {
			fmt.Fprintln(a.stdout, agent.HowToResume(s.Agent, s.ID))
			return nil
		}
	}

	if printOnly {
		fmt.Fprintf(a.stdout, "cd %s && %s\n", shellQuote(s.Worktree), shellJoin(argv))
		return nil
	}
	return a.runAgent(w, s, argv, !fresh)
}

// agentAskTimeout bounds asking an agent whether it still has a session.
const agentAskTimeout = 30 * time.Second

// resumeBlocked says why the agent's own resume can't work, or "".
func resumeBlocked(s *state.Session) string {
	if !s.Resumable {
		if s.ResumableReason != "" {
			return s.ResumableReason
		}
		return "the agent's session is not resumable"
	}
	if s.AgentDB {
		// The agent keeps the session in its database: ask it.
		ctx, cancel := context.WithTimeout(context.Background(), agentAskTimeout)
		defer cancel()
		if _, err := conversation.Export(ctx, s.Agent, s.ID, s.Worktree); errors.Is(err, conversation.ErrGone) {
			return "the agent no longer has this session"
		}
		return ""
	}
	if s.TranscriptPath == "" {
		return "no transcript was recorded"
	}
	if _, err := os.Stat(s.TranscriptPath); errors.Is(err, fs.ErrNotExist) {
		return "its transcript " + s.TranscriptPath + " no longer exists"
	}
	return ""
}

// markNotResumable clears the resume token so nothing retries it forever.
func markNotResumable(st *state.Store, id, reason string) error {
	_, err := st.Mutate(id, func(s *state.Session) error {
		if !s.Resumable && s.ResumableReason == reason {
			return state.ErrNoChange
		}
		s.Resumable, s.ResumableReason = false, reason
		return nil
	})
	if err != nil {
		return fmt.Errorf("mark session %s not resumable: %w", id, err)
	}
	st.Logger().Info("resume token cleared", "session", id, "reason", reason)
	return nil
}

// interruptedPrompt is the full prompt of the session's last turn.
func interruptedPrompt(w *workspace, s *state.Session) (string, error) {
	recs, _, err := w.store.ReadTurns(s.ID, 0)
	if err != nil {
		return "", fmt.Errorf("read turns of %s: %w", s.ID, err)
	}
	for _, r := range slices.Backward(recs) {
		if r.T == state.RecTurnStart && r.Prompt != "" {
			return r.Prompt, nil
		}
	}
	if s.LastPrompt != "" {
		return s.LastPrompt, nil
	}
	return "", fmt.Errorf("session %s has no prompt to start from", w.abbrev(s.ID))
}

// runAgent runs the agent in the session's worktree, attached to our
// terminal: stdin, stdout and stderr are ours, never pipes, for an agent
// started with a piped stdout runs headless (Gemini CLI then exits, and its
// aborted start destroys the very session it was asked to resume). So
// whether the agent still has the session is judged by what it keeps, not
// by what it prints: a resume that fails after its transcript went away
// clears the token.
func (a *app) runAgent(w *workspace, s *state.Session, argv []string, resuming bool) error {
	if _, err := exec.LookPath(argv[0]); err != nil {
		flag := "--print"
		if !resuming {
			flag = "--fresh --print"
		}
		name := s.Agent
		if info, ok := agent.Lookup(s.Agent); ok {
			name = info.Display
		}
		return fmt.Errorf("%s is not on PATH, so %s can't be started here; to see the command and run it where %s is: tether-sweep resume %s %s", argv[0], name, argv[0], flag, w.abbrev(s.ID))
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.Worktree
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.stdin, a.stdout, a.stderr
	fmt.Fprintf(a.stderr, "tether-sweep: running %s in %s\n", shellJoin(argv), s.Worktree)
	err := cmd.Run()
	if err == nil {
		return nil
	}
	if resuming {
		if reason := resumeBlocked(s); reason != "" {
			if merr := markNotResumable(w.store, s.ID, reason); merr != nil {
				return merr
			}
			return fmt.Errorf("%s no longer has session %s (%s); start afresh with: tether-sweep resume --fresh %s", s.Agent, w.abbrev(s.ID), reason, w.abbrev(s.ID))
		}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return errSilent
	}
	return fmt.Errorf("run %s: %w", argv[0], err)
}

// listResumable shows the sessions worth resuming — interrupted ones, and
// ones whose pull request is still open — newest first.
func (a *app) listResumable(w *workspace) error {
	ended, _, err := w.store.ListEnded()
	if err != nil {
		return fmt.Errorf("list ended sessions: %w", err)
	}
	var rows []*state.Session
	for _, s := range ended {
		// A session ended because its pull request is open still has
		// work to do: review comments, CI fixes.
		prOpen := s.GitHub != nil && s.GitHub.State == github.StatePROpen
		if (s.Interrupted || prOpen) && s.Resumable {
			rows = append(rows, s)
		}
	}
	slices.SortFunc(rows, func(x, y *state.Session) int { return y.EndedAt.Compare(x.EndedAt) })
	if len(rows) == 0 {
		fmt.Fprintln(a.stdout, "no interrupted sessions to resume")
		return nil
	}
	ids := make([]string, len(rows))
	for i, s := range rows {
		ids[i] = s.ID
	}
	short := shortIDs(ids)
	now := time.Now()
	for _, s := range rows {
		why := sessionEnding(s).words()
		fmt.Fprintf(a.stdout, "%s  %-11s  ended %s ago (%s)  %s\n", short[s.ID], s.Agent, age(now.Sub(s.EndedAt)), why, table.Cut(table.Clean(s.LastPrompt), 60))
	}
	fmt.Fprintln(a.stdout, "\nresume one with: tether-sweep resume SESSION   (--print to see the command, --fresh to start over)")
	return nil
}

func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, s := range argv {
		q[i] = shellQuote(s)
	}
	return strings.Join(q, " ")
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// leftovers refuses to start afresh on top of what the interrupted turn
// left in the worktree without saying so: it lists those paths and how to
// rewind them first, or keep them.
func (a *app) leftovers(w *workspace, s *state.Session) error {
	if !s.Interrupted {
		return nil
	}
	r, err := sweep.Rewind(w.repo, w.store, s.ID, 0, false, true)
	var changed *sweep.ChangedSinceError
	var lines []string
	switch {
	case errors.As(err, &changed):
		for _, p := range changed.Paths {
			lines = append(lines, "changed since: "+p)
		}
	case err != nil:
		// No captures to tell by (captures off): nothing to say.
		w.store.Logger().Info("resume --fresh: the interrupted turn's changes are unknown", state.LogKeySession, s.ID, state.LogKeyError, err.Error())
		return nil
	default:
		lines = snapshot.Describe(r.Actions)
	}
	if len(lines) == 0 {
		return nil
	}
	fmt.Fprintf(a.stderr, "the interrupted turn %d of %s left changes in the worktree; rewinding it would:\n", s.Turns, shortID(s.ID))
	for _, l := range lines {
		fmt.Fprintf(a.stderr, "  %s\n", l)
	}
	fmt.Fprintf(a.stderr, "rewind them first: tether-sweep rewind %s, then resume --fresh again;\nor start on top of them: tether-sweep resume --fresh --keep-changes %s\n", shortID(s.ID), shortID(s.ID))
	return errSilent
}
