package install

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Hashes the real Codex 0.169.0 accepted: with these trust records in its
// config.toml it ran the hooks of a project hooks.json holding these
// commands, and without them it skipped them.
func TestCodexHookHashAsCodexComputesIt(t *testing.T) {
	for _, tc := range []struct {
		event, command string
		timeout        int
		want           string
	}{
		{"SessionStart", "echo started >> /tmp/cx/ran # tether-hook", 10, "sha256:dfc4aebaeb0ecf6ec4767ba0b3b06556ca2fcb436458c1a96649b4dae7d0714f"},
		{"SessionEnd", "echo ended >> /tmp/cx/ran # tether-hook", 3, "sha256:7f56d9249adf79c45fd311f283ca46113bee378af34db0015fcbbd6e29af58cf"},
		// SessionEnd runs 3 s at most: a longer timeout hashes as 3.
		{"SessionEnd", "echo ended >> /tmp/cx/ran # tether-hook", 600, "sha256:7f56d9249adf79c45fd311f283ca46113bee378af34db0015fcbbd6e29af58cf"},
	} {
		if got := codexHookHash(tc.event, "", false, tc.command, tc.timeout); got != tc.want {
			t.Errorf("codexHookHash(%s, %q, %d) = %s, want %s", tc.event, tc.command, tc.timeout, got, tc.want)
		}
	}
	// Any command, matcher or not: the key-sorted compact JSON, no HTML
	// escaping (as serde_json writes it), checked against encoding/json.
	for _, command := range []string{`[ -x '/opt/my tether/tether-hook' ] && exec x codex Stop || true`, "a<b>&\"c\"\\\n\t\x01é"} {
		for _, m := range []*string{nil, new(string), ptr("Bash|Write")} {
			obj := map[string]any{"event_name": "user_prompt_submit",
				"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": 10, "async": false}}}
			matcher := ""
			if m != nil {
				obj["matcher"], matcher = *m, *m
			}
			var b strings.Builder
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(obj); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(strings.TrimSuffix(b.String(), "\n")))
			if got, want := codexHookHash("UserPromptSubmit", matcher, m != nil, command, 10), "sha256:"+hex.EncodeToString(sum[:]); got != want {
				t.Errorf("command %q, matcher %v: %s, want %s", command, m, got, want)
			}
		}
	}
}

func ptr(s string) *string { return &s }

// TestCodexTrust: install says Codex will skip tether's hooks until they
// are trusted; with --trust it trusts exactly them, doctor is then content
// about them, and uninstall takes the trust out again.
func TestCodexTrust(t *testing.T) {
	setup(t)
	home := os.Getenv("HOME")
	dir := newRepo(t)
	top, _ := filepath.EvalSymlinks(dir)
	cfgPath := filepath.Join(home, ".codex", "config.toml")
	userCfg := "# my settings\nmodel = \"gpt-5\"\n\n[projects.\"" + top + "\"]\ntrust_level = \"trusted\"\n"
	writeFile(t, cfgPath, userCfg)
	opts := Options{Dir: dir, Home: home, Agents: []string{"codex"}, HookPath: hookExe(t), NoGitHooks: true}

	res, err := Install(opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "tether-sweep install --trust") }) {
		t.Errorf("notes %q: want one saying how to trust tether's hooks", res.Notes)
	}
	probs := Check(opts)
	if len(probs) != 1 || !strings.Contains(probs[0].What, "Codex will skip 8 of tether's hooks") || probs[0].Fix != nil {
		t.Fatalf("doctor: %+v; want the 8 untrusted hooks, with no fix unless asked to trust", probs)
	}

	opts.Trust = true
	if probs := Check(opts); len(probs) != 1 || probs[0].Fix == nil {
		t.Fatalf("doctor --trust: %+v; want a fix", probs)
	}
	if _, err := Install(opts); err != nil {
		t.Fatal(err)
	}
	cfg := readFile(t, cfgPath)
	if !strings.HasPrefix(cfg, userCfg) {
		t.Errorf("config.toml lost what the user had:\n%s", cfg)
	}
	hooksJSON := filepath.Join(top, ".codex", "hooks.json")
	for _, ev := range []string{"session_start", "user_prompt_submit", "stop", "interrupt", "session_end"} {
		key := `[hooks.state."` + hooksJSON + ":" + ev + `:0:0"]`
		if !strings.Contains(cfg, key+"\ntrusted_hash = \"sha256:") {
			t.Errorf("config.toml has no trust for %s:\n%s", ev, cfg)
		}
	}
	if probs := Check(opts); len(probs) != 0 {
		t.Errorf("doctor after install --trust: %+v", probs)
	}
	// A second run changes nothing; a new command revokes and renews.
	if _, err := Install(opts); err != nil || readFile(t, cfgPath) != cfg {
		t.Errorf("second install --trust changed config.toml (%v)", err)
	}
	// An older tether's entries, naming this machine's binary: doctor
	// finds them, and install rewrites them and renews their trust.
	hooksFile := filepath.Join(dir, ".codex", "hooks.json")
	writeFile(t, hooksFile, merged(t, spec(t, "codex"), readFile(t, hooksFile), hookExe(t)))
	if probs := Check(opts); len(probs) != 2 || !strings.Contains(probs[0].What, "a path on one machine") || !strings.Contains(probs[1].What, "Codex will skip 8") {
		t.Errorf("doctor with the old entries: %+v; want them, and their trust missing", probs)
	}
	moved := opts
	if _, err := Install(moved); err != nil {
		t.Fatal(err)
	}
	if probs := Check(moved); len(probs) != 0 {
		t.Errorf("doctor after reinstall: %+v", probs)
	}
	if n := strings.Count(readFile(t, cfgPath), "[hooks.state."); n != 8 {
		t.Errorf("config.toml has %d trust records, want 8 (renewed in place)", n)
	}

	if _, err := Uninstall(moved); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, cfgPath); got != userCfg {
		t.Errorf("after uninstall config.toml is\n%s\nwant\n%s", got, userCfg)
	}
}

