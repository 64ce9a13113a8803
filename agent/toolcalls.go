package agent

import (
	"bytes"
	"slices"
)

// fileTools says which of an agent's tools write a file (the input field
// naming it) and which change none. Any other tool (a shell, a subagent, a
// tool tether does not know) may write anything: a tool tether is not sure
// writes nothing is never listed as a reader.
type fileTools struct {
	files   map[string]string
	readers []string
}

// record adds what one call of tool name, with input (a JSON object), did
// to files.
func (t fileTools) record(name string, input []byte, w *ToolWrites) {
	field, writes := t.files[name]
	switch {
	case writes:
		var p string
		if decode(input, []wireField{{name: field, str: &p}}) == nil {
			w.add(p)
		}
	case !slices.Contains(t.readers, name):
		w.Shell = true
	}
}

// Each agent's tools, as its real CLI offers them to the model and records
// their calls (agent/testdata/recorded). Tools that write files the reader
// finds elsewhere than in one input field (Codex's and OpenCode's
// apply_patch, Gemini CLI's resultDisplay, Copilot CLI's fileEdits) are
// read by the agent's own reader (writes_<agent>.go).
var (
	claudeFiles = fileTools{
		files: map[string]string{"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"},
		readers: []string{"Read", "Glob", "Grep", "LS", "NotebookRead", "WebFetch", "WebSearch", "TodoWrite", "TodoRead",
			"ExitPlanMode", "BashOutput", "KillShell", "KillBash", "AskUserQuestion", "ListMcpResourcesTool", "ReadMcpResourceTool"}}
	droidFiles = fileTools{
		files:   map[string]string{"Create": "file_path", "Edit": "file_path", "MultiEdit": "file_path"},
		readers: []string{"Read", "LS", "Grep", "Glob", "ToolSearch", "TaskOutput", "WebSearch", "FetchUrl"}}
	piFiles = fileTools{
		files:   map[string]string{"write": "path", "edit": "path"},
		readers: []string{"read", "grep", "find", "ls"}}
	qwenFiles = fileTools{
		files: map[string]string{"write_file": "file_path", "edit": "file_path", "notebook_edit": "notebook_path"},
		readers: []string{"read_file", "read_many_files", "glob", "grep_search", "list_directory", "web_fetch", "web_search",
			"tool_search", "list_agents", "get_goal", "ask_user_question"}}
	// codexFiles: apply_patch (a freeform tool, or a shell command that is
	// only apply_patch) is read from its patch; exec_command is a shell.
	codexFiles = fileTools{
		readers: []string{"view_image", "request_user_input", "update_plan", "get_goal", "tool_search",
			"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"}}
	geminiFiles = fileTools{
		files: map[string]string{"write_file": "file_path", "replace": "file_path"},
		readers: []string{"read_file", "read_many_files", "list_directory", "glob", "grep_search", "search_file_content",
			"web_fetch", "google_web_search", "list_background_processes", "read_background_output",
			"update_topic", "enter_plan_mode", "activate_skill"}}
	copilotFiles = fileTools{
		files: map[string]string{"create": "path", "edit": "path"},
		readers: []string{"view", "grep", "glob", "read_bash", "list_bash", "fetch_copilot_cli_documentation",
			"read_agent", "list_agents"}}
	// opencodeFiles: apply_patch, which OpenCode gives GPT models instead
	// of write and edit, is read from its patch and its metadata.
	opencodeFiles = fileTools{
		files:   map[string]string{"write": "filePath", "edit": "filePath", "multiedit": "filePath"},
		readers: []string{"read", "glob", "grep", "list", "webfetch", "websearch", "codesearch", "todowrite", "todoread", "question"}}
)

// toolCalls says where an agent's transcript keeps the tool calls of its
// assistant messages, and what its tools do (fileTools): a reader for
// TurnWrites as data, for the agents whose calls are blocks of a message.
type toolCalls struct {
	fileTools
	marker string // a line without it holds no call: skipped undecoded
	role   string // the assistant's role in message.role
	blocks string // message's key holding the blocks: content or parts
	call   string // a block's type naming a call ("" : the block holds an object under key)
	key    string // for call "": the block's key holding the call
	input  string // the call's key holding its input
}

// The tool calls of Claude Code's, Droid's, Pi's and Qwen Code's
// transcripts, as their real CLIs write them (agent/testdata/recorded).
var (
	// {"type":"assistant","message":{"role":"assistant","content":[{"type":
	// "tool_use","name":"Write","input":{"file_path":…}}]}}
	claudeTools = toolCalls{fileTools: claudeFiles, marker: `"tool_use"`, role: "assistant", blocks: "content", call: "tool_use", input: "input"}
	// {"type":"message","message":{"role":"assistant","content":[{"type":
	// "tool_use","name":"Create","input":{"file_path":…}}]}}
	droidTools = toolCalls{fileTools: droidFiles, marker: `"tool_use"`, role: "assistant", blocks: "content", call: "tool_use", input: "input"}
	// {"type":"message","message":{"role":"assistant","content":[{"type":
	// "toolCall","name":"write","arguments":{"path":…}}]}}
	piTools = toolCalls{fileTools: piFiles, marker: `"toolCall"`, role: "assistant", blocks: "content", call: "toolCall", input: "arguments"}
	// {"type":"assistant","message":{"role":"model","parts":[{"functionCall":
	// {"name":"write_file","args":{"file_path":…}}}]}}
	qwenTools = toolCalls{fileTools: qwenFiles, marker: `"functionCall"`, role: "model", blocks: "parts", key: "functionCall", input: "args"}
)

// writes reads one transcript line for TurnWrites.
func (t toolCalls) writes(line []byte, w *ToolWrites) {
	t.calls(line, func(name string, input []byte) { t.record(name, input, w) })
}

// calls calls fn with each tool call of an assistant message the
// transcript line holds, in order: the tool's name and its input.
func (t toolCalls) calls(line []byte, fn func(name string, input []byte)) {
	if !bytes.Contains(line, []byte(t.marker)) {
		return
	}
	var message, blocks []byte
	if decode(line, []wireField{{name: "message", raw: &message}}) != nil {
		return
	}
	var role string
	if decode(message, []wireField{{name: "role", str: &role}, {name: t.blocks, raw: &blocks}}) != nil || role != t.role {
		return
	}
	elements(blocks, func(call []byte) {
		if t.key != "" {
			var inner []byte
			if decode(call, []wireField{{name: t.key, raw: &inner}}) != nil || len(inner) == 0 {
				return
			}
			call = inner
		} else {
			var typ string
			if decode(call, []wireField{{name: "type", str: &typ}}) != nil || typ != t.call {
				return
			}
		}
		var name string
		var input []byte
		if decode(call, []wireField{{name: "name", str: &name}, {name: t.input, raw: &input}}) == nil {
			fn(name, input)
		}
	})
}
