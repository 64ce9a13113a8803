package install

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every script we generate is valid POSIX shell, as dash (or the system sh)
// reads it.
func TestHookScriptsParse(t *testing.T) {
	for _, h := range []gitHook{postCommitHook, prePushHook} {
		for _, sweep := range []string{"", "/opt/tether/tether-sweep", "/Users/A B/it's/tether-sweep"} {
			for _, chained := range []bool{false, true} {
				for _, inCommon := range []bool{false, true} {
					script := hookScript(h, sweep, chained, inCommon)
					if !isOurHook([]byte(script)) {
						t.Errorf("%s: script lacks the marker", h.name)
					}
					shellParses(t, script)
				}
			}
			shellParses(t, huskyShebang+huskyBlock(h, sweep))
		}
	}
}

func shellParses(t *testing.T, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-n")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v: %s\n%s", err, out, script)
	}
}

func TestHookScriptGuards(t *testing.T) {
	for _, tc := range []struct {
		h       gitHook
		sweep   string
		chained bool
		want    []string
	}{
		// post-commit runs tether-hook's gate, which runs tether-sweep when
		// there is something to sweep; alone, the hook execs it.
		{postCommitHook, "", false, []string{
			"command -v tether-hook >/dev/null 2>&1 || exit 0\n",
			"exec tether-hook git post-commit\n",
		}},
		{postCommitHook, "/opt/t/tether-sweep", false, []string{
			"[ -x /opt/t/tether-hook ] || exit 0\n",
			"exec /opt/t/tether-hook git post-commit\n",
		}},
		{postCommitHook, "/opt/t/tether-sweep.exe", false, []string{"[ -x /opt/t/tether-hook.exe ] || exit 0\n"}},
		{postCommitHook, "/A B/tether-sweep", false, []string{"exec '/A B/tether-hook' git post-commit\n"}},
		{prePushHook, "", false, []string{
			"command -v tether-sweep >/dev/null 2>&1 || exit 0\n",
			`tether-sweep push --hook pre-push --quiet "$@" || true` + "\n",
		}},
		{prePushHook, "/opt/t/tether-sweep", false, []string{"[ -x /opt/t/tether-sweep ] || exit 0\n"}},
		{postCommitHook, "", true, []string{
			`prev="$(dirname -- "$0")/post-commit.pre-tether"`,
			`"$prev" "$@" || status=$?`,
			"if command -v tether-hook >/dev/null 2>&1; then\n",
			"\ttether-hook git post-commit </dev/null || true\n",
			`exit "$status"`,
		}},
		{prePushHook, "", true, []string{`cat >"$input"`, `"$prev" "$@" <"$input" || exit $?`, `"$@" <"$input" || true`}},
	} {
		script := hookScript(tc.h, tc.sweep, tc.chained, false)
		for _, w := range tc.want {
			if !strings.Contains(script, w) {
				t.Errorf("%s (sweep %q, chained %v) lacks %q:\n%s", tc.h.name, tc.sweep, tc.chained, w, script)
			}
		}
		if tc.h.name == "post-commit" && strings.Contains(script, "--hook post-commit") {
			t.Errorf("post-commit (sweep %q, chained %v) runs tether-sweep itself, not through the gate:\n%s", tc.sweep, tc.chained, script)
		}
	}
}

func TestIsOurHook(t *testing.T) {
	for content, want := range map[string]bool{
		hookScript(postCommitHook, "", false, true): true,
		"#!/bin/sh\necho hi\n":                      false,
		"#!/bin/sh\necho '" + hookMarker + "'\n":    false, // mentioned, not marked
		"":                                          false,
	} {
		if got := isOurHook([]byte(content)); got != want {
			t.Errorf("isOurHook(%q) = %v", content, got)
		}
	}
}

