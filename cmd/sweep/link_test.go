package main

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParseNumber(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"", 0, true},
		{"12", 12, true},
		{"#12", 12, true},
		{" 7 ", 7, true},
		{"007", 7, true},
		{"2147483647", 2147483647, true},
		{"2147483648", 0, false},
		{"0", 0, false},
		{"#", 0, false},
		{"-4", 0, false},
		{"+4", 0, false},
		{"1_000", 0, false},
		{"12a", 0, false},
		{"##12", 0, false},
		{"0x1f", 0, false},
	}
	for _, tt := range tests {
		n, err := parseNumber("--issue", tt.in)
		if (err == nil) != tt.ok || n != tt.want {
			t.Errorf("parseNumber(%q) = %d, %v; want %d, ok %v", tt.in, n, err, tt.want, tt.ok)
		}
		var ue usageError
		if err != nil && !errors.As(err, &ue) {
			t.Errorf("parseNumber(%q): %v is not a usage error", tt.in, err)
		}
	}
}

// FuzzParseNumber: whatever the input, the result is a positive 32-bit
// number that the input spells in decimal (after an optional '#'), or a
// usage error.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"12", "#12", "", "-1", "99999999999", " #3 ", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseNumber("--pr", s)
		if err != nil {
			var ue usageError
			if !errors.As(err, &ue) || n != 0 {
				t.Fatalf("parseNumber(%q) = %d, %v: want 0 and a usage error", s, n, err)
			}
			return
		}
		trimmed := strings.TrimSpace(s)
		if trimmed == "" {
			if n != 0 {
				t.Fatalf("parseNumber(%q) = %d for no value", s, n)
			}
			return
		}
		digits := strings.TrimLeft(strings.TrimPrefix(trimmed, "#"), "0")
		if n <= 0 || n > 1<<31-1 || strconv.Itoa(n) != digits {
			t.Fatalf("parseNumber(%q) = %d, which the input does not spell", s, n)
		}
	})
}
