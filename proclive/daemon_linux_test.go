package proclive

import (
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestCodexDaemonClient plays Codex's TUI in its default mode (recorded in
// agent/testdata/recorded/codex/process_chain.json): the hook's parent is
// the shared app-server daemon, which outlives every TUI. The owner is the
// session's TUI, or nobody, never the daemon.
func TestCodexDaemonClient(t *testing.T) {
	project := t.TempDir()
	other := t.TempDir()
	const session = "01a209fb-b677-70f0-95eb-452fcfa41fc8"
	// tui starts a Codex TUI stand-in working in dir.
	tui := func(dir string, args ...string) int {
		argv := append([]string{"sh", "-c", `cd "$0" && exec "$@"`, dir, standin(t, "codex")}, args...)
		pid, _ := start(t, nil, append(argv, "standin:block")...).ready(t)
		return pid
	}
	// underDaemon runs the hook under a daemon stand-in and returns what
	// it found.
	underDaemon := func(dir, id string) hookResult {
		h := newHookRun(t)
		start(t, h.env("HOOK_DIR="+dir, "HOOK_SESSION="+id),
			standin(t, "codex"), "app-server", "--listen", "unix://", "--analytics-default-enabled", "--managed-daemon",
			"standin:agent", "sh", "-c", h.hook()+"; true")
		h.waitReady()
		return h.result()
	}
	expectNone := func(res hookResult, why string) {
		t.Helper()
		if res.Owner != nil || !res.Daemon {
			t.Errorf("%s: owner %+v (%s); want none, under the shared daemon", why, res.Owner, res.Error)
		}
	}

	expectNone(underDaemon(project, session), "no TUI at all")

	// Other clients: one elsewhere, and Codex runs that use no daemon.
	tui(other)
	tui(project, "exec", "--json", "say hi")
	tui(project, "--no-daemon")
	expectNone(underDaemon(project, session), "no TUI in the project")

	mine := tui(project)
	res := underDaemon(project, session)
	if res.Owner == nil || res.Owner.PID != mine || res.Owner.Name != "codex" {
		t.Fatalf("owner %+v (%s), want the TUI in the project, pid %d", res.Owner, res.Error, mine)
	}
	if v := Check(*res.Owner); v.Liveness != Alive {
		t.Errorf("the TUI's liveness: %v", v)
	}
	// A TUI killed with -9: its session's owner is dead, though the
	// daemon lives on.
	if err := syscall.Kill(mine, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the TUI to die", func() bool { return Check(*res.Owner).Liveness == Dead })

	// Two TUIs in the project: the one resuming the session by its ID, or
	// nobody.
	tui(project)
	tui(project)
	expectNone(underDaemon(project, session), "two TUIs in the project")
	resumed := tui(project, "resume", session)
	if res := underDaemon(project, session); res.Owner == nil || res.Owner.PID != resumed {
		t.Errorf("owner %+v (%s), want the TUI resuming %s, pid %d", res.Owner, res.Error, session, resumed)
	}
	// The project named through a symlink is the same directory.
	link := filepath.Join(t.TempDir(), "link")
	if err := syscall.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	if res := underDaemon(link, "another-"+strconv.Itoa(resumed)); res.Owner == nil || res.Owner.Name != "codex" {
		t.Errorf("through a symlink: owner %+v (%s), want the TUI in %s", res.Owner, res.Error, other)
	}
}

func TestIsSharedDaemon(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want bool
	}{
		{[]string{"/home/dev/.codex/packages/app-server-daemon/releases/0.169.0/bin/codex", "app-server", "--listen", "unix://", "--analytics-default-enabled", "--managed-daemon"}, true},
		{[]string{"codex", "app-server", "--listen=unix:///tmp/s"}, true},
		{[]string{"codex", "app-server", "--listen", "ws://127.0.0.1:4500"}, true},
		{[]string{"codex", "app-server"}, false}, // an editor's, on stdio
		{[]string{"codex", "app-server", "--listen", "stdio://"}, false},
		{[]string{"codex", "exec", "--json", "say hi"}, false},
		{[]string{"codex"}, false},
		{[]string{"claude", "app-server", "--managed-daemon"}, false},
	} {
		p := newProgram("codex", tc.argv)
		if got := classify("codex", tc.argv) == roleDaemon; got != tc.want || isSharedDaemon(p, tc.argv[1:]) != tc.want {
			t.Errorf("%q: shared daemon %v, want %v", tc.argv, got, tc.want)
		}
	}
}
