package agent

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"

	"github.com/tetherdev/tether/internal/jsontext"
)

// ToolWrites is what a turn's tool calls did to files, as the agent
// recorded them in its transcript.
type ToolWrites struct {
	// Paths are the files its file tools wrote, as the agent named them
	// (absolute, or relative to its working directory), each once.
	Paths []string
	// Shell: a tool that may write any file ran (a shell command, a
	// subagent, a tool tether does not know): what the transcript names
	// is not all the turn may have changed.
	Shell bool
}

// maxWritesScan bounds the bytes of one turn TurnWrites reads.
const maxWritesScan = 64 << 20

// TurnWrites reads the tool calls the agent recorded in its transcript
// between byte from and byte to (to < 0: its end), a transcript
// OpenTranscript opens inside root. ok is false when the transcript cannot
// tell: an agent whose transcript tether does not read for tools (the
// adapter's writes is nil), or one it cannot read, or a turn longer than
// it reads: the caller then has only the captures.
func TurnWrites(agentName, root, path string, from, to int64) (w ToolWrites, ok bool) {
	a, found := find(agentName)
	if !found || a.writes == nil || path == "" || from < 0 {
		return ToolWrites{}, false
	}
	f, err := OpenTranscript(root, path)
	if err != nil {
		return ToolWrites{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ToolWrites{}, false
	}
	if to < 0 || to > fi.Size() {
		to = fi.Size()
	}
	if to-from > maxWritesScan {
		return ToolWrites{}, false
	}
	if to <= from {
		return ToolWrites{}, true // nothing recorded: no tool ran
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, from, to-from), 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			a.writes(bytes.TrimSpace(line), &w)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return ToolWrites{}, false
		}
	}
	return w, true
}

// add records a path once.
func (w *ToolWrites) add(p string) {
	if p != "" && !slices.Contains(w.Paths, p) {
		w.Paths = append(w.Paths, p)
	}
}

// claudeFileTools name, for each Claude Code tool that writes one file,
// the input field holding its path; claudeReadTools change no file. Any
// other tool (Bash, a Task's subagent, an MCP server's) may write anything.
var (
	claudeFileTools = map[string]string{"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
	claudeReadTools = []string{"Read", "Glob", "Grep", "LS", "NotebookRead", "WebFetch", "WebSearch", "TodoWrite", "TodoRead",
		"ExitPlanMode", "BashOutput", "KillShell", "KillBash", "AskUserQuestion", "ListMcpResourcesTool", "ReadMcpResourceTool"}
)

// claudeWrites reads one line of a Claude Code transcript: the tool_use
// blocks of an assistant message, {"type":"assistant","message":{"content":
// [{"type":"tool_use","name":"Write","input":{"file_path":"/repo/a.txt",…}}]}}.
func claudeWrites(line []byte, w *ToolWrites) {
	if !bytes.Contains(line, []byte(`"tool_use"`)) {
		return
	}
	var typ string
	var message, content []byte
	if decode(line, []wireField{{name: "type", str: &typ}, {name: "message", raw: &message}}) != nil || typ != "assistant" {
		return
	}
	if decode(message, []wireField{{name: "content", raw: &content}}) != nil {
		return
	}
	v, err := jsontext.Parse(content)
	if err != nil {
		return
	}
	for block := range v.Elements() {
		var kind, name string
		var input []byte
		if decode(block.Raw(), []wireField{{name: "type", str: &kind}, {name: "name", str: &name}, {name: "input", raw: &input}}) != nil || kind != "tool_use" {
			continue
		}
		field, writes := claudeFileTools[name]
		switch {
		case writes:
			var p string
			if decode(input, []wireField{{name: field, str: &p}}) == nil {
				w.add(p)
			}
		case !slices.Contains(claudeReadTools, name):
			w.Shell = true
		}
	}
}
