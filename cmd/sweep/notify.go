package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tetherdev/tether/agent"
	"github.com/tetherdev/tether/internal/detach"
	"github.com/tetherdev/tether/state"
	"github.com/tetherdev/tether/sweep"
)

// notifyWait bounds how long a notification's command may run.
const notifyWait = 30 * time.Second

// notification is what tether.notify's command gets on stdin: the change
// as status --watch --json reports it, and the command that takes the
// user there.
type notification struct {
	watchChange
	Command string `json:"command"`
}

// notifyCommand is `tether-sweep notify CHANGE SESSION`, which tether-hook
// and the sweep start detached: it runs what git config tether.notify
// says for a session that began to wait, finished a turn, or ended with
// its turn cut short. Not for people: hidden from the help.
func (a *app) notifyCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "notify CHANGE SESSION",
		Short:  "tell the user of a change, as git config tether.notify says",
		Hidden: true,
		Args:   exactArgs(2, "notify takes a CHANGE (waiting, turn, ended) and a SESSION"),
		RunE: func(_ *cobra.Command, args []string) error {
			switch args[0] {
			case changeWaiting, changeTurn, changeEnded:
			default:
				return usagef("unknown change %q (waiting, turn or ended)", args[0])
			}
			w, err := a.open()
			if err != nil {
				return err
			}
			if err := state.ValidateID(args[1]); err != nil {
				return usagef("bad session ID %q: %v", args[1], err)
			}
			s, err := a.notifiedSession(w, args[1])
			if err != nil {
				return err
			}
			return a.runNotify(w, args[0], s)
		},
	}
}

// notifiedSession is the session as the hook saw it at the change, which
// it passes on stdin (the session may have moved on since), else as it is
// stored.
func (a *app) notifiedSession(w *workspace, id string) (*state.Session, error) {
	if f, ok := a.stdin.(*os.File); a.stdin != nil && !(ok && term.IsTerminal(int(f.Fd()))) {
		if data, err := io.ReadAll(io.LimitReader(a.stdin, 4<<20)); err == nil && len(bytes.TrimSpace(data)) > 0 {
			var s state.Session
			if err := s.UnmarshalJSON(data); err == nil && s.ID == id {
				return &s, nil
			}
		}
	}
	return w.store.Load(id)
}

// notifyEnded starts, detached, the notification of each session the sweep
// ended with its turn cut short, when tether.notify asks for any.
func (a *app) notifyEnded(w *workspace, rep *sweep.Report) {
	if strings.TrimSpace(a.gitConfig(w.repo, "notify")) == "" {
		return
	}
	for _, t := range rep.Finalized {
		if t.Reason != state.EndInterrupted {
			continue
		}
		if err := startNotify(w, changeEnded, t.ID); err != nil {
			w.store.Logger().Warn("notify: start", state.LogKeySession, t.ID, state.LogKeyError, err.Error())
		}
	}
}

// startNotify runs `tether-sweep notify CHANGE SESSION` detached, in w's
// work tree: the sweep, run by a commit, waits for none of it.
func startNotify(w *workspace, change, id string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "notify", change, id)
	cmd.Dir = repoPath(w.repo.CommonDir)
	if w.repo.WorkTree != "" {
		cmd.Dir = w.repo.WorkTree
	}
	if err := detach.Start(cmd); err != nil {
		return err
	}
	w.store.Logger().Info("notify started", state.LogKeySession, id, "change", change, "pid", cmd.Process.Pid)
	return cmd.Process.Release()
}

// runNotify tells the user of change to session s as tether.notify says:
// "desktop" is the platform's own notification, anything else a shell
// command that reads the change as JSON on stdin. A failure is logged.
func (a *app) runNotify(w *workspace, change string, s *state.Session) error {
	how := strings.TrimSpace(a.gitConfig(w.repo, "notify"))
	if how == "" {
		return nil
	}
	n := notification{watchChange: watchChange{Change: change, Session: sweep.MakeRow(s, state.OwnerVerdict(s))}}
	n.Session.Repo = repoPath(w.repo.CommonDir)
	n.Command = goThere(n.Session, w.abbrev(s.ID))
	var err error
	if how == "desktop" {
		err = desktopNotify(a.notifyTitle(n), a.notifyBody(n))
	} else {
		err = notifyCommandRun(how, n)
	}
	if err != nil {
		w.store.Logger().Warn("notify failed", state.LogKeySession, s.ID, "change", change, state.LogKeyError, err.Error())
		return err
	}
	return nil
}

// notifyCommandRun runs the user's command through the shell, the
// notification as JSON on its stdin, for notifyWait at most.
func notifyCommandRun(command string, n notification) error {
	var in bytes.Buffer
	if err := writeJSONLine(&in, n); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), notifyWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	if runtime.GOOS == "windows" {
		cmd = exec.CommandContext(ctx, "cmd", "/C", command)
	}
	cmd.Stdin = &in
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("tether.notify %q: %v: %s", command, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// goThere is the command that takes the user to a session: its resume
// command once it has ended, else where it runs.
func goThere(r sweep.Row, short string) string {
	if r.Phase == string(state.PhaseEnded) {
		return fmt.Sprintf("cd %s && tether-sweep resume %s", shellQuote(r.Worktree), short)
	}
	return fmt.Sprintf("cd %s && tether-sweep status %s", shellQuote(r.Worktree), short)
}

// notifyTitle says which agent, where and what happened.
func (a *app) notifyTitle(n notification) string {
	name := n.Session.Agent
	if info, ok := agent.Lookup(name); ok {
		name = info.Display
	}
	repo := a.tilde(n.Session.Repo)
	switch n.Change {
	case changeWaiting:
		return fmt.Sprintf("%s waits for you in %s", name, repo)
	case changeTurn:
		return fmt.Sprintf("%s finished a turn in %s", name, repo)
	}
	return fmt.Sprintf("%s died mid-turn in %s", name, repo)
}

// notifyBody says why, and the command that goes there.
func (a *app) notifyBody(n notification) string {
	why := n.Session.LastPrompt
	if w := n.Session.Waiting; w != nil {
		why = waitsFor(w)
	}
	return strings.TrimSpace(why + "\n" + n.Command)
}

// desktopNotify shows a notification with the platform's own mechanism:
// notify-send (or D-Bus through gdbus) on Linux and the BSDs, the
// notification center through osascript on macOS.
func desktopNotify(title, body string) error {
	ctx, cancel := context.WithTimeout(context.Background(), notifyWait)
	defer cancel()
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		script := fmt.Sprintf("display notification %s with title %s", appleString(body), appleString(title))
		cmd = exec.CommandContext(ctx, "osascript", "-e", script)
	case "windows":
		return fmt.Errorf("tether.notify desktop: not available on Windows; give a command instead")
	default:
		if path, err := exec.LookPath("notify-send"); err == nil {
			cmd = exec.CommandContext(ctx, path, "--app-name=tether", title, body)
		} else if path, err := exec.LookPath("gdbus"); err == nil {
			cmd = exec.CommandContext(ctx, path, "call", "--session", "--dest=org.freedesktop.Notifications",
				"--object-path=/org/freedesktop/Notifications", "--method=org.freedesktop.Notifications.Notify",
				"tether", "0", "", title, body, "[]", "{}", "-1")
		} else {
			return fmt.Errorf("tether.notify desktop: neither notify-send nor gdbus is installed")
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", cmd.Path, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// appleString quotes s for AppleScript.
func appleString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
