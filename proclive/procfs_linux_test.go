package proclive

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// statLine formats a /proc/<pid>/stat line as the kernel does (Linux 6.x,
// 52 fields), with the fields proclive reads set.
func statLine(pid int, comm string, state byte, ppid, threads int, start uint64) string {
	return fmt.Sprintf("%d (%s) %c %d 4148 4148 0 -1 4194560 309 0 0 0 0 0 0 0 20 0 %d 0 %d "+
		"10739712 1536 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		pid, comm, state, ppid, threads, start)
}

func TestParseStat(t *testing.T) {
	names := []string{
		"claude", "npm exec x", "a) R 1 2 3", ") Z 1 1", "((((", "))))))", "(", ")", "()",
		"new\nline", "", " ", "héllo wörld ✓", "\xff\xfe\x80", "2.1.97", "tab\there",
		"x) S 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 99",
	}
	for _, name := range names {
		line := statLine(4242, name, 'S', 17, 3, 163938)
		st, err := parseStat([]byte(line))
		if err != nil {
			t.Errorf("name %q: %v", name, err)
			continue
		}
		want := statFields{pid: 4242, comm: name, state: 'S', ppid: 17, threads: 3, start: 163938}
		if st != want {
			t.Errorf("name %q: parseStat = %+v, want %+v", name, st, want)
		}
	}

	zombie, err := parseStat([]byte(statLine(9, "z", 'Z', 1, 1, 5)))
	if err != nil || zombie.state != 'Z' {
		t.Errorf("zombie line: %+v, %v", zombie, err)
	}
	// The maximal start time and no trailing newline.
	max := strings.TrimSuffix(statLine(1, "init", 'S', 0, 1, 1<<64-1), "\n")
	if st, err := parseStat([]byte(max)); err != nil || st.start != 1<<64-1 || st.ppid != 0 {
		t.Errorf("max start: %+v, %v", st, err)
	}

	good := statLine(4242, "claude", 'S', 17, 3, 163938)
	malformed := map[string]string{
		"empty":               "",
		"no parens":           "4242 claude S 17 4148",
		"no closing paren":    "4242 (claude S 17 4148",
		"closing before open": "4242 )claude( S 17",
		"no pid":              "(claude) S 17",
		"pid not numeric":     "42x2 (claude) S 17",
		"negative pid":        "-42 (claude) S 17",
		"pid zero":            strings.Replace(good, "4242", "0", 1),
		"pid overflow":        strings.Replace(good, "4242", "99999999999999999999999", 1),
		"no space after pid":  strings.Replace(good, "4242 (", "4242(", 1),
		"truncated at state":  "4242 (claude)",
		"truncated mid-way":   good[:40],
		"truncated at start":  good[:strings.Index(good, " 163938")],
		"bad state":           strings.Replace(good, ") S ", ") SS ", 1),
		"state not a letter":  strings.Replace(good, ") S ", ") 1 ", 1),
		"ppid not numeric":    strings.Replace(good, " S 17 ", " S x7 ", 1),
		"negative ppid":       strings.Replace(good, " S 17 ", " S -1 ", 1),
		"start not numeric":   strings.Replace(good, " 163938 ", " 16393a ", 1),
		"start overflows":     strings.Replace(good, " 163938 ", " 18446744073709551616 ", 1),
		"double space":        strings.Replace(good, " S 17 ", " S  17 ", 1),
		"threads empty":       strings.Replace(good, " 0 3 0 163938", " 0  0 163938", 1),
	}
	for name, line := range malformed {
		if st, err := parseStat([]byte(line)); err == nil {
			t.Errorf("%s: parseStat(%q) = %+v, want an error", name, line, st)
		}
	}
}

func TestParseStatOfThisProcess(t *testing.T) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	st, err := parseStat(b)
	if err != nil {
		t.Fatalf("parseStat(%q): %v", b, err)
	}
	if st.pid != os.Getpid() || st.ppid != os.Getppid() || st.state == 0 || st.threads < 1 || st.start == 0 {
		t.Errorf("parseStat(/proc/self/stat) = %+v; pid %d, ppid %d", st, os.Getpid(), os.Getppid())
	}
}

