package proclive

import (
	"os"
	"strconv"
)

// clients lists the processes named like the daemon (Codex TUIs run the
// same binary) other than the daemon, with their argv and working
// directory. Processes that vanish or cannot be read (another user's) are
// left out.
func (r reader) clients(daemon procInfo) ([]client, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []client
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == daemon.pid {
			continue
		}
		p, err := r.proc(pid)
		if err != nil || p.zombie || progName(p.name) != progName(daemon.name) {
			continue
		}
		argv, err := r.argv(pid)
		if err != nil {
			continue
		}
		cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd")
		if err != nil {
			continue
		}
		out = append(out, client{proc: p, argv: argv, cwd: cwd})
	}
	return out, nil
}
