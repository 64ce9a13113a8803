package install

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/BurntSushi/toml"
)

// What each agent needs beyond its hook config before it really runs the
// hooks (see docs/agents.md): the agents' own trust gates. Trusting
// tether's own entries (Codex's per-hook hashes) is something install does
// when asked (Options.Trust); trusting a whole folder is the user's call,
// so install and doctor only say how.

// trustedHashPrefix starts a Codex trusted_hash value.
const trustedHashPrefix = "sha256:"

// codexTrust is one of our Codex hook entries as Codex's trust gate names
// it: the key of its [hooks.state."…"] table in config.toml, and the
// trusted_hash that table must hold.
type codexTrust struct{ key, hash string }

// codexTrusts lists the trust records our entries in a Codex hooks.json
// need. Codex keys a hook by "<hooks.json path>:<event in snake_case>:
// <group index>:<handler index>" and trusts it while the hash of what it
// runs is unchanged (see codexHookHash).
func codexTrusts(hooksPath string, root *node) []codexTrust {
	var out []codexTrust
	hooks := root.get("hooks")
	for _, m := range hooks.objectMembers() {
		ev, arr := m.key, m.val
		if arr == nil || arr.kind != arrayNode {
			continue
		}
		for gi, group := range arr.elems {
			inner := group.get("hooks")
			if inner == nil || inner.kind != arrayNode {
				continue
			}
			for hi, h := range inner.elems {
				if !isOurs(h) {
					continue
				}
				command, _ := h.get("command").str()
				timeout := 600
				if t := h.get("timeout"); t != nil {
					if n, err := strconv.Atoi(t.raw); err == nil {
						timeout = n
					}
				}
				matcher, hasMatcher := group.get("matcher").str()
				key := fmt.Sprintf("%s:%s:%d:%d", hooksPath, snakeCase(ev), gi, hi)
				out = append(out, codexTrust{key, codexHookHash(ev, matcher, hasMatcher, command, timeout)})
			}
		}
	}
	return out
}

// codexHookHash is the hash Codex 0.169 trusts a command hook by: sha256 of
// the compact, key-sorted JSON of {"event_name", "matcher" (when the group
// has one), "hooks": [{"type":"command","command","timeout","async":false}]},
// written as serde_json writes it (no HTML escaping). The timeout is the
// entry's (600 without one); SessionEnd and Interrupt run 3 s at most.
func codexHookHash(event, matcher string, hasMatcher bool, command string, timeout int) string {
	if (event == "SessionEnd" || event == "Interrupt") && timeout > 3 {
		timeout = 3
	}
	var b strings.Builder
	b.WriteString(`{"event_name":`)
	b.WriteString(serdeString(snakeCase(event)))
	b.WriteString(`,"hooks":[{"async":false,"command":`)
	b.WriteString(serdeString(command))
	b.WriteString(`,"timeout":`)
	b.WriteString(strconv.Itoa(timeout))
	b.WriteString(`,"type":"command"}]`)
	if hasMatcher {
		b.WriteString(`,"matcher":`)
		b.WriteString(serdeString(matcher))
	}
	b.WriteString("}")
	sum := sha256.Sum256([]byte(b.String()))
	return trustedHashPrefix + hex.EncodeToString(sum[:])
}

// serdeString quotes s as serde_json does: only '"', '\\' and control
// characters are escaped.
func serdeString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// snakeCase turns Codex's event names into its keys: UserPromptSubmit →
// user_prompt_submit.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codexConfig is what tether reads of Codex's config.toml.
type codexConfig struct {
	Features map[string]any `toml:"features"`
	Hooks    struct {
		State map[string]struct {
			TrustedHash string `toml:"trusted_hash"`
		} `toml:"state"`
	} `toml:"hooks"`
	Projects map[string]struct {
		TrustLevel string `toml:"trust_level"`
	} `toml:"projects"`
}

