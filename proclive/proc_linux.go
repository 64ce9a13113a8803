package proclive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// nsPerTick converts nanoseconds to the clock ticks of /proc/<pid>/stat.
// USER_HZ is 100 on every architecture Go supports.
const nsPerTick = 1e9 / 100

// reader reads processes through /proc.
type reader struct {
	// bootOffset is the reader's time-namespace boottime offset in ticks.
	// The kernel adds it to field 22 for readers in the namespace, so
	// subtracting it gives every reader the same fingerprint. Offsets that
	// are not whole ticks (10 ms) can leave a one-tick difference between
	// readers in different namespaces; unshare and container runtimes set
	// whole seconds. (/proc/self/timens_offsets shows the namespace of the
	// process's future children: its own, unless it unshared CLONE_NEWTIME
	// without entering the new namespace.)
	bootOffset int64
}

// The time-namespace offset, the boot ID and the PID namespace are the
// same for every process a sweep checks: each is read once per process
// (a sweep checks two owners per session it finalizes).
var (
	readerOnce  = sync.OnceValues(readReader)
	machineOnce = sync.OnceValues(readMachine)
)

func newReader() (reader, error) { return readerOnce() }

func readReader() (reader, error) {
	var buf [256]byte
	b, err := readOnce("/proc/self/timens_offsets", buf[:])
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return reader{}, nil // a kernel without time namespaces (before 5.6): no offset
	case err != nil:
		return reader{}, fmt.Errorf("read time namespace offsets: %w", err)
	}
	ns, err := parseTimensBoottime(b)
	if err != nil {
		return reader{}, fmt.Errorf("read time namespace offsets: %w", err)
	}
	ticks := ns / nsPerTick
	if ns%nsPerTick < 0 {
		ticks-- // floor, as the kernel's division of the shifted time does
	}
	return reader{bootOffset: ticks}, nil
}

func (r reader) proc(pid int) (procInfo, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	// 52 numeric fields and a 15-byte name fit well within this.
	var buf [2048]byte
	b, err := readOnce(path, buf[:])
	switch {
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH):
		return procInfo{}, absent(pid)
	case err != nil:
		return procInfo{}, fmt.Errorf("read %s: %w", path, err)
	case len(b) == len(buf):
		return procInfo{}, fmt.Errorf("read %s: longer than %d bytes", path, len(buf))
	}
	st, err := parseStat(b)
	if err != nil {
		return procInfo{}, fmt.Errorf("read %s: %w", path, err)
	}
	if st.pid != pid {
		return procInfo{}, fmt.Errorf("read %s: names pid %d", path, st.pid)
	}
	start := int64(st.start) - r.bootOffset
	if st.start > 1<<63-1 || start < 0 {
		return procInfo{}, fmt.Errorf("read %s: start time %d before boot with offset %d", path, st.start, r.bootOffset)
	}
	return procInfo{
		pid:     pid,
		ppid:    st.ppid,
		start:   uint64(start),
		name:    st.comm,
		zombie:  st.state == 'Z' || st.state == 'X',
		threads: st.threads,
	}, nil
}

// readOnce reads the start of a /proc file into buf with a single read(2).
// A seq_file fills one read whole, so a stat line is consistent, never
// spliced from two states of the process; and open, read, close is half
// the system calls of os.ReadFile, which matters on the hook's path.
func readOnce(path string, buf []byte) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Read(fd, buf)
		if err != unix.EINTR {
			return buf[:max(n, 0)], err
		}
	}
}

func (reader) argv(pid int) ([]string, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/cmdline"
	var buf [4096]byte
	b, err := readOnce(path, buf[:])
	if err == nil && len(b) == len(buf) {
		b, err = os.ReadFile(path) // a long command line: read it all
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH) {
		return nil, fmt.Errorf("pid %d: %w", pid, errGone)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return splitNUL(b), nil
}

// verifyLeader refuses a thread ID: /proc/<tid>/stat exists for every
// thread and looks like a process. Only a process with several threads can
// be named by a thread ID, so single-threaded ones skip the status read.
func (reader) verifyLeader(p procInfo) error {
	if p.threads <= 1 {
		return nil
	}
	path := "/proc/" + strconv.Itoa(p.pid) + "/status"
	var buf [1024]byte // Tgid is the fourth line
	b, err := readOnce(path, buf[:])
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	tgid, err := parseStatusTgid(b)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if tgid != p.pid {
		return fmt.Errorf("pid %d is a thread of process %d", p.pid, tgid)
	}
	return nil
}

// machine returns this machine's boot ID and the checker's PID namespace,
// each empty when unreadable.
func machine() (boot, pidns string) { return machineOnce() }

func readMachine() (boot, pidns string) {
	var buf [64]byte
	if b, err := readOnce("/proc/sys/kernel/random/boot_id", buf[:]); err == nil {
		boot = strings.TrimSpace(string(b))
	}
	if ns, err := os.Readlink("/proc/self/ns/pid"); err == nil {
		pidns = ns
	}
	return boot, pidns
}
