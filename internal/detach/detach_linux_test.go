package detach

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestStart: a process started detached gets a session of its own, no
// terminal, and none of the descriptors its starter inherited (from an
// agent, which waits for its hook's pipes to close).
func TestStart(t *testing.T) {
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil { // no close-on-exec: as leaked by an agent
		t.Fatal(err)
	}
	defer syscall.Close(p[0])
	defer syscall.Close(p[1])

	cmd := exec.Command("sleep", "60")
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid

	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// After the command name: state ppid pgrp session tty_nr ...
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if f[2] != strconv.Itoa(pid) || f[3] != strconv.Itoa(pid) || f[4] != "0" {
		t.Errorf("pgrp %s, session %s, tty %s; want %d, %d, 0", f[2], f[3], f[4], pid, pid)
	}
	fds, err := readDirNames("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	// The pipe "leaked by the agent" must not reach the child. (The test
	// runner itself may hold other descriptors; only ours are known.)
	leaked := map[string]bool{}
	for _, fd := range p {
		target, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		if err != nil {
			t.Fatal(err)
		}
		leaked[target] = true
	}
	for _, fd := range fds {
		if target, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd); err == nil && leaked[target] {
			t.Errorf("child fd %s is the leaked %s", fd, target)
		}
	}
	for _, fd := range []string{"0", "1", "2"} {
		if target, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd); err != nil || target != os.DevNull {
			t.Errorf("child fd %s -> %q (%v), want %s", fd, target, err, os.DevNull)
		}
	}
}
