package agent

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tetherdev/tether/internal/jsontext"
	"github.com/tetherdev/tether/state"
)

// waitFields is what a payload says about a wait, in whichever of its
// agent's keys: the tool concerned and its input, a notification's type
// and words, the ID of the agent's request and when the agent sent it.
type waitFields struct {
	Tool       string // tool_name, toolName
	Input      []byte // tool_input, toolArgs: raw JSON
	Type       string // notification_type
	Message    string
	Title      string
	Details    []byte // Gemini CLI's notification details: raw JSON
	Request    string // OpenCode's permission or question ID
	Permission string // OpenCode's permission: edit, bash, ...
	Patterns   []byte // OpenCode's patterns: raw JSON
	Questions  []byte // OpenCode's questions: raw JSON
	At         []byte // when the plugin heard it, epoch milliseconds
	Cwd        string // for paths in messages
}

// waitSignal is one of an agent's events that says it waits for its user,
// or that a wait is over: read turns its payload into state.EventWait,
// EventWaitInput or EventWaitOver and what is waited for, or "" when this
// payload of the event says nothing of a wait (a notification of another
// type, a tool that asks nothing).
type waitSignal struct {
	native string
	read   func(f waitFields) (state.Event, state.Wait)
}

// The wait signals of each agent, as their real CLIs send them
// (agent/testdata/recorded; docs/agents.md). An event not listed
// says nothing of a wait.
var (
	claudeWaits = []waitSignal{
		{"PermissionRequest", toolDialog}, // also AskUserQuestion's dialog
		{"Notification", notification(claudeNotifications)},
		{"Elicitation", elicitation},
		{"PostToolUse", toolDone},
		{"PostToolUseFailure", toolDone},
		{"ElicitationResult", over},
	}
	// Codex's PermissionRequest also fires for calls its automatic reviewer
	// answers: the hook asks ReviewerAnswers before it records one.
	codexWaits = []waitSignal{
		{"PermissionRequest", toolDialog},
		{"PreToolUse", toolQuestion}, // request_user_input asks; other tools do not
		{"PostToolUse", toolDone},
	}
	geminiWaits = []waitSignal{
		{"Notification", geminiNotification},
		{"AfterTool", toolDone},
	}
	copilotWaits = []waitSignal{
		{"notification", notification(copilotNotifications)},
		{"Notification", notification(copilotNotifications)},
		{"postToolUse", toolDone},
		{"PostToolUse", toolDone},
	}
	// Droid and Qwen Code notify permission_prompt as their dialog shows.
	// Qwen Code's PermissionRequest is no dialog's: it fires before its
	// hooks may answer the call, and for background agents, which cannot
	// ask and are denied.
	droidWaits = []waitSignal{
		{"Notification", notification(droidNotifications)},
		{"PostToolUse", toolDone},
	}
	qwenWaits = []waitSignal{
		{"Notification", notification(qwenNotifications)},
		{"PostToolUse", toolDone},
	}
	// The names tether's plugin gives OpenCode's bus events (see
	// install/opencode_plugin.js).
	opencodeWaits = []waitSignal{
		{"permissionAsked", opencodePermission},
		{"questionAsked", opencodeQuestion},
		{"permissionReplied", requestDone},
		{"questionReplied", requestDone},
		{"questionRejected", requestDone},
	}
)

// notice is what a notification type means: a wait of kind (ev says
// whether inside a turn or at the prompt), or its reminder.
type notice struct {
	ev   state.Event
	kind string
	// detail: the notification's message says what is waited for (it is
	// not a generic "Claude needs your permission").
	detail bool
}

var claudeNotifications = map[string]notice{
	// Fired only while the dialog is still open about 6 s after it opened:
	// a reminder of the PermissionRequest (or AskUserQuestion) before it.
	"permission_prompt":      {state.EventWait, state.WaitPermission, false},
	"agent_needs_input":      {state.EventWait, state.WaitPermission, false},
	"elicitation_dialog":     {state.EventWait, state.WaitQuestion, true},
	"elicitation_url_dialog": {state.EventWait, state.WaitQuestion, true},
	// 60 s idle at the prompt, in the TUI.
	"idle_prompt": {state.EventWaitInput, state.WaitInput, false},
}

// copilotNotifications: Copilot CLI notifies a prompt only when it really
// shows one (its permissionRequest fires for calls its rules approve too).
var copilotNotifications = map[string]notice{
	"permission_prompt":  {state.EventWait, state.WaitPermission, true},
	"elicitation_dialog": {state.EventWait, state.WaitQuestion, true},
}

// droidNotifications: Droid's permission_prompt names no call ("Factory
// CLI needs permission to execute 1 tool(s)"): the hook reads it from the
// transcript (DialogCall).
var droidNotifications = map[string]notice{
	"permission_prompt": {state.EventWait, state.WaitPermission, false},
}

