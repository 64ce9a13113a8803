package proclive

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Decoders for argument blocks. They are free of build tags so that the
// decoders of every platform are tested and fuzzed wherever tests run.

// splitNUL splits a NUL-separated argument block (Linux /proc/<pid>/cmdline,
// FreeBSD kern.proc.args). The final terminator is optional: a program that
// rewrote its title may leave none.
func splitNUL(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	parts := bytes.Split(bytes.TrimSuffix(b, []byte{0}), []byte{0})
	args := make([]string, len(parts))
	for i, p := range parts {
		args[i] = string(p)
	}
	return args
}

// cString is the text of a fixed-size, NUL-padded C char array.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// parseProcArgs2 decodes macOS sysctl kern.procargs2: a little-endian int32
// argc, the executable path, NUL padding, then argc NUL-terminated arguments
// followed by the environment, which is ignored.
func parseProcArgs2(b []byte) ([]string, error) {
	if len(b) < 4 {
		return nil, errors.New("procargs2: shorter than its argument count")
	}
	argc := int32(binary.LittleEndian.Uint32(b))
	if argc < 0 {
		return nil, fmt.Errorf("procargs2: negative argument count %d", argc)
	}
	rest := b[4:]
	end := bytes.IndexByte(rest, 0)
	if end < 0 {
		return nil, errors.New("procargs2: executable path not terminated")
	}
	rest = bytes.TrimLeft(rest[end:], "\x00")
	// Every argument takes at least its terminator: bound the allocation by
	// the bytes present, not by a count that may be garbage.
	args := make([]string, 0, min(int(argc), len(rest)))
	for len(args) < int(argc) {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			return nil, fmt.Errorf("procargs2: %d of %d arguments present", len(args), argc)
		}
		args = append(args, string(rest[:i]))
		rest = rest[i+1:]
	}
	return args, nil
}