func TestWithBlock(t *testing.T) {
	block := huskyBlock(postCommitHook, "")
	old := blockBegin + "\nold line\n" + blockEnd + "\n"
	for _, tc := range []struct{ in, want string }{
		{"", block},
		{"npm test\n", "npm test\n" + block},
		{"npm test", "npm test\n" + block},
		{"a\n" + old + "b\n", "a\n" + block + "b\n"},
		{"a\n" + block, "a\n" + block},
	} {
		got, err := withBlock(tc.in, block)
		if err != nil || got != tc.want {
			t.Errorf("withBlock(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := withBlock("x\n"+blockBegin+"\nno end\n", block); err == nil {
		t.Error("a block without its end line was accepted")
	}
}

func TestWithoutBlock(t *testing.T) {
	block := huskyBlock(prePushHook, "/x/tether-sweep")
	for _, tc := range []struct {
		in, want string
		found    bool
	}{
		{"a\n" + block + "b\n", "a\nb\n", true},
		{"a\n" + block, "a\n", true},
		{"a\n" + strings.TrimSuffix(block, "\n"), "a\n", true},
		{"a\n", "a\n", false},
		{"echo '" + blockBegin + "'\n", "echo '" + blockBegin + "'\n", false},
	} {
		got, found, err := withoutBlock(tc.in)
		if err != nil || got != tc.want || found != tc.found {
			t.Errorf("withoutBlock(%q) = %q, %v, %v; want %q, %v", tc.in, got, found, err, tc.want, tc.found)
		}
	}
}

// FuzzHuskyBlock: adding our block to any hook file and taking it out again
// gives the file back (with a final line break if it lacked one).
func FuzzHuskyBlock(f *testing.F) {
	for _, s := range []string{"", "npm test\n", "no newline", "#!/bin/sh\n" + blockEnd + "\n", "a\r\nb\r\n"} {
		f.Add(s)
	}
	block := huskyBlock(postCommitHook, "")
	f.Fuzz(func(t *testing.T, content string) {
		if strings.Contains(content, "tether-managed") {
			return
		}
		with, err := withBlock(content, block)
		if err != nil {
			t.Fatalf("withBlock: %v", err)
		}
		again, err := withBlock(with, block)
		if err != nil || again != with {
			t.Fatalf("second withBlock changed %q to %q (%v)", with, again, err)
		}
		back, found, err := withoutBlock(with)
		if err != nil || !found {
			t.Fatalf("withoutBlock(%q): found %v, %v", with, found, err)
		}
		want := content
		if content != "" && !strings.HasSuffix(content, "\n") {
			want += "\n"
		}
		if back != want {
			t.Fatalf("round trip gave %q, want %q", back, want)
		}
	})
}

// The lefthook and pre-commit lines are real shell once their YAML quoting
// is taken off. At post-commit they run tether-hook's gate (the fake, like
// the gate with work to do, runs tether-sweep), beside an absolute
// tether-sweep or on PATH; at pre-push, tether-sweep with the remote. Without
// tether they succeed quietly.
func TestFrameworkSnippetsRun(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	t.Setenv("TETHER_TEST_LOG", log)
	bin := writeFakes(t, filepath.Join(dir, "bin"), "tether-hook", "tether-sweep")
	origPath := os.Getenv("PATH")
	onPath := bin + string(os.PathListSeparator) + origPath
	// snippetRuns runs the line under key of fw's snippet for h and returns
	// what the fakes logged.
	snippetRuns := func(fw string, h gitHook, sweep, path string, env ...string) string {
		t.Helper()
		snippet, _ := frameworkSnippet(fw, h, sweep)
		key := "run: "
		if fw == "pre-commit" {
			key = "entry: "
		}
		// lefthook runs "run" with sh -c; pre-commit splits "entry" like a
		// shell would, which sh -c also does.
		os.Remove(log)
		cmd := exec.Command("sh", "-c", yamlValue(t, snippet, key))
		cmd.Env = append(os.Environ(), append(env, "PATH="+path)...)
		if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
			t.Errorf("%s %s (sweep %q): %v, output %q", fw, h.name, sweep, err, out)
		}
		got, err := os.ReadFile(log)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		return string(got)
	}

	for _, fw := range []string{"lefthook", "pre-commit"} {
		for _, tc := range []struct{ sweep, path string }{
			{"", onPath},
			{filepath.Join(bin, "tether-sweep"), origPath},
		} {
			want := "hook git post-commit\nsweep run --hook post-commit --quiet\n"
			if got := snippetRuns(fw, postCommitHook, tc.sweep, tc.path); got != want {
				t.Errorf("%s post-commit (sweep %q): the fakes logged %q, want %q", fw, tc.sweep, got, want)
			}
		}
		for _, tc := range []struct{ sweep, path string }{
			{"", origPath},
			{filepath.Join(dir, "gone", "tether-sweep"), onPath},
		} {
			if got := snippetRuns(fw, postCommitHook, tc.sweep, tc.path); got != "" {
				t.Errorf("%s post-commit without tether (sweep %q): %q ran", fw, tc.sweep, got)
			}
		}
	}
	got := snippetRuns("pre-commit", prePushHook, "", onPath, "PRE_COMMIT_REMOTE_NAME=origin", "PRE_COMMIT_REMOTE_URL=/r")
	if want := "sweep push --hook pre-push --quiet origin /r\n"; got != want {
		t.Errorf("pre-commit pre-push: the fakes logged %q, want %q", got, want)
	}
	pp, _ := frameworkSnippet("lefthook", prePushHook, "")
	if !strings.Contains(pp, "use_stdin: true") || !strings.Contains(pp, "{1} {2}") {
		t.Errorf("lefthook pre-push snippet does not pass git's input and arguments:\n%s", pp)
	}
}

// yamlValue takes the single-quoted scalar after key off a snippet.
func yamlValue(t *testing.T, snippet, key string) string {
	t.Helper()
	for _, line := range strings.Split(snippet, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, key); ok {
			if len(v) < 2 || v[0] != '\'' || v[len(v)-1] != '\'' {
				t.Fatalf("%s is not single-quoted: %s", key, v)
			}
			return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
		}
	}
	t.Fatalf("no %s in\n%s", key, snippet)
	return ""
}
