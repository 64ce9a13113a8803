package install

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/agent"
	"github.com/tetherdev/tether/state"
)

const userPlugin = "export const Mine = async () => ({})\n"

// TestOpenCodePluginInstall: install writes tether's plugin beside the
// user's own, once; uninstall takes exactly it away again.
func TestOpenCodePluginInstall(t *testing.T) {
	setup(t)
	dir := newRepo(t)
	writeFile(t, filepath.Join(dir, ".opencode", "plugins", "mine.js"), userPlugin)
	writeFile(t, filepath.Join(dir, "opencode.json"), `{"model":"mock/mock-model"}`+"\n")
	before := snapshot(t, dir)
	opts := Options{Dir: dir, NoGitHooks: true, HookPath: "/opt/my tether/tether-hook", Agents: []string{"opencode"}}

	res, err := Install(opts)
	if err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(dir, ".opencode", "plugins", "tether.js")
	if a := actions(res)[plugin]; a != Created {
		t.Fatalf("plugin %s, want created (%+v)", a, res.Changes)
	}
	got := readFile(t, plugin)
	// The project's plugin is shared with the team: it finds tether-hook
	// on PATH, never at this machine's path.
	if !strings.HasPrefix(got, pluginMarker) || !strings.Contains(got, `const HOOK = "tether-hook"`) {
		t.Fatalf("plugin does not run tether-hook from PATH:\n%s", got)
	}
	if ps := Check(opts); len(ps) != 0 {
		t.Errorf("doctor after install: %+v, want nothing (tether-hook is on PATH)", ps)
	}
	if res, err := Install(opts); err != nil || actions(res)[plugin] != Unchanged {
		t.Fatalf("second install: %v, %+v", err, res.Changes)
	}
	if _, err := Uninstall(Options{Dir: dir, NoGitHooks: true}); err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "after uninstall", before, snapshot(t, dir))
}

// TestOpenCodePluginUserLevel: --user puts the plugin where OpenCode looks
// for the user's plugins, $XDG_CONFIG_HOME/opencode/plugins.
func TestOpenCodePluginUserLevel(t *testing.T) {
	setup(t)
	dir := newRepo(t)
	home := t.TempDir()
	xdg := filepath.Join(t.TempDir(), "xdg")
	if err := os.MkdirAll(filepath.Join(home, ".config", "opencode"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": xdg}
	opts := Options{Dir: dir, User: true, Home: home, NoGitHooks: true, Agents: []string{"opencode"}, Getenv: func(k string) string { return env[k] }}
	if _, err := Install(opts); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(xdg, "opencode", "plugins", "tether.js")) || exists(filepath.Join(dir, ".opencode")) {
		t.Fatal("user-level install did not write $XDG_CONFIG_HOME/opencode/plugins/tether.js only")
	}
	if _, err := Uninstall(opts); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(xdg, "opencode")) {
		t.Error("uninstall left the directories it made")
	}
	delete(env, "XDG_CONFIG_HOME") // then it is ~/.config
	if _, err := Install(opts); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(home, ".config", "opencode", "plugins", "tether.js")) {
		t.Fatal("no plugin in ~/.config/opencode/plugins")
	}
}

// TestOpenCodePluginNotOurs: a tether.js of the user's is neither
// overwritten nor removed.
func TestOpenCodePluginNotOurs(t *testing.T) {
	setup(t)
	dir := newRepo(t)
	plugin := filepath.Join(dir, ".opencode", "plugins", "tether.js")
	writeFile(t, plugin, userPlugin)
	opts := Options{Dir: dir, NoGitHooks: true, Agents: []string{"opencode"}}
	if _, err := Install(opts); err == nil || !strings.Contains(err.Error(), "not tether's plugin") {
		t.Fatalf("install over a foreign tether.js: %v", err)
	}
	if ps := Check(opts); len(ps) == 0 || ps[0].What != "opencode plugin is not tether's" || ps[0].Fix != nil {
		t.Errorf("doctor: %+v", ps)
	}
	if _, err := Uninstall(opts); err != nil {
		t.Fatal(err)
	}
	if readFile(t, plugin) != userPlugin {
		t.Fatal("the user's tether.js changed")
	}
}

