package proclive

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

func TestSplitNUL(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"bash\x00", []string{"bash"}},
		{"/bin/sh\x00-c\x00tether-hook claude-code\x00", []string{"/bin/sh", "-c", "tether-hook claude-code"}},
		{"npm exec x", []string{"npm exec x"}}, // a rewritten title has no terminator
		{"a\x00\x00", []string{"a", ""}},       // an empty last argument
		{"\x00", []string{""}},
		{"a\x00b", []string{"a", "b"}},
	}
	for _, tt := range tests {
		if got := splitNUL([]byte(tt.in)); !slices.Equal(got, tt.want) {
			t.Errorf("splitNUL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzSplitNUL(f *testing.F) {
	f.Add([]byte("/bin/sh\x00-c\x00x\x00"))
	f.Add([]byte("npm exec x"))
	f.Add([]byte("\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		args := splitNUL(b)
		if len(b) == 0 {
			if args != nil {
				t.Fatalf("splitNUL(empty) = %q", args)
			}
			return
		}
		// Joining the arguments gives back the block without its final terminator.
		if got, want := strings.Join(args, "\x00"), string(bytes.TrimSuffix(b, []byte{0})); got != want {
			t.Fatalf("splitNUL(%q) = %q: joins to %q", b, args, got)
		}
	})
}

func TestCString(t *testing.T) {
	for in, want := range map[string]string{"claude\x00\x00\x00": "claude", "": "", "full": "full", "\x00x": ""} {
		if got := cString([]byte(in)); got != want {
			t.Errorf("cString(%q) = %q, want %q", in, got, want)
		}
	}
}

// procArgs2 builds a kern.procargs2 block as macOS lays it out.
func procArgs2(argc int32, exe string, pad int, args ...string) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, argc)
	b.WriteString(exe)
	b.Write(make([]byte, 1+pad))
	for _, a := range args {
		b.WriteString(a)
		b.WriteByte(0)
	}
	b.WriteString("PATH=/usr/bin\x00HOME=/Users/dev\x00")
	return b.Bytes()
}

func TestParseProcArgs2(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    []string
		wantErr bool
	}{
		{"shell", procArgs2(3, "/bin/sh", 5, "/bin/sh", "-c", "tether-hook claude-code"), []string{"/bin/sh", "-c", "tether-hook claude-code"}, false},
		{"no padding", procArgs2(1, "/usr/local/bin/claude", 0, "claude"), []string{"claude"}, false},
		{"no arguments", procArgs2(0, "/sbin/launchd", 3), []string{}, false},
		{"environment is not argv", procArgs2(1, "/bin/zsh", 2, "-zsh"), []string{"-zsh"}, false},
		{"too short", []byte{1, 0}, nil, true},
		{"negative argc", procArgs2(-1, "/bin/sh", 0), nil, true},
		{"exe not terminated", append(binary.LittleEndian.AppendUint32(nil, 1), "/bin/sh"...), nil, true},
		{"argc beyond the data", procArgs2(1000, "/bin/sh", 0, "sh")[:20], nil, true},
	}
	for _, tt := range tests {
		got, err := parseProcArgs2(tt.in)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("%s: parseProcArgs2 = %q, %v; want %q, error %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzParseProcArgs2(f *testing.F) {
	f.Add(procArgs2(3, "/bin/sh", 5, "/bin/sh", "-c", "x"))
	f.Add(procArgs2(0, "/sbin/launchd", 0))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, '/', 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		args, err := parseProcArgs2(b)
		if err != nil {
			return
		}
		if want := int(int32(binary.LittleEndian.Uint32(b))); len(args) != want {
			t.Fatalf("parseProcArgs2(%q) = %d arguments, argc says %d", b, len(args), want)
		}
		for _, a := range args {
			if strings.IndexByte(a, 0) >= 0 {
				t.Fatalf("argument %q holds a NUL", a)
			}
		}
	})
}
