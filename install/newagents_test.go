package install

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Droid reads its hooks from the events at the top level of
// .factory/hooks.json: install puts tether's there, beside the user's,
// with PreToolUse (`droid exec` announces no turn), Notification (Esc
// fires no Stop; a dialog) and PostToolUse (the dialog's call ran), the
// user's hook of that event kept first; uninstall leaves the file as it
// was.
func TestDroidHooksAtTopLevel(t *testing.T) {
	setup(t)
	dir := newRepo(t)
	hooks := filepath.Join(dir, ".factory", "hooks.json")
	const mine = `{"PostToolUse": [{"matcher": "Create", "hooks": [{"type": "command", "command": "make fmt"}]}]}` + "\n"
	writeFile(t, hooks, mine)
	opts := Options{Dir: dir, NoGitHooks: true, Agents: []string{"droid"}}
	if _, err := Install(opts); err != nil {
		t.Fatal(err)
	}
	var got map[string][]struct {
		Matcher *string `json:"matcher"`
		Hooks   []struct {
			Type, Command string
			Timeout       int
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(readFile(t, hooks)), &got); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "Notification", "SessionEnd", "PostToolUse"} {
		g := got[ev]
		if ev == "PostToolUse" {
			if len(g) != 2 || g[0].Hooks[0].Command != "make fmt" {
				t.Errorf("the user's hook: %+v", g)
				continue
			}
			g = g[1:]
		}
		if len(g) != 1 || len(g[0].Hooks) != 1 || g[0].Hooks[0].Type != "command" || g[0].Hooks[0].Timeout != 10 ||
			g[0].Hooks[0].Command != hookCommand("", "droid", ev) {
			t.Errorf("%s: %+v", ev, g)
		}
	}
	if _, ok := got["hooks"]; ok {
		t.Error(`a "hooks" key, which Droid ignores`)
	}
	if ps := Check(opts); len(ps) != 0 {
		t.Errorf("doctor after install: %+v", ps)
	}
	if _, err := Uninstall(opts); err != nil {
		t.Fatal(err)
	}
	if after := readFile(t, hooks); after != mine {
		t.Errorf("after uninstall:\n%s\nwant\n%s", after, mine)
	}
}

// doctor catches the {"hooks": …} wrapper Droid silently ignores.
func TestDroidDoctorCatchesHooksWrapper(t *testing.T) {
	setup(t)
	dir := newRepo(t)
	opts := Options{Dir: dir, NoGitHooks: true, Agents: []string{"droid"}}
	writeFile(t, filepath.Join(dir, ".factory", "hooks.json"),
		`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}`+"\n")
	if _, err := Install(opts); err != nil {
		t.Fatal(err)
	}
	ps := Check(opts)
	if len(ps) != 1 || !strings.Contains(ps[0].What, `"hooks" key, which Droid silently ignores`) || ps[0].Fix != nil {
		t.Fatalf("doctor: %+v", ps)
	}
}

// Droid's TUI asks to trust a folder before it runs its hooks; install
// says so, and once trusted, says nothing.
func TestDroidFolderTrust(t *testing.T) {
	setup(t)
	dir, home := newRepo(t), t.TempDir()
	opts := Options{Dir: dir, Home: home, NoGitHooks: true, Agents: []string{"droid"}}
	res, err := Install(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "Droid's TUI does not trust this folder") || !strings.Contains(res.Notes[0], "droid exec") {
		t.Fatalf("notes: %q", res.Notes)
	}
	trusted, _ := json.Marshal(map[string]any{"trustedFolders": map[string]any{resolved(dir): map[string]string{"trustedAt": "2026-11-01T00:00:00.000Z"}}})
	writeFile(t, filepath.Join(home, ".factory", "settings.json"), string(trusted))
	if ps := Check(opts); len(ps) != 0 {
		t.Errorf("doctor once trusted: %+v", ps)
	}
	// User hooks run everywhere.
	user := opts
	user.User = true
	writeFile(t, filepath.Join(home, ".factory", "settings.json"), "{}")
	if res, err := Install(user); err != nil || len(res.Notes) != 0 || !exists(filepath.Join(home, ".factory", "hooks.json")) {
		t.Fatalf("--user: %v, notes %q", err, res.Notes)
	}
}

