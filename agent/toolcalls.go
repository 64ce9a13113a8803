package agent

import (
	"bytes"
	"slices"

	"github.com/tetherdev/tether/internal/jsontext"
)

// toolCalls says where an agent's transcript keeps the tool calls of its
// assistant messages, and which of its tools write one file (the input
// field naming it) or none: a reader for TurnWrites as data. Any other
// tool (a shell, a subagent, a tool tether does not know) may write
// anything.
type toolCalls struct {
	marker  string // a line without it holds no call: skipped undecoded
	role    string // the assistant's role in message.role ("" for Qwen Code's type)
	blocks  string // message's key holding the blocks: content or parts
	call    string // a block's type naming a call ("" : the block holds an object under key)
	key     string // for call "": the block's key holding the call
	input   string // the call's key holding its input
	files   map[string]string
	readers []string
}

// The tool calls of Droid's, Pi's and Qwen Code's transcripts, as their
// real CLIs write them (agent/testdata/recorded).
var (
	// {"type":"message","message":{"role":"assistant","content":[{"type":
	// "tool_use","name":"Create","input":{"file_path":…}}]}}
	droidTools = toolCalls{marker: `"tool_use"`, role: "assistant", blocks: "content", call: "tool_use", input: "input",
		files:   map[string]string{"Create": "file_path", "Edit": "file_path", "MultiEdit": "file_path"},
		readers: []string{"Read", "LS", "Grep", "Glob", "ToolSearch", "TaskOutput", "WebSearch", "FetchUrl"}}
	// {"type":"message","message":{"role":"assistant","content":[{"type":
	// "toolCall","name":"write","arguments":{"path":…}}]}}
	piTools = toolCalls{marker: `"toolCall"`, role: "assistant", blocks: "content", call: "toolCall", input: "arguments",
		files:   map[string]string{"write": "path", "edit": "path"},
		readers: []string{"read", "grep", "find", "ls"}}
	// {"type":"assistant","message":{"role":"model","parts":[{"functionCall":
	// {"name":"write_file","args":{"file_path":…}}}]}}
	qwenTools = toolCalls{marker: `"functionCall"`, role: "model", blocks: "parts", key: "functionCall", input: "args",
		files: map[string]string{"write_file": "file_path", "edit": "file_path", "notebook_edit": "notebook_path"},
		readers: []string{"read_file", "read_many_files", "glob", "grep_search", "list_directory", "web_fetch", "web_search",
			"tool_search", "list_agents", "get_goal", "ask_user_question"}}
)

// writes reads one transcript line for TurnWrites.
func (t toolCalls) writes(line []byte, w *ToolWrites) {
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
	v, err := jsontext.Parse(blocks)
	if err != nil {
		return
	}
	for block := range v.Elements() {
		call := block.Raw()
		if t.key != "" {
			var inner []byte
			if decode(call, []wireField{{name: t.key, raw: &inner}}) != nil || len(inner) == 0 {
				continue
			}
			call = inner
		} else {
			var typ string
			if decode(call, []wireField{{name: "type", str: &typ}}) != nil || typ != t.call {
				continue
			}
		}
		var name string
		var input []byte
		if decode(call, []wireField{{name: "name", str: &name}, {name: t.input, raw: &input}}) != nil {
			continue
		}
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
}
