package install

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const testHookBin = "/opt/tether/bin/tether-hook"

// merged runs merge on src and returns the new bytes.
func merged(t testing.TB, spec agentSpec, src, bin string) string {
	t.Helper()
	d, err := parseDocument([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.merge(d.root, bin); err != nil {
		t.Fatal(err)
	}
	return string(d.bytes())
}

func unmerged(t testing.TB, spec agentSpec, src string, orig *node) string {
	t.Helper()
	d, err := parseDocument([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	spec.unmerge(d.root, orig)
	return string(d.bytes())
}

func spec(t testing.TB, name string) agentSpec {
	t.Helper()
	s, err := lookupAgent(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMergeNewCursorConfig(t *testing.T) {
	got := merged(t, spec(t, "cursor"), "", testHookBin)
	cmd := func(ev string) string {
		return `"[ -x /opt/tether/bin/tether-hook ] && exec /opt/tether/bin/tether-hook cursor ` + ev + ` || true"`
	}
	want := "{\n" +
		"  \"version\": 1,\n" +
		"  \"hooks\": {\n" +
		"    \"sessionStart\": [\n      {\n        \"command\": " + cmd("sessionStart") + "\n      }\n    ],\n" +
		"    \"beforeSubmitPrompt\": [\n      {\n        \"command\": " + cmd("beforeSubmitPrompt") + "\n      }\n    ],\n" +
		"    \"stop\": [\n      {\n        \"command\": " + cmd("stop") + "\n      }\n    ],\n" +
		"    \"sessionEnd\": [\n      {\n        \"command\": " + cmd("sessionEnd") + "\n      }\n    ]\n" +
		"  }\n" +
		"}\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// The shapes each agent documents for its hook config.
func TestMergeShapes(t *testing.T) {
	type js = map[string]any
	type arr = []any
	for _, tc := range []struct {
		agent string
		event string
		want  any // the event's array
		top   js  // other top-level keys that must be there
	}{
		// Timeouts in each agent's unit: Claude Code, Codex and Copilot CLI
		// seconds, Gemini CLI milliseconds.
		{"claude-code", "StopFailure", arr{js{"matcher": "", "hooks": arr{js{"type": "command", "command": hookCommand(testHookBin, "claude-code", "StopFailure"), "timeout": 10.0}}}}, nil},
		{"gemini", "BeforeAgent", arr{js{"hooks": arr{js{"name": "tether", "type": "command", "command": hookCommand(testHookBin, "gemini", "BeforeAgent"), "timeout": 10000.0}}}}, js{"hooksConfig": js{"enabled": true}}},
		{"codex", "UserPromptSubmit", arr{js{"hooks": arr{js{"type": "command", "command": hookCommand(testHookBin, "codex", "UserPromptSubmit"), "timeout": 10.0}}}}, nil},
		// Codex runs these two for 3 s at most, whatever the entry says.
		{"codex", "Interrupt", arr{js{"hooks": arr{js{"type": "command", "command": hookCommand(testHookBin, "codex", "Interrupt"), "timeout": 3.0}}}}, nil},
		{"codex", "SessionEnd", arr{js{"hooks": arr{js{"type": "command", "command": hookCommand(testHookBin, "codex", "SessionEnd"), "timeout": 3.0}}}}, nil},
		{"cursor", "beforeSubmitPrompt", arr{js{"command": hookCommand(testHookBin, "cursor", "beforeSubmitPrompt")}}, js{"version": 1.0}},
		{"copilot", "agentStop", arr{js{"type": "command", "bash": hookCommand(testHookBin, "copilot", "agentStop"), "powershell": hookCommandPowerShell(testHookBin, "copilot", "agentStop"), "timeoutSec": 10.0}}, js{"version": 1.0}},
		{"copilot", "errorOccurred", arr{js{"type": "command", "bash": hookCommand(testHookBin, "copilot", "errorOccurred"), "powershell": hookCommandPowerShell(testHookBin, "copilot", "errorOccurred"), "timeoutSec": 10.0}}, js{"version": 1.0}},
	} {
		t.Run(tc.agent+"/"+tc.event, func(t *testing.T) {
			s := spec(t, tc.agent)
			var doc js
			if err := json.Unmarshal([]byte(merged(t, s, "", testHookBin)), &doc); err != nil {
				t.Fatal(err)
			}
			hooks := doc["hooks"].(js)
			if got := hooks[tc.event]; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("hooks.%s = %#v\nwant %#v", tc.event, got, tc.want)
			}
			var events []string
			for ev := range hooks {
				events = append(events, ev)
			}
			if slices.Sort(events); !slices.Equal(events, slices.Sorted(slices.Values(s.events))) {
				t.Errorf("events %v, want %v", events, s.events)
			}
			for k, v := range tc.top {
				if !reflect.DeepEqual(doc[k], v) {
					t.Errorf("%s = %#v, want %#v", k, doc[k], v)
				}
			}
		})
	}
}

const userSettings = `{
    "model": "opus",
    "permissions": {"allow": ["Bash(go test:*)"], "deny": []},
    "hooks": {
        "Stop": [
            {
                "matcher": "",
                "hooks": [{"type": "command", "command": "notify-send done"}]
            }
        ],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}]
    },
    "unknownFutureKey": {"nested": [1, 2, {"deep": null}]}
}
`

func TestMergeKeepsUserContent(t *testing.T) {
	s := spec(t, "claude-code")
	out := merged(t, s, userSettings, testHookBin)

	// Every key and value of the user's file is still there, in order.
	orig, got := mustParse(t, userSettings), mustParse(t, out)
	var keys []string
	for _, m := range got.members {
		keys = append(keys, m.key)
	}
	if want := []string{"model", "permissions", "hooks", "unknownFutureKey"}; !slices.Equal(keys, want) {
		t.Errorf("top-level keys %v, want %v", keys, want)
	}
	for _, k := range []string{"model", "permissions", "unknownFutureKey"} {
		if got.get(k).raw != orig.get(k).raw {
			t.Errorf("%s changed: %s", k, got.get(k).raw)
		}
	}
	stop := got.get("hooks").get("Stop")
	if len(stop.elems) != 2 || stop.elems[0].raw != orig.get("hooks").get("Stop").elems[0].raw {
		t.Errorf("the user's Stop hook is not first and intact: %s", compact(stop))
	}
	if got.get("hooks").get("PreToolUse").raw != orig.get("hooks").get("PreToolUse").raw {
		t.Error("PreToolUse changed")
	}
	// The file's own indentation is used for what we add.
	if !strings.Contains(out, "\n        \"SessionStart\": [\n            {\n                \"matcher\": \"\",") {
		t.Errorf("added entries do not follow the file's 4-space indentation:\n%s", out)
	}
}

func TestMergeIsIdempotent(t *testing.T) {
	for _, s := range agentSpecs {
		for _, src := range []string{"", userSettings, "{\n\t\"hooks\": {}\n}\n"} {
			once := merged(t, s, src, testHookBin)
			if twice := merged(t, s, once, testHookBin); twice != once {
				t.Errorf("%s: second merge changed the file:\n%s\nthen\n%s", s.name, once, twice)
			}
		}
	}
}

func TestMergeUpdatesStaleEntryInPlace(t *testing.T) {
	s := spec(t, "claude-code")
	old := merged(t, s, userSettings, "/old/place/tether-hook")
	// The user moved our entry into their own group, and a copy crept in.
	d, _ := parseDocument([]byte(old))
	stop := d.root.get("hooks").get("Stop")
	ours := stop.elems[1].get("hooks").elems[0]
	userGroup := stop.elems[0].get("hooks")
	userGroup.elems = append(userGroup.elems, ours)
	userGroup.dirty = true
	moved := string(d.bytes())

	out := mustParse(t, merged(t, s, moved, testHookBin))
	stop = out.get("hooks").get("Stop")
	if len(stop.elems) != 1 {
		t.Fatalf("duplicate group not removed: %s", compact(stop))
	}
	inner := stop.elems[0].get("hooks").elems
	if len(inner) != 2 {
		t.Fatalf("want the user's hook and ours in the user's group, got %s", compact(stop))
	}
	if cmd, _ := inner[1].get("command").str(); cmd != hookCommand(testHookBin, "claude-code", "Stop") {
		t.Errorf("stale command not updated in place: %s", cmd)
	}
}

func TestMergeRejectsMalformedHooks(t *testing.T) {
	for _, src := range []string{`{"hooks": []}`, `{"hooks": {"Stop": {}}}`} {
		d, _ := parseDocument([]byte(src))
		if err := spec(t, "claude-code").merge(d.root, testHookBin); err == nil {
			t.Errorf("merge accepted %s", src)
		}
	}
}

func TestUnmergeRestoresOriginal(t *testing.T) {
	for _, s := range agentSpecs {
		for _, src := range []string{
			userSettings,
			"",
			"{}",
			`{"hooks": {}}`,
			`{"hooks": {"Stop": []}, "hooksConfig": {"disabled": ["x"]}}`,
			`{"version": 1, "hooks": {"stop": [{"command": "mine"}]}}`,
			`{"hooksConfig": {"enabled": true}}`,
		} {
			orig := mustParse(t, src)
			back := mustParse(t, unmerged(t, s, merged(t, s, src, testHookBin), orig))
			if !equal(back, orig) {
				t.Errorf("%s: %q came back as %s", s.name, src, compact(back))
			}
		}
	}
}

func TestUnmergeWithoutRecord(t *testing.T) {
	s := spec(t, "gemini")
	src := `{"theme": "dark", "hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "mine"}]}], "Keep": []}}`
	back := mustParse(t, unmerged(t, s, merged(t, s, src, testHookBin), nil))
	want := mustParse(t, `{"theme": "dark", "hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "mine"}]}], "Keep": []}, "hooksConfig": {"enabled": true}}`)
	// Without a record, what we emptied goes, what the user had stays, and
	// hooksConfig.enabled stays since it may be the user's.
	if !equal(back, want) {
		t.Errorf("got %s\nwant %s", compact(back), compact(want))
	}
}

func TestUnmergeRemovesOnlyOurs(t *testing.T) {
	s := spec(t, "cursor")
	src := `{"version": 1, "hooks": {"stop": [{"command": "a"}, {"command": "/x/tether-hook cursor stop"}, {"command": "b"}]}}`
	got := compact(mustParse(t, unmerged(t, s, src, nil)))
	if want := `{"version":1,"hooks":{"stop":[{"command":"a"},{"command":"b"}]}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestUnmergeKeepsDuplicateKey(t *testing.T) {
	s := spec(t, "cursor")
	src := `{"hooks": {"stop": [{"command": "tether-hook cursor stop"}], "stop": [{"command": "mine"}]}}`
	got := compact(mustParse(t, unmerged(t, s, src, nil)))
	if want := `{"hooks":{"stop":[{"command":"mine"}]}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestStatus(t *testing.T) {
	s := spec(t, "codex")
	full := merged(t, s, "", testHookBin)
	if missing, stale := s.status(mustParse(t, full), testHookBin); missing != nil || stale != nil {
		t.Errorf("fresh config: missing %v, stale %v", missing, stale)
	}
	if _, stale := s.status(mustParse(t, full), "/elsewhere/tether-hook"); len(stale) != len(s.events) {
		t.Errorf("moved binary: stale %v", stale)
	}
	partial := unmerged(t, s, full, nil)
	if missing, _ := s.status(mustParse(t, partial), testHookBin); len(missing) != len(s.events) {
		t.Errorf("after unmerge: missing %v", missing)
	}
}

// TestDetect: install finds the agents a user has where the user would
// look: config directories in the project (not .github alone, which nearly
// every GitHub repository has), homes in the user's directory (as the
// agents' own variables move them), commands on PATH.
func TestDetect(t *testing.T) {
	setup(t)
	dir, home, bin := newRepo(t), t.TempDir(), t.TempDir()
	env := map[string]string{}
	opts := Options{Dir: dir, Home: home, Getenv: func(k string) string { return env[k] },
		LookPath: func(file string) (string, error) { return exec.LookPath(filepath.Join(bin, file)) }}
	detected := func() string {
		t.Helper()
		ps, err := Detect(opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range ps {
			out = append(out, p.Agent+": "+strings.Join(p.Where, ", "))
		}
		return strings.Join(out, "; ")
	}
	if got := detected(); got != "" {
		t.Errorf("nothing anywhere: %q", got)
	}
	if names, err := Agents(opts); err != nil || !slices.Equal(names, []string{"claude-code"}) {
		t.Errorf("with none found, install sets up %v (%v), want Claude Code", names, err)
	}
	for _, d := range []string{".github", ".cursor", ".gemini"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := detected(), "gemini: .gemini/ in the repository; cursor: .cursor/ in the repository"; got != want {
		t.Errorf("project dirs: %q, want %q", got, want)
	}
	for _, d := range []string{".codex-elsewhere", ".claude", ".copilot", ".config/opencode"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeExec(t, filepath.Join(bin, "gemini"), "#!/bin/sh\n")
	writeExec(t, filepath.Join(bin, "codex"), "#!/bin/sh\n")
	if got, want := detected(), "claude-code: ~/.claude; gemini: .gemini/ in the repository, gemini on PATH; codex: codex on PATH; cursor: .cursor/ in the repository; copilot: ~/.copilot; opencode: ~/.config/opencode"; got != want {
		t.Errorf("homes and commands:\n got %q\nwant %q", got, want)
	}
	env["CODEX_HOME"] = filepath.Join(home, ".codex-elsewhere")
	env["XDG_CONFIG_HOME"] = filepath.Join(home, "xdg")
	if got, want := detected(), "claude-code: ~/.claude; gemini: .gemini/ in the repository, gemini on PATH; codex: ~/.codex-elsewhere, codex on PATH; cursor: .cursor/ in the repository; copilot: ~/.copilot"; got != want {
		t.Errorf("CODEX_HOME and XDG_CONFIG_HOME:\n got %q\nwant %q", got, want)
	}
	if names, err := Agents(opts); err != nil || strings.Join(names, ",") != "claude-code,gemini,codex,cursor,copilot" {
		t.Errorf("install sets up %v (%v), want the agents found", names, err)
	}
}

func TestShQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/local/bin/tether-hook": "/usr/local/bin/tether-hook",
		"/Users/A B/bin/tether-hook": "'/Users/A B/bin/tether-hook'",
		"/it's/here":                 `'/it'\''s/here'`,
		"C:/x/tether-hook.exe":       "C:/x/tether-hook.exe",
		"":                           "''",
	} {
		if got := shQuote(in); got != want {
			t.Errorf("shQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// The command agents run is real shell: it runs tether-hook with the agent
// and event when the binary is there, and is a silent success when not.
func TestHookCommandRuns(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	bin := filepath.Join(dir, "my bin", "tether-hook")
	writeExec(t, bin, "#!/bin/sh\necho \"$* $PPID\" >>\""+log+"\"\n")

	cmd := exec.Command("sh", "-c", hookCommand(bin, "claude-code", "Stop"))
	if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
		t.Fatalf("hook command: %v, output %q", err, out)
	}
	got, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(got), "claude-code Stop ") {
		t.Errorf("tether-hook got %q", got)
	}

	for _, c := range []string{
		hookCommand(filepath.Join(dir, "gone", "tether-hook"), "codex", "Stop"),
		"PATH=/nonexistent; " + hookCommand("", "codex", "Stop"),
	} {
		out, err := exec.Command("sh", "-c", c).CombinedOutput()
		if err != nil || len(out) != 0 {
			t.Errorf("%s: missing binary gave %v, output %q", c, err, out)
		}
	}
}

func writeExec(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// FuzzConfigMerge: on any JSON object (JSONC: comments, trailing commas),
// install then uninstall never panics, install keeps every value the user
// had and leaves strict JSON strict, and uninstall gives back the original
// value.
func FuzzConfigMerge(f *testing.F) {
	for _, s := range []string{
		userSettings, "", "{}", `{"hooks": {}}`, `{"hooks": {"Stop": [{"hooks": "x"}, 3, {"hooks": [1, {"command": 2}]}]}}`,
		`{"version": 2, "hooks": {"stop": [{"command": "x"}]}}`, `{"hooksConfig": false}`, `{"a": {"a": {"a": []}}, "a": 1}`,
		"{\r\n\t\"hooks\": {\"SessionStart\": []}\r\n}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if strings.Contains(src, hookBinary) {
			return // such input already has entries we would own
		}
		orig, err := parseDocument([]byte(src))
		if err != nil {
			return
		}
		for _, s := range agentSpecs {
			d, _ := parseDocument([]byte(src))
			if err := s.merge(d.root, testHookBin); err != nil {
				continue // a shape the agent itself rejects; nothing was promised
			}
			installed := d.bytes()
			// What the user wrote is kept as written: a trailing comma or a
			// comment of theirs stays, and only strict JSON must stay strict.
			var v any
			if err := json.Unmarshal(installed, &v); err != nil && json.Valid([]byte(src)) {
				t.Fatalf("%s: install produced invalid JSON: %v\n%s", s.name, err, installed)
			}
			id, err := parseDocument(installed)
			if err != nil {
				t.Fatalf("%s: reparse: %v", s.name, err)
			}
			keepsAll(t, s.name, orig.root, id.root, false)

			s.unmerge(id.root, orig.root)
			if !equal(id.root, orig.root) {
				t.Fatalf("%s: uninstall gave %s, want %s", s.name, compact(id.root), compact(orig.root))
			}
			nd, _ := parseDocument(installed)
			s.unmerge(nd.root, nil)
			keepsAll(t, s.name+" without record", orig.root, nd.root, false)

			// Moving the binary and installing again updates our entries in
			// place; uninstall still gives the original back.
			md, _ := parseDocument(installed)
			if err := s.merge(md.root, "/moved/tether-hook"); err != nil {
				t.Fatalf("%s: second install: %v", s.name, err)
			}
			s.unmerge(md.root, orig.root)
			if !equal(md.root, orig.root) {
				t.Fatalf("%s: uninstall after a move gave %s, want %s", s.name, compact(md.root), compact(orig.root))
			}
		}
	})
}

// keepsAll checks that every object member of want is in got with the same
// value, except our additions inside hook arrays (arrays may only grow).
// Where lenient is set (under "hooks", uninstalling without a record), a
// member may be gone if it held nothing but empty containers.
func keepsAll(t *testing.T, name string, want, got *node, lenient bool) {
	t.Helper()
	switch want.kind {
	case objectNode:
		if got.kind != objectNode {
			t.Fatalf("%s: object became %s", name, compact(got))
		}
		for _, m := range want.members {
			if m.val != want.get(m.key) {
				continue // with duplicate keys only the last counts
			}
			g := got.get(m.key)
			if g == nil {
				if (lenient || m.key == "hooks") && hollow(m.val) {
					continue
				}
				t.Fatalf("%s: lost key %q", name, m.key)
			}
			keepsAll(t, name, m.val, g, lenient || m.key == "hooks")
		}
	case arrayNode:
		if got.kind != arrayNode || len(got.elems) < len(want.elems) {
			t.Fatalf("%s: array %s became %s", name, compact(want), compact(got))
		}
		for _, w := range want.elems {
			if !slices.ContainsFunc(got.elems, func(g *node) bool { return containsAll(w, g) }) {
				t.Fatalf("%s: lost element %s of %s", name, compact(w), compact(got))
			}
		}
	default:
		if canonical(want) != canonical(got) {
			t.Fatalf("%s: %s became %s", name, want.raw, compact(got))
		}
	}
}

// hollow tells whether a value is made of empty objects and arrays only.
func hollow(n *node) bool {
	switch n.kind {
	case objectNode:
		for _, m := range n.members {
			if !hollow(m.val) {
				return false
			}
		}
		return true
	case arrayNode:
		for _, e := range n.elems {
			if !hollow(e) {
				return false
			}
		}
		return true
	}
	return false
}

// containsAll tells whether g holds w, allowing our entries added inside.
func containsAll(w, g *node) bool {
	if w.kind != g.kind {
		return false
	}
	switch w.kind {
	case objectNode:
		for _, m := range w.members {
			if m.val != w.get(m.key) {
				continue
			}
			gv := g.get(m.key)
			if gv == nil || !containsAll(m.val, gv) {
				return false
			}
		}
		return true
	case arrayNode:
		for _, we := range w.elems {
			if !slices.ContainsFunc(g.elems, func(ge *node) bool { return containsAll(we, ge) }) {
				return false
			}
		}
		return true
	default:
		return canonical(w) == canonical(g)
	}
}

// guardedPath reads back the binary an absolute-path entry runs, as
// hookCommand wrote it; a command finding tether on PATH names none.
func TestGuardedPath(t *testing.T) {
	for bin, want := range map[string]string{
		"/home/alice/.local/bin/tether-hook": "/home/alice/.local/bin/tether-hook",
		"/opt/my tether/tether-hook":         "/opt/my tether/tether-hook",
		"/opt/it's/tether-hook":              "/opt/it's/tether-hook",
		"":                                   "",
	} {
		if got := guardedPath(hookCommand(bin, "claude-code", "Stop")); got != want {
			t.Errorf("guardedPath(hookCommand(%q)) = %q, want %q", bin, got, want)
		}
	}
	if got := guardedPath("my-own-hook --flag"); got != "" {
		t.Errorf("a user's command: %q", got)
	}
}

// An option for an agent the install leaves out is refused before
// anything changes.
func TestTrustWithoutCodex(t *testing.T) {
	setup(t)
	dir := newRepo(t)
	_, err := Install(Options{Dir: dir, Home: t.TempDir(), Agents: []string{"claude-code"}, Trust: true})
	if !errors.Is(err, ErrNotSetUp) || !strings.Contains(err.Error(), "add --agent codex") {
		t.Fatalf("install --trust without Codex: %v", err)
	}
	if exists(filepath.Join(dir, ".claude")) || exists(filepath.Join(dir, ".git", "hooks", "post-commit")) {
		t.Error("the refused install changed things")
	}
}