// TestTrustGates: doctor says when an agent will not run the hooks
// because of its own switches and trust: Codex's feature flag and project
// trust, Gemini CLI's and Copilot CLI's trusted folders.
func TestTrustGates(t *testing.T) {
	setup(t)
	home := os.Getenv("HOME")
	dir := newRepo(t)
	top, _ := filepath.EvalSymlinks(dir)
	opts := Options{Dir: dir, Home: home, Agents: []string{"codex", "gemini", "copilot"}, HookPath: hookExe(t), NoGitHooks: true, Trust: true}
	if _, err := Install(opts); err != nil {
		t.Fatal(err)
	}
	whats := func() []string {
		var out []string
		for _, p := range Check(opts) {
			out = append(out, p.What)
		}
		return out
	}
	want := []string{
		"Codex does not trust this project, so it ignores the project's hooks",
		"Gemini CLI does not trust this folder, so it runs none of its hooks",
		"Copilot CLI does not trust this folder, so it loads none of its repository hooks",
	}
	if got := whats(); !slices.Equal(got, want) {
		t.Fatalf("doctor: %q\nwant %q", got, want)
	}
	cfgPath := filepath.Join(home, ".codex", "config.toml")
	writeFile(t, cfgPath, readFile(t, cfgPath)+"\n[features]\nhooks = false\n\n[projects.\""+filepath.Dir(top)+"\"]\ntrust_level = \"trusted\"\n")
	writeFile(t, filepath.Join(home, ".gemini", "trustedFolders.json"), `{"`+top+`": "TRUST_FOLDER"}`)
	writeFile(t, filepath.Join(home, "copilot-home", "config.json"), `{"trustedFolders": ["`+filepath.Dir(top)+`"]}`)
	t.Setenv("COPILOT_HOME", filepath.Join(home, "copilot-home"))
	if got := whats(); !slices.Equal(got, []string{"Codex hooks are turned off"}) {
		t.Errorf("doctor: %q, want only Codex's flag", got)
	}
	writeFile(t, filepath.Join(home, ".gemini", "trustedFolders.json"), `{"`+top+`": "DO_NOT_TRUST"}`)
	if got := whats(); len(got) != 2 || got[1] != want[1] {
		t.Errorf("doctor with the folder distrusted: %q", got)
	}
}

// hookExe is an executable where install points the agents' hooks.
func hookExe(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tether-hook")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCopilotTrustReadsItsConfig: Copilot CLI 1.0.102 writes its
// config.json with // comments (testdata/copilot, as the real CLI wrote
// them: on first launch, and after "Yes, and remember this folder"), and
// doctor reads them as Copilot does.
func TestCopilotTrustReadsItsConfig(t *testing.T) {
	setup(t)
	home := os.Getenv("HOME")
	dir := newRepo(t)
	top, _ := filepath.EvalSymlinks(dir)
	opts := Options{Dir: dir, Home: home, Agents: []string{"copilot"}, HookPath: hookExe(t), NoGitHooks: true}
	if _, err := Install(opts); err != nil {
		t.Fatal(err)
	}
	recorded := func(name string) string {
		return strings.ReplaceAll(readFile(t, filepath.Join("testdata", "copilot", name)), "/home/dev/project", top)
	}
	const untrusted = "Copilot CLI does not trust this folder, so it loads none of its repository hooks"
	const unreadable = "cannot read Copilot CLI's config"
	for _, tc := range []struct {
		name, config, want string
	}{
		{"first launch", recorded("config_first_launch.json"), untrusted},
		{"the folder remembered", recorded("config_trusted.json"), ""},
		{"a parent trusted, trailing commas", "// c\n{\"trustedFolders\": [\"" + filepath.Dir(top) + "\",],}\n", ""},
		{"block comments", "/* a */ {\"trustedFolders\": /* b */ [\"" + top + "\"]}", ""},
		{"another folder", "// c\n{\"trustedFolders\": [\"/elsewhere\"]}", untrusted},
		{"not a list", `{"trustedFolders": "` + top + `"}`, untrusted},
		{"no file", "", untrusted},
		{"broken", "// c\n{\"trustedFolders\": [", unreadable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(home, ".copilot", "config.json")
			os.Remove(cfg)
			if tc.config != "" {
				writeFile(t, cfg, tc.config)
			}
			var got []string
			for _, p := range Check(opts) {
				got = append(got, p.What)
			}
			if want := []string{tc.want}; (tc.want == "" && len(got) != 0) || (tc.want != "" && !slices.Equal(got, want)) {
				t.Errorf("doctor: %q, want %q", got, tc.want)
			}
		})
	}
}