// Qwen Code's settings may hold comments; its folder trust, off by
// default, skips a repository's hooks once turned on, until the folder is
// trusted.
func TestQwenHooksAndFolderTrust(t *testing.T) {
	setup(t)
	dir, home := newRepo(t), t.TempDir()
	settings := filepath.Join(dir, ".qwen", "settings.json")
	const mine = "{\n  // the model\n  \"model\": {\"name\": \"qwen3-coder\"}\n}\n"
	writeFile(t, settings, mine)
	opts := Options{Dir: dir, Home: home, NoGitHooks: true, Agents: []string{"qwen"}}
	res, err := Install(opts)
	if err != nil || len(res.Notes) != 0 {
		t.Fatalf("install: %v, notes %q", err, res.Notes)
	}
	got := readFile(t, settings)
	for _, want := range []string{"// the model", `"StopFailure"`, `"Notification"`, `"matcher": ""`, hookCommand("", "qwen", "SessionEnd")} {
		if !strings.Contains(got, want) {
			t.Errorf("settings lack %q:\n%s", want, got)
		}
	}
	writeFile(t, filepath.Join(home, ".qwen", "settings.json"), `{"security": {"folderTrust": {"enabled": true}}}`)
	ps := Check(opts)
	if len(ps) != 1 || !strings.Contains(ps[0].What, "Qwen Code does not trust this folder") ||
		!strings.Contains(ps[0].Detail, filepath.Join(home, ".qwen", "trustedFolders.json")) {
		t.Fatalf("doctor with folder trust on: %+v", ps)
	}
	writeFile(t, filepath.Join(home, ".qwen", "trustedFolders.json"), `{"`+resolved(dir)+`": "TRUST_FOLDER"}`)
	if ps := Check(opts); len(ps) != 0 {
		t.Errorf("doctor once trusted: %+v", ps)
	}
	if _, err := Uninstall(opts); err != nil {
		t.Fatal(err)
	}
	if after := readFile(t, settings); after != mine {
		t.Errorf("after uninstall:\n%s", after)
	}
}

// Pi runs tether's own extension from .pi/extensions/ (the user's
// extensions beside it untouched), or from ~/.pi/agent/extensions/ with
// --user, wherever PI_CODING_AGENT_DIR moves it.
func TestPiExtension(t *testing.T) {
	setup(t)
	dir, home := newRepo(t), t.TempDir()
	writeFile(t, filepath.Join(dir, ".pi", "extensions", "mine.ts"), "export default function () {}\n")
	before := snapshot(t, dir)
	opts := Options{Dir: dir, Home: home, NoGitHooks: true, Agents: []string{"pi"}}
	if _, err := Install(opts); err != nil {
		t.Fatal(err)
	}
	ext := readFile(t, filepath.Join(dir, ".pi", "extensions", "tether.ts"))
	if !strings.HasPrefix(ext, "// tether: records this Pi session") || !strings.Contains(ext, `const HOOK = "tether-hook"`) {
		t.Fatalf("extension:\n%s", ext)
	}
	if ps := Check(opts); len(ps) != 0 {
		t.Errorf("doctor: %+v", ps)
	}
	if _, err := Uninstall(opts); err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "after uninstall", before, snapshot(t, dir))

	moved := filepath.Join(home, "pi-here")
	user := Options{Dir: dir, Home: home, User: true, NoGitHooks: true, Agents: []string{"pi"}, HookPath: "/opt/tether/tether-hook",
		Getenv: func(k string) string {
			if k == "PI_CODING_AGENT_DIR" {
				return moved
			}
			return ""
		}}
	if _, err := Install(user); err != nil {
		t.Fatal(err)
	}
	if ext := readFile(t, filepath.Join(moved, "extensions", "tether.ts")); !strings.Contains(ext, `const HOOK = "/opt/tether/tether-hook"`) {
		t.Errorf("user extension:\n%s", ext)
	}
	if exists(filepath.Join(home, ".pi")) {
		t.Error("the extension went to the default home, not Pi's")
	}
}

// The three are found by their project directory, their home and their
// command.
func TestDetectDroidPiQwen(t *testing.T) {
	setup(t)
	dir, home := newRepo(t), t.TempDir()
	writeFile(t, filepath.Join(dir, ".factory", "settings.json"), "{}")
	writeFile(t, filepath.Join(home, ".pi", "agent", "settings.json"), "{}")
	ps, err := Detect(Options{Dir: dir, Home: home, Getenv: func(string) string { return "" },
		LookPath: func(name string) (string, error) {
			if name == "qwen" {
				return "/usr/bin/qwen", nil
			}
			return "", exec.ErrNotFound
		}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"droid": ".factory/ in the repository", "pi": "~/.pi/agent", "qwen": "qwen on PATH"}
	for _, p := range ps {
		if w, ok := want[p.Agent]; ok && (len(p.Where) != 1 || p.Where[0] != w) {
			t.Errorf("%s seen %q, want %q", p.Agent, p.Where, w)
		}
		delete(want, p.Agent)
	}
	if len(want) != 0 {
		t.Errorf("not found: %v (found %+v)", want, ps)
	}
}
