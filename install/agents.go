package install

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// hookBinary is the name that marks a hook entry as tether's: an entry
// whose command mentions it is ours, whatever else it says.
const hookBinary = "tether-hook"

// layout is how an agent's config nests its hook entries.
type layout uint8

const (
	// nested: {"hooks": {"Event": [{"matcher": ..., "hooks": [entry]}]}}
	// (Claude Code, Gemini CLI, Codex).
	nested layout = iota
	// flat: {"version": 1, "hooks": {"event": [entry]}} (Cursor, Copilot).
	flat
	// plugin: no hook config; the whole file is tether's plugin, which the
	// agent loads from a directory and which runs tether-hook (OpenCode,
	// Pi).
	plugin
	// topLevel: {"Event": [{"hooks": [entry]}]}, the events at the top
	// level of the file (Droid's hooks.json, which ignores a "hooks" key).
	topLevel
)

// agentSpec says where an agent keeps its hook config and which of its
// events tether listens to.
type agentSpec struct {
	name    string
	project string // config file, relative to the worktree
	user    string // config file, relative to the home directory
	marker  string // directory (relative to worktree or home) whose presence means the agent is used
	// userMarker is that directory at the user level when it is not the
	// first element of user (~/.config holds far more than OpenCode).
	userMarker string
	layout     layout
	events     []string

	matcher   bool   // nested groups carry "matcher": "" (Claude Code)
	entryName string // entries carry "name" (Gemini CLI, for hooksConfig.disabled)
	// timeoutKey names the entry's timeout ("" for none) and timeout
	// gives its value for an event, in the agent's unit: the agents wait
	// up to 60 s or 600 s for a hook that hangs, tether's returns in
	// milliseconds.
	timeoutKey string
	timeout    func(event string) int
	version    bool // top level carries "version": 1
	bashPwsh   bool // entries carry "bash" and "powershell" instead of "command" (Copilot)
	enableFlag bool // hooksConfig.enabled must be true (Gemini CLI before 0.27)
}

// agentSpecs lists the supported agents, in the order they are reported.
// Formats are the ones each agent documents for its hooks.
var agentSpecs = []agentSpec{
	{
		name: "claude-code", project: ".claude/settings.json", user: ".claude/settings.json", marker: ".claude",
		layout: nested, matcher: true, timeoutKey: "timeout", timeout: seconds(10),
		events: []string{"SessionStart", "UserPromptSubmit", "Stop", "StopFailure", "SessionEnd",
			"PermissionRequest", "Notification", "Elicitation", "PostToolUse", "PostToolUseFailure", "ElicitationResult"},
	},
	{
		name: "gemini", project: ".gemini/settings.json", user: ".gemini/settings.json", marker: ".gemini",
		layout: nested, entryName: "tether", enableFlag: true, timeoutKey: "timeout", timeout: seconds(10000), // ms
		events: []string{"SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd", "Notification", "AfterTool"},
	},
	{
		name: "codex", project: ".codex/hooks.json", user: ".codex/hooks.json", marker: ".codex",
		layout: nested, timeoutKey: "timeout", timeout: codexTimeout,
		events: []string{"SessionStart", "UserPromptSubmit", "Stop", "Interrupt", "SessionEnd",
			"PermissionRequest", "PreToolUse", "PostToolUse"},
	},
	{
		name: "cursor", project: ".cursor/hooks.json", user: ".cursor/hooks.json", marker: ".cursor",
		layout: flat, version: true,
		events: []string{"sessionStart", "beforeSubmitPrompt", "stop", "sessionEnd"},
	},
	{
		name: "copilot", project: ".github/hooks/tether.json", user: ".copilot/hooks/tether.json", marker: ".github/hooks",
		layout: flat, version: true, bashPwsh: true, timeoutKey: "timeoutSec", timeout: seconds(10),
		events: []string{"sessionStart", "userPromptSubmitted", "agentStop", "errorOccurred", "sessionEnd", "notification", "postToolUse"},
	},
	{
		// The events are the plugin's own names for what it hears:
		// session.created, chat.message, session.idle, session.error,
		// session.deleted, permission.asked and .replied, question.asked,
		// .replied and .rejected (see opencode_plugin.js).
		name: "opencode", project: ".opencode/plugins/tether.js", user: ".config/opencode/plugins/tether.js",
		marker: ".opencode", userMarker: ".config/opencode", layout: plugin,
		events: []string{"sessionStart", "turnStart", "turnEnd", "error", "sessionEnd",
			"permissionAsked", "permissionReplied", "questionAsked", "questionReplied", "questionRejected"},
	},
	{
		// PreToolUse: `droid exec` fires no UserPromptSubmit, and its turn
		// must start before a tool changes anything. Notification: Esc
		// fires no Stop, but idle_prompt; a dialog, permission_prompt,
		// whose call ran at PostToolUse.
		name: "droid", project: ".factory/hooks.json", user: ".factory/hooks.json", marker: ".factory",
		layout: topLevel, timeoutKey: "timeout", timeout: seconds(10),
		events: []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "Notification", "SessionEnd", "PostToolUse"},
	},
	{
		// The events are the extension's own names for what it hears:
		// session_start, before_agent_start, agent_end, session_shutdown
		// (see pi_extension.ts).
		name: "pi", project: ".pi/extensions/tether.ts", user: ".pi/agent/extensions/tether.ts", marker: ".pi",
		userMarker: ".pi/agent", layout: plugin,
		events: []string{"sessionStart", "turnStart", "turnEnd", "error", "sessionEnd"},
	},
	{
		// Notification: Esc fires no Stop, but idle_prompt; a dialog,
		// permission_prompt, whose call ran at PostToolUse.
		name: "qwen", project: ".qwen/settings.json", user: ".qwen/settings.json", marker: ".qwen",
		layout: nested, matcher: true, timeoutKey: "timeout", timeout: seconds(10),
		events: []string{"SessionStart", "UserPromptSubmit", "Stop", "StopFailure", "Notification", "SessionEnd", "PostToolUse"},
	},
}

