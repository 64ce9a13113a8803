package table

import (
	"slices"
	"strings"
	"testing"
)

func TestLayout(t *testing.T) {
	// The status table's shape: an ID, two droppable words, a cuttable
	// branch and a cuttable prompt.
	cols := []Column{
		{Header: "ID"},
		{Header: "AGENT", Drop: 2},
		{Header: "N", Drop: 1},
		{Header: "BRANCH", Min: 12, Drop: 3},
		{Header: "PROMPT", Min: 8},
	}
	natural := []int{8, 11, 3, 20, 40}
	// 8+11+3+20+40 = 82, plus 4 gaps of 2 = 90.
	tests := []struct {
		name  string
		width int
		want  []int
	}{
		{"no limit", 0, []int{8, 11, 3, 20, 40}},
		{"fits exactly", 90, []int{8, 11, 3, 20, 40}},
		{"branch cut to its minimum first, then the prompt", 80, []int{8, 11, 3, 12, 38}},
		{"prompt cut further", 58, []int{8, 11, 3, 12, 16}},
		{"everything at its minimum", 50, []int{8, 11, 3, 12, 8}},
		{"then the least useful column goes", 45, []int{8, 11, 0, 12, 8}},
		{"the room a drop frees goes back to the prompt", 47, []int{8, 11, 0, 12, 10}},
		{"dropped in rank order", 30, []int{8, 0, 0, 0, 20}},
		{"then the prompt is cut past its minimum", 20, []int{8, 0, 0, 0, 10}},
		{"never-dropped columns stay; what is cut keeps a cell", 10, []int{8, 0, 0, 0, 1}},
	}
	for _, tt := range tests {
		got := Layout(cols, natural, tt.width)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: Layout(width %d) = %v, want %v", tt.name, tt.width, got, tt.want)
		}
		if tt.width > 0 && total(got) > tt.width && tt.width != 10 {
			t.Errorf("%s: %v is %d wide, more than %d", tt.name, got, total(got), tt.width)
		}
	}
}

func TestRenderAlignsWithColour(t *testing.T) {
	tab := Table{
		Columns: []Column{{Header: "ID"}, {Header: "LIVENESS"}, {Header: "TURNS", Right: true}, {Header: "PROMPT", Min: 6}},
		Rows: [][]Cell{
			{{Text: "a"}, {Text: "alive", Color: "32"}, {Text: "3"}, {Text: "fix the 日本 bug\nplease"}},
			{{Text: "bbbb"}, {Text: "dead", Color: "31"}, {Text: "12"}, {Text: "\x1b[2Jclear"}},
		},
	}
	var plain, colored strings.Builder
	if err := tab.Render(&plain, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := tab.Render(&colored, 0, true); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"ID    LIVENESS  TURNS  PROMPT\n" +
		"a     alive         3  fix the 日本 bug please\n" +
		"bbbb  dead         12  [2Jclear\n"
	if plain.String() != want {
		t.Errorf("plain:\n%s\nwant:\n%s", plain.String(), want)
	}
	if !strings.Contains(colored.String(), "\x1b[32malive\x1b[0m     ") {
		t.Errorf("colour not outside the padding:\n%q", colored.String())
	}
	if stripped := strings.NewReplacer("\x1b[32m", "", "\x1b[31m", "", "\x1b[0m", "").Replace(colored.String()); stripped != want {
		t.Errorf("coloured table, escapes removed:\n%s\nwant:\n%s", stripped, want)
	}
}

func TestRenderFits(t *testing.T) {
	tab := Table{
		Columns: []Column{{Header: "ID"}, {Header: "BRANCH", Min: 8, Drop: 1}, {Header: "PROMPT", Min: 10}},
		Rows:    [][]Cell{{{Text: "3f2a9c1e"}, {Text: "feature/a-very-long-branch-name-indeed"}, {Text: strings.Repeat("word ", 30)}}},
	}
	for _, width := range []int{80, 50, 40, 30} {
		var b strings.Builder
		if err := tab.Render(&b, width, false); err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(b.String()) {
			if w := Width(strings.TrimSuffix(line, "\n")); w > width {
				t.Errorf("width %d: line %q is %d wide", width, line, w)
			}
		}
		if !strings.Contains(b.String(), "…") {
			t.Errorf("width %d: nothing cut:\n%s", width, b.String())
		}
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 5, "hello"},
		{"hello", 4, "hel…"},
		{"hello", 1, "…"},
		{"hello", 0, ""},
		{"日本語", 4, "日…"},
		{"日本語", 6, "日本語"},
		{"e\u0301t\u00e9", 3, "e\u0301t\u00e9"},
	}
	for _, tt := range tests {
		if got := Cut(tt.in, tt.n); got != tt.want || Width(got) > max(tt.n, 0) {
			t.Errorf("Cut(%q, %d) = %q (width %d), want %q", tt.in, tt.n, got, Width(got), tt.want)
		}
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"plain":              "plain",
		"two\nlines":         "two lines",
		"tab\there":          "tab here",
		"\x1b]0;title\x07ok": "]0;title ok",
		"  spaced   out  ":   "spaced out",
		"\u009b31mcsi":       "31mcsi",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}