func FuzzParseStat(f *testing.F) {
	for _, name := range []string{"claude", "a) R 1 2 3", ") Z 1 1", "new\nline", ""} {
		f.Add([]byte(statLine(4242, name, 'S', 1, 2, 3)))
	}
	f.Add([]byte("1 (x) S"))
	f.Add([]byte("()"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseStat(b)
		if err != nil {
			return
		}
		// What parses reformats to a line that parses to the same fields.
		again, err := parseStat([]byte(statLine(st.pid, st.comm, st.state, st.ppid, st.threads, st.start)))
		if err != nil || again != st {
			t.Fatalf("round trip of %+v = %+v, %v", st, again, err)
		}
	})
}

// FuzzParseStatName: any command name, however hostile, leaves the
// numbered fields intact.
func FuzzParseStatName(f *testing.F) {
	f.Add("npm exec x", uint32(4242), uint32(1), uint16(3), uint64(163938))
	f.Add(") Z 1 1", uint32(1), uint32(0), uint16(1), uint64(0))
	f.Fuzz(func(t *testing.T, name string, pid, ppid uint32, threads uint16, start uint64) {
		pid &= 1<<31 - 1
		ppid &= 1<<31 - 1
		if pid == 0 || strings.IndexByte(name, 0) >= 0 {
			return // the kernel has neither
		}
		want := statFields{pid: int(pid), comm: name, state: 'S', ppid: int(ppid), threads: int(threads), start: start}
		st, err := parseStat([]byte(statLine(want.pid, name, 'S', want.ppid, want.threads, start)))
		if err != nil || st != want {
			t.Fatalf("parseStat = %+v, %v; want %+v", st, err, want)
		}
	})
}

func TestParseTimensBoottime(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"monotonic           0         0\nboottime            0         0\n", 0, false},
		{"monotonic        1000         0\nboottime         1000         0\n", 1000e9, false},
		{"boottime         -5 300000000\n", -4_700_000_000, false},
		{"7 12 5\n", 12e9 + 5, false},
		{"monotonic 3 0\n", 0, true},
		{"", 0, true},
		{"boottime 1\n", 0, true},
		{"boottime x 0\n", 0, true},
		{"boottime 1 1000000000\n", 0, true},
		{"boottime 99999999999999999999 0\n", 0, true},
	}
	for _, tt := range tests {
		got, err := parseTimensBoottime([]byte(tt.in))
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseTimensBoottime(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzParseTimensBoottime(f *testing.F) {
	f.Add([]byte("monotonic           0         0\nboottime         1000         0\n"))
	f.Add([]byte("boottime -5 300000000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ns, err := parseTimensBoottime(b)
		if err != nil {
			return
		}
		// Whatever parses is a normalized offset the kernel could print.
		sec, nsec := ns/1e9, ns%1e9
		if nsec < 0 {
			sec, nsec = sec-1, nsec+1e9
		}
		again, err := parseTimensBoottime(fmt.Appendf(nil, "boottime %d %d\n", sec, nsec))
		if err != nil || again != ns {
			t.Fatalf("offset %d reprinted parses to %d, %v", ns, again, err)
		}
	})
}

func TestParseStatusTgid(t *testing.T) {
	status := "Name:\tclaude\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nNgid:\t0\nPid:\t4250\nPPid:\t1\n"
	if got, err := parseStatusTgid([]byte(status)); err != nil || got != 4242 {
		t.Errorf("parseStatusTgid = %d, %v; want 4242", got, err)
	}
	for _, bad := range []string{"", "Name:\tx\n", "Tgid:\t\n", "Tgid:\t-1\n", "Tgid:\t0\n", "Tgid:\tx\n"} {
		if got, err := parseStatusTgid([]byte(bad)); err == nil {
			t.Errorf("parseStatusTgid(%q) = %d, want an error", bad, got)
		}
	}
	// A process name can hold a newline, but status escapes it: "Tgid:" can
	// only start a line as the real field.
	own, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := parseStatusTgid(own); err != nil || got != os.Getpid() {
		t.Errorf("own Tgid = %d, %v; want %d", got, err, os.Getpid())
	}
}

func FuzzParseStatusTgid(f *testing.F) {
	f.Add([]byte("Name:\tx\nTgid:\t4242\n"))
	f.Add([]byte("Tgid:"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tgid, err := parseStatusTgid(b)
		if err == nil && (tgid <= 0 || tgid > 1<<31-1) {
			t.Fatalf("parseStatusTgid(%q) = %d", b, tgid)
		}
	})
}