// seconds is a timeout of n, whatever the event.
func seconds(n int) func(string) int { return func(string) int { return n } }

// codexTimeout: Codex runs SessionEnd and Interrupt hooks for 3 seconds at
// most, whatever the entry says; saying so keeps the trust hash of the
// entry (see codexHookHash) the one Codex computes.
func codexTimeout(event string) int {
	if event == "SessionEnd" || event == "Interrupt" {
		return 3
	}
	return 10
}

// AgentNames lists the agents install knows, as tether-hook names them.
func AgentNames() []string {
	names := make([]string, len(agentSpecs))
	for i, s := range agentSpecs {
		names[i] = s.name
	}
	return names
}

func lookupAgent(name string) (agentSpec, error) {
	for _, s := range agentSpecs {
		if s.name == name {
			return s, nil
		}
	}
	return agentSpec{}, fmt.Errorf("unknown agent %q (known: %s)", name, strings.Join(AgentNames(), ", "))
}

// hookCommand is what an agent runs through its shell (sh -c on Unix).
// exec hands the process over to tether-hook, so the agent stays its direct
// parent; the guard makes a missing binary a silent no-op.
func hookCommand(bin, agent, event string) string {
	if bin == "" {
		return fmt.Sprintf("command -v %s >/dev/null 2>&1 && exec %s %s %s || true", hookBinary, hookBinary, agent, event)
	}
	q := shQuote(filepath.ToSlash(bin))
	return fmt.Sprintf("[ -x %s ] && exec %s %s %s || true", q, q, agent, event)
}

// hookCommandPowerShell is the Windows form, for agents that ask for one.
func hookCommandPowerShell(bin, agent, event string) string {
	if bin == "" {
		return fmt.Sprintf("if (Get-Command %s -ErrorAction SilentlyContinue) { %s %s %s }", hookBinary, hookBinary, agent, event)
	}
	q := psQuote(bin)
	return fmt.Sprintf("if (Test-Path -LiteralPath %s) { & %s %s %s }", q, q, agent, event)
}

// shQuote quotes s for a POSIX shell, leaving plain words bare so commands
// stay readable.
func shQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func psQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// entry is our hook entry for one event.
func (s agentSpec) entry(bin, event string) *node {
	var ms []member
	if s.entryName != "" {
		ms = append(ms, field("name", newString(s.entryName)))
	}
	switch {
	case s.bashPwsh:
		ms = append(ms,
			field("type", newString("command")),
			field("bash", newString(hookCommand(bin, s.name, event))),
			field("powershell", newString(hookCommandPowerShell(bin, s.name, event))))
	case s.layout == flat:
		ms = append(ms, field("command", newString(hookCommand(bin, s.name, event))))
	default:
		ms = append(ms,
			field("type", newString("command")),
			field("command", newString(hookCommand(bin, s.name, event))))
	}
	if s.timeoutKey != "" {
		ms = append(ms, field(s.timeoutKey, newLiteral(strconv.Itoa(s.timeout(event)))))
	}
	return newObject(ms...)
}

