package gitdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseGitFile(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"gitdir: ../x/.git/modules/a\n", "../x/.git/modules/a", true},
		{"gitdir: /abs/path\r\n", "/abs/path", true},
		{"gitdir: with space \n", "with space ", true},
		{"gitdir: nolf", "nolf", true},
		{"gitdir:nospace\n", "", false},
		{"gitdir: \n", "", false},
		{"", "", false},
		{"GITDIR: x\n", "", false},
		{"gitdir: a\x00b\n", "", false},
	}
	for _, c := range cases {
		got, err := parseGitFile([]byte(c.in))
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseGitFile(%q) = %q, %v; want %q, ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

// TestParseCoreConfigMatchesGit checks the config reader against
// `git config --file` on tricky inputs.
func TestParseCoreConfigMatchesGit(t *testing.T) {
	f := newFixture(t)
	inputs := []string{
		"[core]\n\tbare = false\n\tworktree = ../tree\n",
		"[core]\nbare\n",
		"[core]\nbare =\n",
		"[CORE]\n\tBare = Yes\n",
		"[core] bare = on ; comment\n",
		"[core]\n\tworktree = \"quoted ; not a comment\" # comment\n",
		"[core]\n\tworktree = a  b\t c   \n",
		"[core]\n\tworktree = a\\\n  continued\n",
		"[core]\n\tworktree = \"esc \\\\ \\\" \\t end\"\n",
		"[core \"sub\"]\n\tbare = true\n[core]\n\tbare = 0\n",
		"[core.sub]\n\tbare = true\n",
		"[remote \"origin\"]\n\turl = x\n[core]\n\tbare = 2\n\tbare = false\n",
		"\xef\xbb\xbf[core]\n\tbare = true\n",
		"# only a comment\n",
		"[core]\r\n\tbare = true\r\n",
		"[section]\n\tkey = \"unterminated\n",
		"[core]\n\tbare = maybe\n",
		"[core\n",
	}
	for i, in := range inputs {
		cfgPath := f.path("config" + string(rune('a'+i)))
		if err := os.WriteFile(cfgPath, []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
		gotCfg, err := parseCoreConfig([]byte(in))
		wantBare, bareErr := runGit(t, f.root, f.root, nil, "config", "--file", cfgPath, "--type=bool", "--default=false", "core.bare")
		wantTree, treeErr := runGit(t, f.root, f.root, nil, "config", "--file", cfgPath, "--default=", "core.worktree")
		if bareErr != nil || treeErr != nil {
			if err == nil {
				t.Errorf("input %q: git fails (%v / %v), parseCoreConfig accepts it: %+v", in, bareErr, treeErr, gotCfg)
			}
			continue
		}
		if err != nil {
			t.Errorf("input %q: parseCoreConfig: %v; git accepts it", in, err)
			continue
		}
		if (wantBare == "true") != gotCfg.bare || wantTree != gotCfg.worktree {
			t.Errorf("input %q: got bare=%v worktree=%q; git says %s %q", in, gotCfg.bare, gotCfg.worktree, wantBare, wantTree)
		}
	}
	// `git config --get` prints a valueless key, but repository setup
	// dies on it ("missing value for 'core.worktree'"), and so do we.
	if _, err := parseCoreConfig([]byte("[core]\n\tworktree\n")); err == nil {
		t.Error("valueless core.worktree accepted")
	}
}

func TestLookupPackedRef(t *testing.T) {
	const h1, h2, h3 = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222", "3333333333333333333333333333333333333333"
	sorted := "# pack-refs with: peeled fully-peeled sorted \n" +
		h1 + " refs/heads/main\n" +
		h2 + " refs/tags/v1\n" +
		"^" + h3 + "\n" +
		h3 + " refs/tags/v2\n"
	cases := []struct {
		data, name, want string
		found, ok        bool
	}{
		{sorted, "refs/heads/main", h1, true, true},
		{sorted, "refs/tags/v2", h3, true, true},
		{sorted, "refs/heads/other", "", false, true},
		// Sorted: the scan stops before the bad line that follows.
		{sorted + "garbage\n", "refs/heads/a", "", false, true},
		{"garbage\n", "refs/heads/a", "", false, false},
		{"^" + h1 + "\n", "refs/heads/a", "", false, false},
		// Unsorted files are scanned to the end.
		{h2 + " refs/tags/v1\n" + h1 + " refs/heads/main", "refs/heads/main", h1, true, true},
		{strings.ToUpper(h1) + " refs/heads/up\n", "refs/heads/up", h1, true, true},
	}
	for _, c := range cases {
		got, found, err := lookupPackedRef(strings.NewReader(c.data), c.name)
		if (err == nil) != c.ok || found != c.found || got != c.want {
			t.Errorf("lookupPackedRef(%q, %s) = %q, %v, %v", c.data, c.name, got, found, err)
		}
	}
}

func TestParseRefFile(t *testing.T) {
	const h = "0123456789abcdef0123456789abcdef01234567"
	cases := []struct {
		in, target, hash string
		ok               bool
	}{
		{"ref: refs/heads/main\n", "refs/heads/main", "", true},
		{"ref:refs/heads/main", "refs/heads/main", "", true},
		{h + "\n", "", h, true},
		{h + strings.Repeat("0", 24) + "\n", "", h + strings.Repeat("0", 24), true},
		{h + "0\n", "", "", false},
		{h + " junk\n", "", "", false},
		{"ref: refs/heads/a..b\n", "", "", false},
		{"ref: refs/heads/a b\n", "", "", false},
		{"ref: refs/heads/x.lock\n", "", "", false},
		{"ref: refs/heads/.hidden\n", "", "", false},
		{"ref: heads/main\n", "", "", false},
		{"", "", "", false},
	}
	for _, c := range cases {
		target, hash, err := parseRefFile([]byte(c.in))
		if (err == nil) != c.ok || target != c.target || hash != c.hash {
			t.Errorf("parseRefFile(%q) = %q, %q, %v", c.in, target, hash, err)
		}
	}
}

func TestIsProperAncestor(t *testing.T) {
	sep := string(filepath.Separator)
	root := filepath.VolumeName(os.TempDir()) + sep
	a := filepath.Join(root, "a")
	cases := []struct {
		dir, path string
		want      bool
	}{
		{a, filepath.Join(a, "b"), true},
		{a, a, false},
		{a, a + "b", false},
		{root, a, true},
		{filepath.Join(a, "b"), a, false},
	}
	for _, c := range cases {
		if got := isProperAncestor(c.dir, c.path); got != c.want {
			t.Errorf("isProperAncestor(%q, %q) = %v", c.dir, c.path, got)
		}
	}
}
