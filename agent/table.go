package agent

import (
	"strings"

	"github.com/tetherdev/tether/state"
)

// An agent is mostly data: which of its events are turns of the main
// session (its eventTable), where its payload keeps what tether reads (a
// wire struct per protocol, read into said), where it keeps transcripts
// (transcriptHomes), its resume and fresh commands (resumeWith,
// freshWith), its transcript readers for cancels, failures and unannounced
// turns, and its wait signals (waits.go). Code is left for what an agent
// really does differently, in its adapter's parse.

// eventTable maps an agent's own event names to tether's events. An event
// missing from its table is not a turn of the main session (tool,
// subagent, compaction, notification hooks): Parse ignores it, or refuses
// it as another agent's when that agent's table has it.
type eventTable []struct {
	native string
	kind   state.Event
}

func (t eventTable) kind(native string) (state.Event, bool) {
	for _, e := range t {
		if e.native == native {
			return e.kind, true
		}
	}
	return "", false
}

// The event tables, as the real CLIs fire them (agent/testdata/recorded).
var (
	// claudeEvents: Claude Code's, which Qwen Code and Droid share.
	claudeEvents = eventTable{
		{"SessionStart", state.EventSessionStart},
		{"UserPromptSubmit", state.EventTurnStart},
		{"Stop", state.EventTurnEnd},
		{"StopFailure", state.EventError},
		{"SessionEnd", state.EventSessionEnd},
	}
	// codexEvents: Claude Code's names, Interrupt, which Codex fires when
	// the user cancels a turn (Esc in the TUI, SIGINT in `codex exec`:
	// the turn ends there, the session goes on), and the legacy notify
	// program's only notification, a finished turn.
	codexEvents = eventTable{
		{"SessionStart", state.EventSessionStart},
		{"UserPromptSubmit", state.EventTurnStart},
		{"Stop", state.EventTurnEnd},
		{"StopFailure", state.EventError},
		{"SessionEnd", state.EventSessionEnd},
		{"Interrupt", state.EventTurnEnd},
		{notifyTurnComplete, state.EventTurnEnd},
	}
	// geminiEvents: BeforeAgent fires once the user has submitted a prompt
	// and AfterAgent once the turn's final answer is out.
	geminiEvents = eventTable{
		{"SessionStart", state.EventSessionStart},
		{"BeforeAgent", state.EventTurnStart},
		{"AfterAgent", state.EventTurnEnd},
		{"SessionEnd", state.EventSessionEnd},
	}
	// copilotEvents, in both of Copilot CLI's formats. userPromptSubmitted
	// may arrive before sessionStart.
	copilotEvents = eventTable{
		{"sessionStart", state.EventSessionStart},
		{"SessionStart", state.EventSessionStart},
		{"userPromptSubmitted", state.EventTurnStart},
		{"UserPromptSubmit", state.EventTurnStart},
		{"agentStop", state.EventTurnEnd},
		{"Stop", state.EventTurnEnd},
		{"sessionEnd", state.EventSessionEnd},
		{"SessionEnd", state.EventSessionEnd},
		{"errorOccurred", state.EventError},
		{"ErrorOccurred", state.EventError},
	}
	cursorEvents = eventTable{
		{"sessionStart", state.EventSessionStart},
		{"beforeSubmitPrompt", state.EventTurnStart},
		{"stop", state.EventTurnEnd},
		{"sessionEnd", state.EventSessionEnd},
	}
	// pluginEvents: the names tether's own OpenCode plugin and Pi
	// extension give what they hear.
	pluginEvents = eventTable{
		{"sessionStart", state.EventSessionStart},
		{"turnStart", state.EventTurnStart},
		{"turnEnd", state.EventTurnEnd},
		{"error", state.EventError},
		{"sessionEnd", state.EventSessionEnd},
	}
)

// said is what a payload says of its event, read from wherever its agent
// keeps it.
type said struct {
	native, session, cwd, transcript, model, key string
	source, prompt, reason                       string
}

// record sets ev from what its payload said, and its kind from the
// agent's table, with the field of that kind (a session start's source, a
// turn start's prompt, a session end's reason). ok is false for an event
// not in the table: Parse then decides between Ignore and another agent's
// event.
func (ev *Event) record(t eventTable, p said) (kind state.Event, ok bool) {
	if p.native != "" {
		ev.Native = p.native
	}
	ev.SessionID, ev.Cwd, ev.TranscriptPath, ev.Model, ev.Key = p.session, p.cwd, p.transcript, p.model, p.key
	if kind, ok = t.kind(ev.Native); !ok {
		return "", false
	}
	ev.Kind = kind
	switch kind {
	case state.EventSessionStart:
		ev.Source = p.source
	case state.EventTurnStart:
		ev.Prompt = p.prompt
	case state.EventSessionEnd:
		ev.Reason = p.reason
	}
	return kind, true
}

// resumeWith is an agent's resume command: bin, then the session ID as
// flag's value (long=ID when the ID looks like a flag); a flag of "" puts
// sub and the ID as arguments (codex resume ID).
func resumeWith(bin, sub, flag, long string) func(id string) []string {
	return func(id string) []string {
		if flag == "" {
			return append([]string{bin, sub}, positional(id)...)
		}
		return append([]string{bin}, flagValue(flag, long, id)...)
	}
}

// freshWith is an agent's command to start anew with a first prompt: as
// flag's value, or as an argument when flag is ""; bin alone for no
// prompt.
func freshWith(bin, flag, long string) func(prompt string) []string {
	return func(prompt string) []string {
		switch {
		case prompt == "":
			return []string{bin}
		case flag == "":
			return append([]string{bin}, positional(prompt)...)
		}
		return append([]string{bin}, flagValue(flag, long, prompt)...)
	}
}

// agentTable names each agent tether knows, with its aliases, and its
// adapter: the order is Names'. A table of constants and functions, not a
// map, keeps package initialisation free for the hook.
var agentTable = []struct {
	names   []string
	adapter func() adapter
}{
	{[]string{"claude-code", "claude", "claude_code", "claudecode"}, claudeCode},
	{[]string{"gemini", "gemini-cli", "gemini_cli"}, gemini},
	{[]string{"codex", "codex-cli", "openai-codex"}, codex},
	{[]string{"cursor", "cursor-agent", "cursor-cli"}, cursor},
	{[]string{"copilot", "copilot-cli", "github-copilot", "gh-copilot"}, copilot},
	{[]string{"opencode", "opencode-ai", "open-code"}, opencode},
	{[]string{"droid", "factory", "factory-droid"}, droid},
	{[]string{"pi", "pi-coding-agent"}, pi},
	{[]string{"qwen", "qwen-code", "qwen_code"}, qwen},
}

// find resolves a name or alias.
func find(name string) (adapter, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, a := range agentTable {
		for _, n := range a.names {
			if n == name {
				return a.adapter(), true
			}
		}
	}
	return adapter{}, false
}

// Names lists the canonical agent names.
func Names() []string {
	names := make([]string, len(agentTable))
	for i, a := range agentTable {
		names[i] = a.names[0]
	}
	return names
}