// qwenNotifications: Qwen Code's permission_prompt names the tool ("Qwen
// Code needs your permission to use write_file"). The call may not be in
// its transcript yet: Qwen Code queues its writes.
var qwenNotifications = map[string]notice{
	"permission_prompt": {state.EventWait, state.WaitPermission, true},
}

// questionTools are the tools through which an agent asks its user a
// question: their dialogs are questions, not permissions.
var questionTools = map[string]bool{"AskUserQuestion": true, "request_user_input": true, "ask_user": true, "question": true}

// toolDialog reads a dialog about a tool call: a question for a question
// tool, else a permission for the tool and what it would do.
func toolDialog(f waitFields) (state.Event, state.Wait) {
	if questionTools[f.Tool] {
		return state.EventWait, state.Wait{Kind: state.WaitQuestion, Detail: questionText(f.Input), Key: f.Tool}
	}
	return state.EventWait, state.Wait{Kind: state.WaitPermission, Detail: toolDetail(f.Tool, f.Input, f.Cwd), Key: f.Tool}
}

// toolQuestion reads a tool call that asks the user a question, and
// nothing of other tools.
func toolQuestion(f waitFields) (state.Event, state.Wait) {
	if !questionTools[f.Tool] {
		return "", state.Wait{}
	}
	return toolDialog(f)
}

// toolDone: the tool ran (or failed), so its dialog was answered.
func toolDone(f waitFields) (state.Event, state.Wait) {
	return state.EventWaitOver, state.Wait{Key: f.Tool}
}

// over: whatever was asked, it was answered.
func over(waitFields) (state.Event, state.Wait) { return state.EventWaitOver, state.Wait{} }

// elicitation: an MCP server asks the user for input (Claude Code).
func elicitation(f waitFields) (state.Event, state.Wait) {
	return state.EventWait, state.Wait{Kind: state.WaitQuestion, Detail: brief(f.Message)}
}

// notification reads a notification by its type, as table says.
func notification(table map[string]notice) func(waitFields) (state.Event, state.Wait) {
	return func(f waitFields) (state.Event, state.Wait) {
		n, ok := table[f.Type]
		if !ok {
			return "", state.Wait{}
		}
		w := state.Wait{Kind: n.kind}
		if n.detail {
			w.Detail = brief(unprefix(f.Message, f.Cwd))
		}
		return n.ev, w
	}
}

// geminiNotification reads Gemini CLI's ToolPermission notification,
// which it sends before it shows a confirmation, waiting for the hook:
// details.type says what is confirmed (edit, exec, mcp, info, ask_user).
func geminiNotification(f waitFields) (state.Event, state.Wait) {
	if f.Type != "ToolPermission" {
		return "", state.Wait{}
	}
	var typ, title, fileName, command, server, tool string
	_ = decode(f.Details, []wireField{{name: "type", str: &typ}, {name: "title", str: &title},
		{name: "fileName", str: &fileName}, {name: "command", str: &command},
		{name: "serverName", str: &server}, {name: "toolName", str: &tool}})
	w := state.Wait{Kind: state.WaitPermission}
	switch {
	case typ == "ask_user":
		w.Kind = state.WaitQuestion // the question itself is not in the notification
	case typ == "edit" && fileName != "":
		w.Detail = quoted("Edit", fileName)
	case typ == "exec" && command != "":
		w.Detail = quoted("Shell", command)
	case typ == "mcp" && tool != "":
		w.Detail = quoted(server, tool)
	default:
		w.Detail = brief(firstNonEmpty(title, f.Message))
	}
	return state.EventWait, w
}

// opencodePermission reads OpenCode's permission.asked: the permission
// (edit, bash, ...) and the patterns it is asked for.
func opencodePermission(f waitFields) (state.Event, state.Wait) {
	var patterns []string
	if v, err := jsontext.Parse(f.Patterns); err == nil {
		_ = jsontext.DecodeSlice(&patterns, v, "[]string", decodeString)
	}
	return state.EventWait, state.Wait{Kind: state.WaitPermission, Detail: quoted(f.Permission, strings.Join(patterns, " ")),
		Key: f.Request, Since: epochMillis(f.At)}
}

// opencodeQuestion reads OpenCode's question.asked.
func opencodeQuestion(f waitFields) (state.Event, state.Wait) {
	return state.EventWait, state.Wait{Kind: state.WaitQuestion, Detail: firstQuestion(f.Questions), Key: f.Request, Since: epochMillis(f.At)}
}

// requestDone: OpenCode's reply (or rejection) of request f.Request.
func requestDone(f waitFields) (state.Event, state.Wait) {
	return state.EventWaitOver, state.Wait{Key: f.Request, Since: epochMillis(f.At)}
}