// element is what goes into the event's array: the entry itself, or a
// group holding it.
func (s agentSpec) element(bin, event string) *node {
	e := s.entry(bin, event)
	if s.layout == flat {
		return e
	}
	var ms []member
	if s.matcher {
		ms = append(ms, field("matcher", newString("")))
	}
	return newObject(append(ms, field("hooks", newArray(e)))...)
}

// hooksOf is the object of a config that maps events to their hooks: the
// "hooks" key, or the file itself for the topLevel layout; nil when there
// is none.
func (s agentSpec) hooksOf(root *node) *node {
	if s.layout == topLevel {
		return root
	}
	return root.get("hooks")
}

// isOurs tells whether a hook entry runs tether-hook.
func isOurs(e *node) bool {
	for _, k := range []string{"command", "bash", "powershell"} {
		if v, ok := e.get(k).str(); ok && strings.Contains(v, hookBinary) {
			return true
		}
	}
	return false
}

// slot locates one of our entries: elems[i] of the event array, or
// elems[i].hooks[j] when j >= 0.
type slot struct{ i, j int }

func (s agentSpec) findOurs(arr *node) []slot {
	var found []slot
	for i, el := range arr.elems {
		if s.layout == flat {
			if isOurs(el) {
				found = append(found, slot{i, -1})
			}
			continue
		}
		inner := el.get("hooks")
		if inner == nil || inner.kind != arrayNode {
			continue
		}
		for j, e := range inner.elems {
			if isOurs(e) {
				found = append(found, slot{i, j})
			}
		}
	}
	return found
}

// merge adds our entries to an agent's config, or brings stale ones up to
// date, leaving everything else as it was. It reports an error only for a
// config whose shape the agent itself would reject.
func (s agentSpec) merge(root *node, bin string) error {
	if s.version && root.get("version") == nil {
		root.set("version", newLiteral("1"))
	}
	if s.enableFlag {
		switch hc := root.get("hooksConfig"); {
		case hc == nil:
			root.set("hooksConfig", newObject(field("enabled", newLiteral("true"))))
		case hc.kind == objectNode && hc.get("enabled") == nil:
			hc.set("enabled", newLiteral("true"))
		}
	}
	hooks := s.hooksOf(root)
	if hooks == nil {
		hooks = newObject()
		root.set("hooks", hooks)
	}
	if hooks.kind != objectNode {
		return fmt.Errorf(`"hooks" is not an object`)
	}
	for _, ev := range s.events {
		arr := hooks.get(ev)
		if arr == nil {
			arr = newArray()
			hooks.set(ev, arr)
		}
		if arr.kind != arrayNode {
			return fmt.Errorf(`"hooks.%s" is not an array`, ev)
		}
		ours := s.findOurs(arr)
		if len(ours) == 0 {
			arr.elems = append(arr.elems, s.element(bin, ev))
			arr.dirty = true
			continue
		}
		// Keep the first of ours where the user may have moved it, up to date;
		// drop duplicates.
		want := s.entry(bin, ev)
		first := ours[0]
		if first.j < 0 {
			if !equal(arr.elems[first.i], want) {
				arr.elems[first.i] = want
			}
		} else if inner := arr.elems[first.i].get("hooks"); !equal(inner.elems[first.j], want) {
			inner.elems[first.j] = want
			inner.dirty = true
		}
		s.removeSlots(arr, ours[1:])
	}
	return nil
}

// removeSlots deletes the given entries, and the groups they leave empty.
func (s agentSpec) removeSlots(arr *node, slots []slot) {
	if len(slots) == 0 {
		return
	}
	arr.dirty = true
	emptied := map[int]bool{}
	for k := len(slots) - 1; k >= 0; k-- {
		sl := slots[k]
		if sl.j < 0 {
			arr.elems = slices.Delete(arr.elems, sl.i, sl.i+1)
			continue
		}
		inner := arr.elems[sl.i].get("hooks")
		inner.elems = slices.Delete(inner.elems, sl.j, sl.j+1)
		inner.dirty = true
		if len(inner.elems) == 0 {
			emptied[sl.i] = true
		}
	}
	for i := len(arr.elems) - 1; i >= 0; i-- {
		if emptied[i] {
			arr.elems = slices.Delete(arr.elems, i, i+1)
		}
	}
}