func readCodexConfig(path string) (codexConfig, error) {
	var c codexConfig
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if _, err := toml.Decode(string(data), &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// hooksOff names the feature flag that turns Codex's hooks off, or "".
// `hooks` is on by default; `codex_hooks` is its deprecated alias.
func (c codexConfig) hooksOff() string {
	for _, flag := range []string{"hooks", "codex_hooks"} {
		if on, ok := c.Features[flag].(bool); ok && !on {
			return flag
		}
	}
	return ""
}

// projectTrusted tells whether Codex trusts the project at top (or a
// directory above it).
func (c codexConfig) projectTrusted(top string) bool {
	for dir := top; ; dir = filepath.Dir(dir) {
		if p, ok := c.Projects[dir]; ok {
			return p.TrustLevel == "trusted"
		}
		if filepath.Dir(dir) == dir {
			return false
		}
	}
}

// untrusted lists the trust records config lacks, or holds with another
// hash (the command changed since it was trusted).
func (c codexConfig) untrusted(want []codexTrust) []codexTrust {
	var out []codexTrust
	for _, w := range want {
		if c.Hooks.State[w.key].TrustedHash != w.hash {
			out = append(out, w)
		}
	}
	return out
}

// withCodexTrust writes trust records into config.toml's text: a table
// already there gets its trusted_hash replaced, a missing one is appended.
// Everything else in the file stays as it was. The result is parsed back,
// so a file Codex could not read is never written.
func withCodexTrust(cur []byte, trusts []codexTrust) ([]byte, error) {
	text := string(cur)
	for _, tr := range trusts {
		header := "[hooks.state." + tomlQuote(tr.key) + "]"
		line := "trusted_hash = " + tomlQuote(tr.hash)
		if i := strings.Index(text, header+"\n"); i >= 0 {
			body := i + len(header) + 1
			end := strings.Index(text[body:], "\n[")
			if end < 0 {
				end = len(text) - body
			}
			table := text[body : body+end]
			var kept []string
			for l := range strings.SplitSeq(table, "\n") {
				if !strings.HasPrefix(strings.TrimSpace(l), "trusted_hash") {
					kept = append(kept, l)
				}
			}
			text = text[:body] + line + "\n" + strings.TrimLeft(strings.Join(kept, "\n"), "\n") + text[body+end:]
			continue
		}
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if text != "" {
			text += "\n"
		}
		text += header + "\n" + line + "\n"
	}
	var c codexConfig
	if _, err := toml.Decode(text, &c); err != nil {
		return nil, fmt.Errorf("the trusted hooks would make it unreadable: %w", err)
	}
	if missing := c.untrusted(trusts); len(missing) > 0 {
		return nil, fmt.Errorf("could not write the trust of %s", missing[0].key)
	}
	return []byte(text), nil
}

// withoutCodexTrust removes the [hooks.state."…"] tables of keys.
func withoutCodexTrust(cur []byte, keys []string) []byte {
	text := string(cur)
	for _, k := range keys {
		header := "[hooks.state." + tomlQuote(k) + "]\n"
		i := strings.Index(text, header)
		if i < 0 {
			continue
		}
		end := strings.Index(text[i+len(header):], "\n[")
		if end < 0 {
			text = strings.TrimRight(text[:i], "\n")
			if text != "" {
				text += "\n"
			}
			continue
		}
		text = text[:i] + text[i+len(header)+end+1:]
	}
	return []byte(text)
}

// tomlQuote writes s as a TOML basic string, whose escapes are these.
func tomlQuote(s string) string { return serdeString(s) }

// agentHome is where an agent keeps its user files: $<envVar> when set,
// else ~/<dir>.
func (in *installer) agentHome(envVar, dir string) string {
	getenv := in.opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if h := getenv(envVar); h != "" {
		return h
	}
	if in.opts.Home == "" {
		return "" // unknown: nothing to check
	}
	return filepath.Join(in.opts.Home, dir)
}

// codexConfigPath is Codex's user config, "" when the home is unknown.
func (in *installer) codexConfigPath() string {
	if home := in.agentHome("CODEX_HOME", ".codex"); home != "" {
		return filepath.Join(home, "config.toml")
	}
	return ""
}

// hookTrust is what stands between an installed agent config and the
// agent running it: problems for doctor (with a fix where install may
// act), and for install, the same as notes.
func (in *installer) hookTrust(spec agentSpec, configPath string, root *node) []Problem {
	switch spec.name {
	case "codex":
		return in.codexTrust(configPath, root)
	case "gemini":
		return in.geminiTrust()
	case "copilot":
		return in.copilotTrust()
	case "droid":
		return in.droidTrust()
	case "qwen":
		return in.qwenTrust()
	}
	return nil
}

func (in *installer) codexTrust(hooksPath string, root *node) []Problem {
	cfgPath := in.codexConfigPath()
	if cfgPath == "" {
		return nil
	}
	cfg, err := readCodexConfig(cfgPath)
	if err != nil {
		return []Problem{{What: "cannot read Codex's config", Detail: err.Error()}}
	}
	var ps []Problem
	if flag := cfg.hooksOff(); flag != "" {
		ps = append(ps, Problem{
			What:   "Codex hooks are turned off",
			Detail: fmt.Sprintf("%s sets [features] %s = false, so Codex runs no hook; remove that line (hooks are on by default).", cfgPath, flag),
		})
	}
	if !in.opts.User && !cfg.projectTrusted(in.repo.top) {
		ps = append(ps, Problem{
			What: "Codex does not trust this project, so it ignores the project's hooks",
			Detail: fmt.Sprintf("trusting a project is your decision: accept Codex's prompt when it starts in %s, or add\n"+
				"    [projects.%s]\n    trust_level = \"trusted\"\nto %s.", in.repo.top, tomlQuote(in.repo.top), cfgPath),
		})
	}
	if missing := cfg.untrusted(codexTrusts(hooksPath, root)); len(missing) > 0 {
		p := Problem{
			What: fmt.Sprintf("Codex will skip %d of tether's hooks: they are not trusted", len(missing)),
			Detail: fmt.Sprintf("Codex runs a hook only once it is trusted (by its hash, in %s); "+
				"run `tether-sweep install --trust` to trust exactly tether's entries, or choose \"Trust all\" in Codex's hooks review.", cfgPath),
		}
		if in.opts.Trust {
			p.Fix = func() error { return in.trustCodex(hooksPath, root) }
		}
		ps = append(ps, p)
	}
	return ps
}

// trustCodex writes the trust records of our entries in hooksPath into
// Codex's config.toml, recorded in the user manifest so uninstall can
// take them out again.
func (in *installer) trustCodex(hooksPath string, root *node) error {
	trusts := codexTrusts(hooksPath, root)
	cfgPath := in.codexConfigPath()
	if cfgPath == "" || in.opts.Home == "" {
		return errors.New("no home directory to find Codex's config in")
	}
	return in.editFile(userManifest(in.opts.Home), cfgPath, "Codex hook trust", 0o600, func(cur []byte, _ bool) ([]byte, error) {
		var cfg codexConfig
		if _, err := toml.Decode(string(cur), &cfg); err != nil {
			return nil, err
		}
		missing := cfg.untrusted(trusts)
		if len(missing) == 0 {
			return cur, nil
		}
		return withCodexTrust(cur, missing)
	})
}

// untrustCodex takes the trust records of our entries in hooksPath out of
// Codex's config.toml.
func (in *installer) untrustCodex(hooksPath string, root *node) error {
	var keys []string
	for _, tr := range codexTrusts(hooksPath, root) {
		keys = append(keys, tr.key)
	}
	if len(keys) == 0 {
		return nil
	}
	cfgPath := in.codexConfigPath()
	if _, err := os.Stat(cfgPath); cfgPath == "" || err != nil {
		return nil
	}
	return in.undoFile(userManifest(in.opts.Home), cfgPath, "Codex hook trust", func(cur []byte, rec *fileRecord) ([]byte, bool, error) {
		out := withoutCodexTrust(cur, keys)
		if rec != nil && !rec.Existed && strings.TrimSpace(string(out)) == "" {
			return nil, true, nil
		}
		if rec != nil && rec.Existed && strings.TrimRight(string(out), "\n") == strings.TrimRight(string(rec.Original), "\n") {
			return rec.Original, false, nil
		}
		return out, false, nil
	})
}

// geminiTrust: with folder trust on (the default), Gemini CLI runs no hook
// at all in a folder the user has not trusted.
func (in *installer) geminiTrust() []Problem {
	if in.opts.Home == "" {
		return nil
	}
	home := filepath.Join(in.opts.Home, ".gemini")
	settings, _ := os.ReadFile(filepath.Join(home, "settings.json"))
	if doc, err := parseDocument(settings); err == nil {
		if e := doc.root.get("security").get("folderTrust").get("enabled"); e != nil && e.raw == "false" {
			return nil
		}
	}
	trustedPath := filepath.Join(home, "trustedFolders.json")
	top := resolved(in.repo.top)
	if trusted, p := trustedFolder(trustedPath, "Gemini CLI", top); trusted || p != nil {
		return problems(p)
	}
	return []Problem{{
		What: "Gemini CLI does not trust this folder, so it runs none of its hooks",
		Detail: fmt.Sprintf("trusting a folder is your decision: choose \"Trust folder\" when Gemini CLI asks in %s, or add\n"+
			"    %q: \"TRUST_FOLDER\"\nto %s.", top, top, trustedPath),
	}}
}

// trustedFolder reads a trustedFolders.json of Gemini CLI's kind (Qwen
// Code keeps one too) and applies its rules to dir (geminiTrusts); a file
// it cannot read is a problem.
func trustedFolder(path, display, dir string) (bool, *Problem) {
	rules := map[string]string{}
	if data, err := os.ReadFile(path); err == nil {
		doc, err := parseDocument(data)
		if err != nil {
			return false, &Problem{What: "cannot read " + display + "'s trusted folders", Detail: path + ": " + err.Error()}
		}
		for _, m := range doc.root.objectMembers() {
			if v, ok := m.val.str(); ok {
				rules[m.key] = v
			}
		}
	}
	return geminiTrusts(rules, dir), nil
}

// problems is p as a list: none for nil.
func problems(p *Problem) []Problem {
	if p == nil {
		return nil
	}
	return []Problem{*p}
}

// geminiTrusts applies Gemini CLI's trust rules to dir: the nearest rule
// on the way up decides; TRUST_PARENT on a folder trusts its parent's tree.
func geminiTrusts(rules map[string]string, dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		switch rules[d] {
		case "TRUST_FOLDER":
			return true
		case "DO_NOT_TRUST":
			return false
		}
		for p, v := range rules {
			if v == "TRUST_PARENT" && filepath.Dir(p) == d {
				return true
			}
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// copilotTrust: Copilot CLI loads a repository's .github/hooks only in a
// folder the user trusted (its config.json's trustedFolders). Copilot
// writes that file with comments.
func (in *installer) copilotTrust() []Problem {
	if in.opts.User {
		return nil // user hooks load everywhere
	}
	home := in.agentHome("COPILOT_HOME", ".copilot")
	if home == "" {
		return nil
	}
	cfgPath := filepath.Join(home, "config.json")
	var trusted []*node
	if data, err := os.ReadFile(cfgPath); err == nil {
		doc, err := parseDocument(data)
		if err != nil {
			return []Problem{{What: "cannot read Copilot CLI's config", Detail: cfgPath + ": " + err.Error()}}
		}
		if folders := doc.root.get("trustedFolders"); folders != nil && folders.kind == arrayNode {
			trusted = folders.elems
		}
	}
	top := resolved(in.repo.top)
	for _, e := range trusted {
		f, ok := e.str()
		if !ok {
			continue
		}
		if rel, err := filepath.Rel(resolved(f), top); err == nil && !strings.HasPrefix(rel, "..") {
			return nil
		}
	}
	return []Problem{{
		What: "Copilot CLI does not trust this folder, so it loads none of its repository hooks",
		Detail: fmt.Sprintf("trusting a folder is your decision: answer \"Yes, and remember this folder\" when Copilot CLI asks in %s "+
			"(or add it to trustedFolders in %s); until then only user-level hooks run (tether-sweep install --user --agent copilot).", top, cfgPath),
	}}
}

// droidTrust: Droid's TUI runs a repository's hooks only in a folder the
// user trusted (its "Trust this folder?" dialog, kept in
// ~/.factory/settings.json's trustedFolders); `droid exec` runs them
// regardless.
func (in *installer) droidTrust() []Problem {
	if in.opts.User || in.opts.Home == "" {
		return nil // user hooks run everywhere
	}
	cfgPath := filepath.Join(in.opts.Home, ".factory", "settings.json")
	top := resolved(in.repo.top)
	if data, err := os.ReadFile(cfgPath); err == nil {
		doc, err := parseDocument(data)
		if err != nil {
			return []Problem{{What: "cannot read Droid's settings", Detail: cfgPath + ": " + err.Error()}}
		}
		for _, m := range doc.root.get("trustedFolders").objectMembers() {
			if rel, err := filepath.Rel(resolved(m.key), top); err == nil && !strings.HasPrefix(rel, "..") {
				return nil
			}
		}
	}
	return []Problem{{
		What: "Droid's TUI does not trust this folder, so it runs none of its repository hooks",
		Detail: fmt.Sprintf("trusting a folder is your decision: choose \"Trust this folder\" when Droid asks in %s "+
			"(kept in trustedFolders in %s); `droid exec` runs the hooks regardless, and user-level hooks run everywhere "+
			"(tether-sweep install --user --agent droid).", top, cfgPath),
	}}
}

// qwenTrust: Qwen Code's folder trust is off by default; turned on
// (security.folderTrust.enabled), it silently skips a repository's hooks
// in a folder the user has not trusted, with Gemini CLI's rules.
func (in *installer) qwenTrust() []Problem {
	if in.opts.User || in.opts.Home == "" {
		return nil
	}
	settings, _ := os.ReadFile(filepath.Join(in.opts.Home, ".qwen", "settings.json"))
	doc, err := parseDocument(settings)
	if err != nil || !doc.root.get("security").get("folderTrust").get("enabled").isTrue() {
		return nil
	}
	trustedPath := in.agentHome("QWEN_CODE_TRUSTED_FOLDERS_PATH", filepath.Join(".qwen", "trustedFolders.json"))
	top := resolved(in.repo.top)
	if trusted, p := trustedFolder(trustedPath, "Qwen Code", top); trusted || p != nil {
		return problems(p)
	}
	return []Problem{{
		What: "Qwen Code does not trust this folder, so it skips the repository's hooks",
		Detail: fmt.Sprintf("its folder trust is on, and trusting a folder is your decision: trust %s when Qwen Code asks, or add\n"+
			"    %q: \"TRUST_FOLDER\"\nto %s.", top, top, trustedPath),
	}}
}