// Attended reports whether anyone attends the session: false only where
// the agent runs in a mode that shows no dialog, though it signals one,
// and there is no one to answer it: no wait. Its hooks' environment
// (getenv) says so for Claude Code's -p (CLAUDE_CODE_SESSION_ATTENDED=0);
// the command line of its process (ownerArgs, read only for an agent
// that needs it; nil when unknown) for Copilot CLI's -p. Unknown is
// attended.
func Attended(agentName string, getenv func(string) string, ownerArgs func() []string) bool {
	a, ok := find(agentName)
	switch {
	case !ok:
		return true
	case a.attendedEnv != "" && getenv(a.attendedEnv) == "0":
		return false
	case len(a.headlessFlags) > 0:
		return !hasFlag(ownerArgs(), a.headlessFlags)
	}
	return true
}

// hasFlag reports whether args (a command line, the program first) hold
// one of flags, alone or as flag=value, before a "--".
func hasFlag(args, flags []string) bool {
	for i, arg := range args {
		if i == 0 {
			continue
		}
		if arg == "--" {
			return false
		}
		for _, f := range flags {
			if arg == f || strings.HasPrefix(arg, f+"=") {
				return true
			}
		}
	}
	return false
}

// DialogCall is the tool call a permission dialog asks about, for an
// agent whose signal names none (Droid's permission_prompt, sent as the
// dialog shows, once the call and its PreToolUse hooks are in the
// transcript): the last
// call the transcript holds between bytes from (the running turn's start)
// and to, said as toolDetail says it ("Create `a.txt`"), and the tool,
// the wait's key. Both "" for an agent whose signals name their tool, or
// a transcript that holds no call there.
func DialogCall(agentName, root, path, cwd string, from, to int64) (detail, tool string) {
	a, found := find(agentName)
	if !found || a.dialogCalls == nil {
		return "", ""
	}
	var input []byte
	scanTurn(root, path, from, to, func(line []byte, _ int64) {
		a.dialogCalls(line, func(name string, in []byte) { tool, input = name, in })
	})
	if tool == "" {
		return "", ""
	}
	return toolDetail(tool, input, cwd), tool
}

// findWait is the agent's signal for native, if it has one.
func findWait(signals []waitSignal, native string) (waitSignal, bool) {
	for _, s := range signals {
		if s.native == native {
			return s, true
		}
	}
	return waitSignal{}, false
}

// maxDetail bounds what a wait says of itself: a status row's worth.
const maxDetail = 80

// toolDetail is a tool and the argument that says what it would do, as
// "Bash `npm test`": the command, else the file, else the address.
func toolDetail(tool string, input []byte, cwd string) string {
	var command, cmd, filePath, filePathCamel, path, url, pattern string
	_ = decode(input, []wireField{{name: "command", str: &command}, {name: "cmd", str: &cmd},
		{name: "file_path", str: &filePath}, {name: "filePath", str: &filePathCamel}, {name: "path", str: &path},
		{name: "url", str: &url}, {name: "pattern", str: &pattern}})
	arg := firstNonEmpty(command, cmd, unprefix(firstNonEmpty(filePath, filePathCamel, path), cwd), url, pattern)
	return quoted(tool, arg)
}

// questionText is the first question of a question tool's input:
// {"questions":[{"question":…}]}, or {"question":…}, or {"message":…}.
func questionText(input []byte) string {
	var question, message string
	var questions []byte
	if decode(input, []wireField{{name: "question", str: &question}, {name: "message", str: &message},
		{name: "questions", raw: &questions}}) != nil {
		return ""
	}
	return firstNonEmpty(firstQuestion(questions), brief(firstNonEmpty(question, message)))
}

// firstQuestion is the first question of [{"question":…}, …], or "".
func firstQuestion(questions []byte) string {
	v, err := jsontext.Parse(questions)
	if err != nil {
		return ""
	}
	for q := range v.Elements() {
		var text string
		if decode(q.Raw(), []wireField{{name: "question", str: &text}}) == nil && text != "" {
			return brief(text)
		}
	}
	return ""
}

// quoted is "name `arg`", cut to maxDetail on one line; name alone
// without an arg.
func quoted(name, arg string) string {
	arg = oneLine(arg)
	if arg == "" {
		return brief(name)
	}
	if name == "" {
		return brief(arg)
	}
	room := maxDetail - len(name) - 3
	if room < 8 {
		room = 8
	}
	return name + " `" + cut(arg, room) + "`"
}

// brief is s on one line, cut to maxDetail.
func brief(s string) string { return cut(oneLine(s), maxDetail) }

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	return s
}

// cut shortens s to at most n bytes, on a rune boundary, with an ellipsis.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	end := n - len("…")
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
}

// unprefix makes a path under dir relative to it: "a.txt", not
// "/home/dev/project/a.txt". Text around it is kept.
func unprefix(s, dir string) string {
	if dir == "" {
		return s
	}
	return strings.ReplaceAll(s, strings.TrimSuffix(dir, "/")+"/", "")
}

// epochMillis reads a time in epoch milliseconds; zero when absent.
func epochMillis(raw []byte) time.Time {
	ms, err := strconv.ParseInt(rawText(raw), 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
