package main

import (
	"maps"
	"testing"
)

func TestShortIDs(t *testing.T) {
	got := shortIDs([]string{"warn-session-1", "warn-session-2", "3f2a9c1e-0000", "3f2a9c1f-0000", "abc", "abcdefghij", "5e551011-dead"})
	want := map[string]string{
		"warn-session-1": "warn-session-1", "warn-session-2": "warn-session-2",
		"3f2a9c1e-0000": "3f2a9c1e", "3f2a9c1f-0000": "3f2a9c1f",
		"abc": "abc", "abcdefghij": "abcdefgh", "5e551011-dead": "5e551011",
	}
	if !maps.Equal(got, want) {
		t.Errorf("shortIDs = %v, want %v", got, want)
	}
}