// TestOpenCodePluginDoctor: doctor says what keeps OpenCode from loading
// the plugin, and fixes what install would.
func TestOpenCodePluginDoctor(t *testing.T) {
	setup(t)
	dir := newRepo(t)
	plugin := filepath.Join(dir, ".opencode", "plugins", "tether.js")
	opts := Options{Dir: dir, NoGitHooks: true, Agents: []string{"opencode"}, LookPath: found}
	for _, tc := range []struct {
		name    string
		prepare func()
		what    string
		fixable bool
	}{
		{"missing", func() {}, "opencode plugin is not installed", true},
		{"stale", func() { writeFile(t, plugin, string(opencodePlugin("/old/tether-hook"))) }, "opencode plugin is out of date", true},
		{"directory", func() {
			if err := os.MkdirAll(plugin, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "opencode plugin is not a file", false},
		{"unreadable", func() {
			writeFile(t, plugin, string(opencodePlugin("")))
			if err := os.Chmod(plugin, 0); err != nil {
				t.Fatal(err)
			}
		}, "opencode plugin cannot be read", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.RemoveAll(filepath.Join(dir, ".opencode"))
			tc.prepare()
			if tc.name == "unreadable" && os.Geteuid() == 0 {
				t.Skip("root reads any file")
			}
			ps := Check(opts)
			if len(ps) != 1 || ps[0].What != tc.what || (ps[0].Fix != nil) != tc.fixable {
				t.Fatalf("doctor: %+v, want only %q (fixable %v)", ps, tc.what, tc.fixable)
			}
			if tc.fixable {
				fixAll(t, ps)
				if ps := Check(opts); len(ps) != 0 {
					t.Fatalf("after the fix: %+v", ps)
				}
			}
		})
	}
}

// TestOpenCodePluginRuns loads the plugin as OpenCode does (an ES module
// whose export is called with the plugin context) in node, feeds it the bus
// events and the chat.message hook recorded from the real OpenCode, and
// checks what tether-hook receives, parsed by the adapter as the hook would.
func TestOpenCodePluginRuns(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	tmp := t.TempDir()
	calls := filepath.Join(tmp, "calls")
	if err := os.Mkdir(calls, 0o755); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(tmp, "tether-hook")
	// One file per call (the calls run at once): the arguments,
	// OPENCODE_PID, then the payload.
	// Each also appends its event to order.log once it is done.
	writeExec(t, hook, "#!/bin/sh\nf="+shQuote(calls)+"/$$\n{ printf '%s %s %s ' \"$1\" \"$2\" \"$OPENCODE_PID\"; cat; } >$f.tmp && mv $f.tmp $f.call\n"+
		"sleep 0.05; echo $$ >>"+shQuote(filepath.Join(tmp, "order.log"))+"\n")
	if err := os.WriteFile(filepath.Join(tmp, "tether.mjs"), opencodePlugin(hook), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "agent", "testdata", "recorded", "opencode", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// Recorded events go to the plugin as OpenCode passes them: bus events
	// as {event}, the chat.message hook as (input, output).
	driver := `
import { TetherPlugin } from "./tether.mjs"
const hooks = await TetherPlugin({ directory: process.argv[2] })
const ev = (r) => hooks.event({ event: { type: r.type, properties: r.properties } })
await ev(` + rec("session.created") + `)
await ev(` + rec("session.status_busy") + `)
const msg = ` + rec("chat.message") + `
await hooks["chat.message"](msg.input, msg.output)
await ev(` + rec("message.part.updated_text") + `)
await ev(` + rec("session.error_APIError") + `)
await ev(` + rec("session.idle") + `)
await ev(` + rec("session.error_MessageAbortedError") + `)
await ev({ type: "session.created", properties: { info: { id: "ses_child", parentID: "ses_x" } } })
await ev({ type: "session.idle", properties: { sessionID: "ses_child" } })
await ev(` + rec("permission.asked") + `)
await ev(` + rec("permission.replied_once") + `)
await ev(` + rec("question.asked") + `)
await ev(` + rec("question.rejected") + `)
await ev({ type: "session.created", properties: { info: { id: "ses_task", parentID: "ses_df60946cfffeUTVCV17CUz363e" } } })
await ev({ type: "permission.asked", properties: { id: "per_task", sessionID: "ses_task", permission: "bash", patterns: ["ls"] } })
await ev({ type: "session.deleted", properties: { info: { id: "ses_df60946cfffeUTVCV17CUz363e" } } })
await ev({ type: "session.idle", properties: {} })
await ev({})
await hooks["chat.message"]({}, {})
// OpenCode lives on while a session's wait signals run one after the other.
await new Promise((r) => setTimeout(r, 3000))
`
	if err := os.WriteFile(filepath.Join(tmp, "driver.mjs"), []byte(driver), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "driver.mjs", tmp)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("node: %v\n%s", err, out)
	}
	const (
		main    = "ses_df60946cfffeUTVCV17CUz363e"
		failed  = "ses_df6090fb8ffe4HTAfN4rJMLavy"
		aborted = "ses_df608c64bffeQEG24rQ1B6UpUD"
	)
	const (
		permitted = "ses_ddf78f9fdffeCATSiZFNFmS38G"
		asked     = "ses_ddf70b122ffeaAwEGLLHWiSKqu"
	)
	want := []struct {
		native, session string
		kind            state.Event
		prompt, reason  string
		wait            state.Wait // Since: set when the plugin passes a time
	}{
		{"sessionStart", main, state.EventSessionStart, "", "", state.Wait{}},
		{"turnStart", main, state.EventTurnStart, `"say hi"`, "", state.Wait{}},
		{"error", failed, state.EventError, "", "APIError: mock failure (MOCK_FAIL)", state.Wait{}},
		{"turnEnd", main, state.EventTurnEnd, "", "", state.Wait{}},
		{"error", aborted, state.EventTurnEnd, "", "", state.Wait{}}, // Esc Esc: not a failure
		{"sessionEnd", main, state.EventSessionEnd, "", "deleted", state.Wait{}},
		{"permissionAsked", permitted, state.EventWait, "", "",
			state.Wait{Kind: state.WaitPermission, Detail: "edit `a.txt`", Key: "per_22087c5bb001uFEzi4EnJ6nPKX"}},
		{"permissionReplied", permitted, state.EventWaitOver, "", "", state.Wait{Key: "per_22087c5bb001uFEzi4EnJ6nPKX"}},
		{"questionAsked", asked, state.EventWait, "", "",
			state.Wait{Kind: state.WaitQuestion, Detail: "Which file shall I write?", Key: "que_2208f90f600133uaz307uUB69f"}},
		{"questionRejected", asked, state.EventWaitOver, "", "", state.Wait{Key: "que_2208fe4d500122hr4U0x51hB5Q"}},
		// A subagent's dialog is its parent session's wait.
		{"permissionAsked", main, state.EventWait, "", "", state.Wait{Kind: state.WaitPermission, Detail: "bash `ls`", Key: "per_task"}},
	}
	var lines []string
	deadline := time.Now().Add(10 * time.Second) // the hooks run detached
	for len(lines) < len(want) && time.Now().Before(deadline) {
		lines = readCalls(t, calls)
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // nothing more comes
	lines = readCalls(t, calls)
	if len(lines) != len(want) {
		t.Fatalf("tether-hook ran %d times, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	// The calls run at once, in any order: each is known by its event and
	// session.
	byEvent := map[string][]string{}
	for _, l := range lines {
		f := strings.SplitN(l, " ", 4)
		if len(f) != 4 || f[0] != "opencode" {
			t.Fatalf("hook called as %q", l)
		}
		ev, err := agent.Parse("opencode", f[1], []byte(f[3]), nil)
		if err != nil {
			t.Fatalf("%s: %v (%s)", f[1], err, f[3])
		}
		byEvent[f[1]+" "+ev.SessionID] = f
	}
	// A session's waits ran in the order OpenCode sent them, each hook
	// after the one before had exited.
	pos := map[string]int{}
	for i, pid := range strings.Fields(readFile(t, filepath.Join(tmp, "order.log"))) {
		f := strings.SplitN(readFile(t, filepath.Join(calls, pid+".call")), " ", 4)
		if ev, err := agent.Parse("opencode", f[1], []byte(f[3]), nil); err == nil {
			pos[f[1]+" "+ev.SessionID] = i
		}
	}
	if pos["permissionReplied "+permitted] < pos["permissionAsked "+permitted] || pos["questionRejected "+asked] < pos["questionAsked "+asked] {
		t.Errorf("the waits' hooks ran out of order: %v", pos)
	}
	for _, w := range want {
		f := byEvent[w.native+" "+w.session]
		if f == nil {
			t.Fatalf("no %s call for %s", w.native, w.session)
		}
		ev, err := agent.Parse("opencode", f[1], []byte(f[3]), nil)
		if err != nil {
			t.Fatal(err)
		}
		var payload struct {
			PID int `json:"opencode_pid"`
		}
		json.Unmarshal([]byte(f[3]), &payload)
		got := ev.Wait
		if w.wait != (state.Wait{}) {
			if got.Since.IsZero() {
				t.Errorf("%s: no time for the wait signal", w.native)
			}
			got.Since = time.Time{}
		}
		if ev.SessionID != w.session || ev.Kind != w.kind || ev.Prompt != w.prompt || ev.Reason != w.reason || got != w.wait ||
			ev.Cwd != tmp || ev.OwnerPID != payload.PID || ev.OwnerPID <= 0 || f[2] != strconv.Itoa(payload.PID) {
			t.Errorf("%s: %+v (OPENCODE_PID %s), want %+v", w.native, ev, f[2], w)
		}
	}
}

// readCalls reads the calls the fake hook recorded.
func readCalls(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.call"))
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, f := range files {
		calls = append(calls, readFile(t, f))
	}
	return calls
}

// TestOpenCodePluginNeverFails: without the binary the plugin's handlers
// still return, and say nothing.
func TestOpenCodePluginNeverFails(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	tmp := t.TempDir()
	if err := os.WriteFile(filepath.Join(tmp, "tether.mjs"), opencodePlugin(filepath.Join(tmp, "no-such-hook")), 0o644); err != nil {
		t.Fatal(err)
	}
	driver := `
import { TetherPlugin } from "./tether.mjs"
const hooks = await TetherPlugin({ directory: "/nonexistent" })
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } })
await hooks["chat.message"]({ sessionID: "ses_1" }, { parts: [{ type: "text", text: "hi" }] })
await new Promise((r) => setTimeout(r, 300))
console.log("done")
`
	if err := os.WriteFile(filepath.Join(tmp, "driver.mjs"), []byte(driver), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "driver.mjs")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil || string(out) != "done\n" {
		t.Fatalf("node: %v\n%s", err, out)
	}
}
