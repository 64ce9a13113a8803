package proclive

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

var (
	// ErrNoOwner means the walk found no agent: it reached a session root
	// (init, systemd, sshd, tmux, a terminal), the top of the process tree,
	// or its depth limit. A hook reparented to init after its agent died
	// ends here.
	ErrNoOwner = errors.New("no owner process")

	// ErrChainBroken means the process chain changed under the walk: an
	// ancestor vanished or exited, or a parent PID now names a process that
	// started after its child (the PID was reused). No owner is returned
	// rather than a wrong one.
	ErrChainBroken = errors.New("process chain changed during the walk")
)

// maxDepth bounds the walk; real hook chains are three to six deep.
const maxDepth = 16

// Hints steer ResolveOwner.
type Hints struct {
	// AgentPID is the agent's own PID when it exports one to its hooks
	// (Claude Code: CLAUDE_PID); 0 for none. It is trusted only if it is an
	// ancestor of From below the session roots, where the walk itself would
	// stop: init (CLAUDE_PID=1) is an ancestor of everything, and never an
	// owner.
	AgentPID int
	// From is where the walk starts: the hook's parent. 0 means os.Getppid().
	From int
	// Self is the hook's executable path: processes running it are skipped.
	// "" means os.Executable().
	Self string
	// Dir and Session are the session's working directory and ID, as the
	// agent's payload gives them: when the hook runs under a daemon shared
	// by many sessions, they tell its client (see ErrSharedDaemon).
	Dir, Session string
}

// ResolveOwner finds the process that owns the hook's session: the hinted
// agent when it is an ancestor below the session roots, else the first
// ancestor that is neither a shell running a command, nor a wrapper, nor
// the hook itself. An interactive shell is an owner with Interactive set.
func ResolveOwner(h Hints) (Identity, error) {
	from := h.From
	if from == 0 {
		from = os.Getppid()
	}
	self := h.Self
	if self == "" {
		// Unknown, nothing is skipped by name: the walk starts above the
		// hook anyway.
		self, _ = os.Executable()
	}
	r, err := newReader()
	if err != nil {
		return Identity{}, fmt.Errorf("resolve owner: %w", err)
	}
	p, interactive, err := walk(source{proc: r.proc, argv: r.argv}, from, h.AgentPID, progName(self))
	if errors.Is(err, ErrSharedDaemon) {
		p, err = r.daemonClient(p, h)
	}
	if err == nil && p.pid == from {
		// Parents are always thread-group leaders; only the start of the
		// walk, given by the caller, might name a thread.
		err = r.verifyLeader(p)
	}
	if err != nil {
		return Identity{}, fmt.Errorf("resolve owner from pid %d: %w", from, err)
	}
	id := identify(p)
	id.Interactive = interactive
	return id, nil
}

// daemonClient finds the session's client of a shared daemon among the
// processes running now (see pickClient). The scan of every process costs
// a few milliseconds, paid only under such a daemon.
func (r reader) daemonClient(daemon procInfo, h Hints) (procInfo, error) {
	clients, err := r.clients(daemon)
	if err != nil {
		return procInfo{}, fmt.Errorf("%w: %s (pid %d); its clients could not be listed: %w", ErrSharedDaemon, daemon.name, daemon.pid, err)
	}
	dir := h.Dir
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved // as the kernel names a working directory
	}
	return pickClient(clients, dir, h.Session)
}

// source reads processes for the walk.
type source struct {
	proc func(pid int) (procInfo, error)
	argv func(pid int) ([]string, error)
}

// walk climbs from pid from to the owner. With a hint it first looks for the
// hinted PID among the verified ancestors below the first session root (or
// shared daemon), and falls back to judging them. self is the progName of the hook's
// executable. The bool is Interactive.
func walk(src source, from, hint int, self string) (procInfo, bool, error) {
	var chain []procInfo // verified: each entry is the live parent of the one before
	var stop error       // why the climb ended without an answer
	for pid := from; stop == nil; {
		p, err := climb(src, pid, chain)
		if err != nil {
			stop = err
			continue
		}
		if hint > 0 {
			// Nothing from where the walk without a hint fails (a session
			// root, a shared daemon) up is the hook's agent, whatever the
			// hint says.
			if done, _, err := settle(src, p, self); done && err != nil {
				stop = err
				continue
			}
			if p.pid == hint {
				return p, false, nil
			}
		}
		chain = append(chain, p)
		if hint <= 0 {
			// Without a hint the first owner or root ends the climb.
			if done, interactive, err := settle(src, p, self); done {
				return p, interactive, err
			}
		}
		pid = p.ppid
	}
	if hint > 0 {
		// The hint is not an ancestor: judge the verified chain as if there
		// had been none.
		for _, p := range chain {
			if done, interactive, err := settle(src, p, self); done {
				return p, interactive, err
			}
		}
	}
	return procInfo{}, false, stop
}

// climb reads pid, the parent of the last entry of chain, and verifies that
// it is still that parent.
func climb(src source, pid int, chain []procInfo) (procInfo, error) {
	if len(chain) == maxDepth {
		return procInfo{}, fmt.Errorf("%w within %d ancestors", ErrNoOwner, maxDepth)
	}
	if pid <= 0 {
		return procInfo{}, fmt.Errorf("%w: reached the top of the process tree", ErrNoOwner)
	}
	p, err := src.proc(pid)
	switch {
	case errors.Is(err, errGone):
		return procInfo{}, fmt.Errorf("%w: pid %d vanished", ErrChainBroken, pid)
	case err != nil:
		return procInfo{}, err
	case p.zombie && p.threads <= 1:
		return procInfo{}, fmt.Errorf("%w: pid %d exited", ErrChainBroken, pid)
	case len(chain) > 0 && p.start > chain[len(chain)-1].start:
		// A parent cannot start after its child: the PID was freed and reused.
		return procInfo{}, fmt.Errorf("%w: pid %d started after its child %d (pid reused)",
			ErrChainBroken, pid, chain[len(chain)-1].pid)
	}
	return p, nil
}

// settle judges one verified ancestor: done is true when the walk ends at
// it, as the owner (err nil) or with an error.
func settle(src source, p procInfo, self string) (done, interactive bool, err error) {
	r, err := judge(src, p, self)
	switch {
	case err != nil:
		return true, false, err
	case r == roleRoot:
		return true, false, fmt.Errorf("%w: %s (pid %d) is a session root", ErrNoOwner, p.name, p.pid)
	case r == roleDaemon:
		return true, false, fmt.Errorf("%w: %s (pid %d)", ErrSharedDaemon, p.name, p.pid)
	case r == roleOwner || r == roleInteractive:
		return true, r == roleInteractive, nil
	}
	return false, false, nil
}

// judge classifies p, reading its arguments.
func judge(src source, p procInfo, self string) (role, error) {
	if p.pid == 1 {
		return roleRoot, nil // init, or a container's entry point
	}
	argv, err := src.argv(p.pid)
	if errors.Is(err, errGone) {
		return 0, fmt.Errorf("%w: pid %d vanished", ErrChainBroken, p.pid)
	}
	if err != nil {
		argv = nil // arguments hidden (another user's process): judge by name
	}
	if newProgram(p.name, argv).is(self) {
		return roleSkip, nil
	}
	return classify(p.name, argv), nil
}
