package main

import "testing"

func TestNearest(t *testing.T) {
	a := &app{getenv: func(string) string { return "" }}
	var names []string
	for _, c := range a.rootCommand(nil).Commands() {
		names = append(names, c.Name())
	}
	for _, tc := range []struct{ word, want string }{
		{"rewnd", "rewind"}, // one edit from rewind, two from end
		{"stauts", "status"},
		{"statsu", "status"},
		{"stat", "status"},
		{"Status", "status"},
		{"resum", "resume"},
		{"fech", "fetch"},
		{"pus", "push"},
		{"docter", "doctor"},
		{"unistall", "uninstall"},
		{"instal", "install"},
		{"clena", "clean"},
		{"shwo", "show"},
		{"frobnicate", ""},
		{"x", ""},
	} {
		if got := nearest(tc.word, names); got != tc.want {
			t.Errorf("nearest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "end", 3},
		{"rewnd", "rewind", 1},
		{"rewnd", "end", 2},
		{"stauts", "status", 1},
		{"ab", "ba", 1},
		{"kitten", "sitting", 3},
		{"état", "etat", 1},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := editDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}
