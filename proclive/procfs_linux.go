package proclive

import (
	"bytes"
	"errors"
	"fmt"
)

// statFields are the /proc/<pid>/stat fields proclive uses.
type statFields struct {
	pid     int
	comm    string
	state   byte
	ppid    int
	threads int
	start   uint64 // field 22: clock ticks after boot, as the reader's time namespace sees it
}

// Fields after the command name, counted from field 3 (state) as index 0.
const (
	statState   = 0  // field 3
	statPPID    = 1  // field 4
	statThreads = 17 // field 20, num_threads
	statStart   = 19 // field 22, starttime
)

// parseStat parses one /proc/<pid>/stat line. The command name may hold any
// byte but NUL — spaces, parentheses, newlines — so it runs from the first
// '(' to the last ')', and the numbered fields are counted after that.
func parseStat(b []byte) (statFields, error) {
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return statFields{}, errors.New("stat: no parenthesized command name")
	}
	if open < 2 || b[open-1] != ' ' {
		return statFields{}, errors.New("stat: no pid before the command name")
	}
	pid, ok := parseDecimal(b[:open-1])
	if !ok || pid == 0 || pid > 1<<31-1 {
		return statFields{}, fmt.Errorf("stat: bad pid %q", b[:open-1])
	}
	st := statFields{pid: int(pid), comm: string(b[open+1 : closing])}

	rest := bytes.TrimSuffix(b[closing+1:], []byte{'\n'})
	for i := 0; i <= statStart; i++ {
		if len(rest) == 0 || rest[0] != ' ' {
			return statFields{}, fmt.Errorf("stat: %d fields after the command name, want at least %d", i, statStart+1)
		}
		rest = rest[1:]
		end := bytes.IndexByte(rest, ' ')
		if end < 0 {
			end = len(rest)
		}
		field := rest[:end]
		rest = rest[end:]
		switch i {
		case statState:
			if len(field) != 1 || field[0] < 'A' || field[0] > 'z' {
				return statFields{}, fmt.Errorf("stat: bad state %q", field)
			}
			st.state = field[0]
		case statPPID, statThreads, statStart:
			v, ok := parseDecimal(field)
			if !ok {
				return statFields{}, fmt.Errorf("stat: field %d is %q, not a number", i+3, field)
			}
			switch i {
			case statPPID:
				if v > 1<<31-1 {
					return statFields{}, fmt.Errorf("stat: bad ppid %d", v)
				}
				st.ppid = int(v)
			case statThreads:
				if v > 1<<31-1 {
					return statFields{}, fmt.Errorf("stat: bad thread count %d", v)
				}
				st.threads = int(v)
			default:
				st.start = v
			}
		}
	}
	return st, nil
}

// parseDecimal parses an unsigned decimal number without allocating.
func parseDecimal(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// parseTimensBoottime returns the boottime offset, in nanoseconds, listed in
// /proc/self/timens_offsets: lines of "<clock> <seconds> <nanoseconds>",
// the clock named ("boottime") or numbered (7, CLOCK_BOOTTIME).
func parseTimensBoottime(b []byte) (int64, error) {
	for line := range bytes.Lines(b) {
		f := bytes.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return 0, fmt.Errorf("timens_offsets: bad line %q", line)
		}
		if clock := string(f[0]); clock != "boottime" && clock != "7" {
			continue
		}
		neg := bytes.HasPrefix(f[1], []byte{'-'})
		sec, ok := parseDecimal(bytes.TrimPrefix(f[1], []byte{'-'}))
		const maxSec = (1<<63 - 1) / 1_000_000_000
		if !ok || sec > maxSec-1 {
			return 0, fmt.Errorf("timens_offsets: bad seconds %q", f[1])
		}
		nsec, ok := parseDecimal(f[2])
		if !ok || nsec >= 1e9 {
			return 0, fmt.Errorf("timens_offsets: bad nanoseconds %q", f[2])
		}
		// A normalized timespec: negative offsets have negative seconds and
		// nanoseconds in [0, 1e9).
		s := int64(sec)
		if neg {
			s = -s
		}
		return s*1e9 + int64(nsec), nil
	}
	return 0, errors.New("timens_offsets: no boottime line")
}

// parseStatusTgid returns the Tgid line of /proc/<pid>/status.
func parseStatusTgid(b []byte) (int, error) {
	for line := range bytes.Lines(b) {
		v, ok := bytes.CutPrefix(line, []byte("Tgid:"))
		if !ok {
			continue
		}
		tgid, ok := parseDecimal(bytes.TrimSpace(v))
		if !ok || tgid == 0 || tgid > 1<<31-1 {
			return 0, fmt.Errorf("status: bad Tgid %q", bytes.TrimSpace(v))
		}
		return int(tgid), nil
	}
	return 0, errors.New("status: no Tgid line")
}
