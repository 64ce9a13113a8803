package mockllm

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Marker
	}{
		{"say hello", Marker{Kind: Plain}},
		{"please [[write a.txt]] now", Marker{Kind: Write, Path: "a.txt"}},
		{"[[write dir/b c]]", Marker{Kind: Plain}}, // a path has no spaces
		{"wait [[hold]]", Marker{Kind: Hold}},
		{"[[fail]]", Marker{Kind: Fail}},
		{"earlier [[fail]], now [[write x]]", Marker{Kind: Write, Path: "x"}},
		{"[[write ]]", Marker{Kind: Plain}},
		{"[hold]", Marker{Kind: Plain}},
		{"ask first [[escalate e.txt]]", Marker{Kind: Write, Path: "e.txt", Escalate: true}},
		{"[[escalate]]", Marker{Kind: Plain}},
		{"which one? [[ask]]", Marker{Kind: Ask}},
	} {
		if got := Parse(tc.text); got != tc.want {
			t.Errorf("Parse(%q) = %+v, want %+v", tc.text, got, tc.want)
		}
	}
}

func TestShellWrite(t *testing.T) {
	for path, want := range map[string]string{
		"a.txt":    `printf 'written by the agent\n' > 'a.txt'`,
		"it's.txt": `printf 'written by the agent\n' > 'it'\''s.txt'`,
	} {
		if got := ShellWrite(path); got != want {
			t.Errorf("ShellWrite(%q) = %s, want %s", path, got, want)
		}
	}
}