// unmerge removes our entries. orig is the file as it was before install
// (nil when unknown): containers it did not have and that are now empty go
// too, as do the version and hooksConfig.enabled we added. Without orig,
// the hook containers our removal emptied go (an empty event array means
// nothing to the agent), and settings we may have added stay, since they
// could be the user's.
func (s agentSpec) unmerge(root, orig *node) {
	hooks := s.hooksOf(root)
	if hooks == nil || hooks.kind != objectNode {
		return
	}
	origHooks := s.hooksOf(orig)
	if orig == nil {
		origHooks = nil
	}
	removedAny := false
	for _, m := range slices.Clone(hooks.members) {
		arr := m.val
		if arr.kind != arrayNode {
			continue
		}
		ours := s.findOurs(arr)
		s.removeSlots(arr, ours)
		removedAny = removedAny || len(ours) > 0
		if len(arr.elems) == 0 && prune(orig, origHooks.get(m.key) != nil, len(ours) > 0) {
			hooks.delValue(arr)
		}
	}
	if s.layout != topLevel && len(hooks.members) == 0 && prune(orig, origHooks != nil, removedAny) {
		root.del("hooks")
	}
	if orig == nil {
		return
	}
	if s.enableFlag {
		hc := root.get("hooksConfig")
		origHC := orig.get("hooksConfig")
		if hc != nil && hc.kind == objectNode && origHC.get("enabled") == nil && hc.get("enabled").isTrue() {
			hc.del("enabled")
			if len(hc.members) == 0 && origHC == nil {
				root.del("hooksConfig")
			}
		}
	}
	if s.version && orig.get("version") == nil && root.get("version").raw == "1" {
		root.del("version")
	}
}

// prune decides whether an empty container goes: when the original is
// known, exactly when it did not exist before; otherwise when our removal
// emptied it.
func prune(orig *node, existedBefore, emptiedByUs bool) bool {
	if orig != nil {
		return !existedBefore
	}
	return emptiedByUs
}

// status reports whether a config has all our entries, up to date.
func (s agentSpec) status(root *node, bin string) (missing, stale []string) {
	hooks := s.hooksOf(root)
	for _, ev := range s.events {
		arr := hooks.get(ev)
		if arr == nil || arr.kind != arrayNode {
			missing = append(missing, ev)
			continue
		}
		ours := s.findOurs(arr)
		switch {
		case len(ours) == 0:
			missing = append(missing, ev)
		case len(ours) > 1 || !equal(s.entryAt(arr, ours[0]), s.entry(bin, ev)):
			stale = append(stale, ev)
		}
	}
	return missing, stale
}

// machinePaths lists the tether-hook paths our entries in a config name
// (an install that wrote this machine's binary into them), sorted, each
// once; none when they find tether-hook on PATH.
func (s agentSpec) machinePaths(root *node) []string {
	var paths []string
	hooks := s.hooksOf(root)
	for _, ev := range s.events {
		arr := hooks.get(ev)
		if arr == nil || arr.kind != arrayNode {
			continue
		}
		for _, sl := range s.findOurs(arr) {
			e := s.entryAt(arr, sl)
			for _, k := range []string{"command", "bash"} {
				if cmd, ok := e.get(k).str(); ok {
					if p := guardedPath(cmd); p != "" && !slices.Contains(paths, p) {
						paths = append(paths, p)
					}
				}
			}
		}
	}
	slices.Sort(paths)
	return paths
}

// guardedPath is the binary a hookCommand for an absolute path runs
// ("[ -x PATH ] && exec PATH ..."), unquoted; "" for any other command.
func guardedPath(cmd string) string {
	rest, ok := strings.CutPrefix(cmd, "[ -x ")
	if !ok {
		return ""
	}
	q, _, ok := strings.Cut(rest, " ] && exec ")
	if !ok {
		return ""
	}
	if uq, ok := strings.CutPrefix(q, "'"); ok {
		return strings.ReplaceAll(strings.TrimSuffix(uq, "'"), `'\''`, "'")
	}
	return q
}

func (s agentSpec) entryAt(arr *node, sl slot) *node {
	if sl.j < 0 {
		return arr.elems[sl.i]
	}
	return arr.elems[sl.i].get("hooks").elems[sl.j]
}
