package proclive

import (
	"errors"
	"fmt"
	"testing"
)

// fakeProc is one process of a table-driven process tree.
type fakeProc struct {
	procInfo
	argv    []string
	argvErr error
}

// tree serves procs as a source; a PID it lacks is gone.
func tree(procs ...fakeProc) source {
	m := make(map[int]fakeProc, len(procs))
	for _, p := range procs {
		m[p.pid] = p
	}
	return source{
		proc: func(pid int) (procInfo, error) {
			p, ok := m[pid]
			if !ok {
				return procInfo{}, fmt.Errorf("pid %d: %w", pid, errGone)
			}
			return p.procInfo, nil
		},
		argv: func(pid int) ([]string, error) {
			p, ok := m[pid]
			if !ok {
				return nil, fmt.Errorf("pid %d: %w", pid, errGone)
			}
			return p.argv, p.argvErr
		},
	}
}

func fp(pid, ppid int, start uint64, name string, argv ...string) fakeProc {
	return fakeProc{procInfo: procInfo{pid: pid, ppid: ppid, start: start, name: name, threads: 1}, argv: argv}
}

func TestWalk(t *testing.T) {
	initProc := fp(1, 0, 1, "systemd", "/sbin/init")
	sshd := fp(700, 1, 10, "sshd", "sshd: dev@pts/0")
	login := fp(800, 700, 20, "bash", "-bash")
	claude := fp(900, 800, 30, "claude", "claude")
	sh := fp(910, 900, 40, "sh", "/bin/sh", "-c", "tether-hook claude-code")
	node := fp(905, 900, 35, "node", "node", "/opt/gemini/cli.js")
	shUnderNode := fp(910, 905, 40, "sh", "/bin/sh", "-c", "tether-hook claude-code")
	selfProc := fp(920, 910, 50, "tether-hook", "/usr/local/bin/tether-hook", "claude-code")
	reused := fp(900, 800, 45, "vim", "vim") // pid 900 again, started after its child sh
	zombie := claude
	zombie.zombie = true
	zombieLeader := claude
	zombieLeader.zombie, zombieLeader.threads = true, 3
	hidden := claude
	hidden.argv, hidden.argvErr = nil, errors.New("permission denied")

	// A chain longer than maxDepth of skipped shells.
	var deep []fakeProc
	for i := 0; i <= maxDepth; i++ {
		deep = append(deep, fp(2000+i, 2001+i, uint64(1000-i), "sh", "sh", "-c", "x"))
	}

	tests := []struct {
		name        string
		src         source
		from, hint  int
		wantPID     int
		interactive bool
		wantErr     error
	}{
		{"agent, sh -c, hook", tree(initProc, sshd, login, claude, sh), 910, 0, 900, false, nil},
		{"hook's own process is skipped", tree(initProc, sshd, login, claude, sh, selfProc), 920, 0, 900, false, nil},
		{"interactive login shell owns", tree(initProc, sshd, login, fp(910, 800, 40, "sh", "sh", "-c", "x")), 910, 0, 800, true, nil},
		{"root above wrappers", tree(initProc, fp(910, 1, 40, "sh", "sh", "-c", "x")), 910, 0, 0, false, ErrNoOwner},
		{"sshd is a root", tree(initProc, sshd, fp(910, 700, 40, "sh", "sh", "-c", "x")), 910, 0, 0, false, ErrNoOwner},
		{"top of the tree", tree(fp(910, 0, 40, "sh", "sh", "-c", "x")), 910, 0, 0, false, ErrNoOwner},
		{"start of the walk gone", tree(initProc), 910, 0, 0, false, ErrChainBroken},
		{"parent vanished", tree(sh), 910, 0, 0, false, ErrChainBroken},
		{"parent pid reused", tree(initProc, sshd, login, reused, sh), 910, 0, 0, false, ErrChainBroken},
		{"parent exited, not yet reaped", tree(initProc, sshd, login, zombie, sh), 910, 0, 0, false, ErrChainBroken},
		{"zombie leader with live threads owns", tree(initProc, sshd, login, zombieLeader, sh), 910, 0, 900, false, nil},
		{"hidden argv judged by name", tree(initProc, sshd, login, hidden, sh), 910, 0, 900, false, nil},
		{"too deep", tree(deep...), 2000, 0, 0, false, ErrNoOwner},

		{"hint is an ancestor above another owner", tree(initProc, sshd, login, claude, node, shUnderNode), 910, 900, 900, false, nil},
		{"hint is the start", tree(initProc, sshd, login, claude, sh), 900, 900, 900, false, nil},
		{"hint is init (CLAUDE_PID=1)", tree(initProc, fp(910, 1, 40, "sh", "sh", "-c", "x")), 910, 1, 0, false, ErrNoOwner},
		{"hint is init, an agent below", tree(initProc, fp(900, 1, 30, "claude", "claude"), fp(910, 900, 40, "sh", "sh", "-c", "x")), 910, 1, 900, false, nil},
		{"hint is a session root", tree(initProc, sshd, login, claude, sh), 910, 700, 900, false, nil},
		{"hint above a session root", tree(fp(1, 0, 1, "systemd", "/sbin/init"), fp(500, 1, 5, "claude", "claude"),
			fp(600, 500, 6, "tmux", "tmux: server"), fp(910, 600, 40, "sh", "sh", "-c", "x")), 910, 500, 0, false, ErrNoOwner},
		{"hint not an ancestor", tree(initProc, sshd, login, claude, node, shUnderNode), 910, 4321, 905, false, nil},
		{"hint not an ancestor, root", tree(initProc, fp(910, 1, 40, "sh", "sh", "-c", "x")), 910, 4321, 0, false, ErrNoOwner},
		{"hint beyond a broken link, owner below it", tree(claude, sh), 910, 4321, 900, false, nil},
		{"hint beyond a broken link, no owner below", tree(sh), 910, 4321, 0, false, ErrChainBroken},
		{"hint beyond reuse, owner below it", tree(initProc, sshd, fp(800, 700, 99, "bash", "bash"), claude, sh), 910, 4321, 900, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, interactive, err := walk(tt.src, tt.from, tt.hint, "tether-hook")
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("walk = pid %d, %v; want error %v", p.pid, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("walk: %v", err)
			}
			if p.pid != tt.wantPID {
				t.Errorf("walk = pid %d (%s), want %d", p.pid, p.name, tt.wantPID)
			}
			if interactive != tt.interactive {
				t.Errorf("interactive = %v, want %v", interactive, tt.interactive)
			}
		})
	}
}

// TestWalkErrorsAreDistinct: callers tell "no agent here" from "the chain
// moved under us".
func TestWalkErrorsAreDistinct(t *testing.T) {
	_, _, noOwner := walk(tree(fp(1, 0, 1, "init", "init"), fp(10, 1, 5, "sh", "sh", "-c", "x")), 10, 0, "")
	_, _, broken := walk(tree(fp(10, 9, 5, "sh", "sh", "-c", "x")), 10, 0, "")
	if !errors.Is(noOwner, ErrNoOwner) || errors.Is(noOwner, ErrChainBroken) {
		t.Errorf("root: %v", noOwner)
	}
	if !errors.Is(broken, ErrChainBroken) || errors.Is(broken, ErrNoOwner) {
		t.Errorf("vanished parent: %v", broken)
	}
}
