package agent

import "bytes"

// geminiWrites reads one line of a Gemini CLI chat, its tools being
// geminiFiles: a model message with the tool calls it made,
// {"type":"gemini","toolCalls":[{"name":…,"args":{…},"resultDisplay":
// {"filePath":…}}]}. A file tool's path as the model gave it may be
// relative; the file it wrote, once it ran, is resultDisplay's filePath.
// ("$set" lines, which restate the conversation on a resume, hold no
// call.)
func geminiWrites(line []byte, w *ToolWrites) {
	if !bytes.Contains(line, []byte(`"toolCalls"`)) {
		return
	}
	var typ string
	var calls []byte
	if decode(line, []wireField{{name: "type", str: &typ}, {name: "toolCalls", raw: &calls}}) != nil || typ != "gemini" {
		return
	}
	elements(calls, func(call []byte) {
		var name string
		var args, display []byte
		if decode(call, []wireField{{name: "name", str: &name}, {name: "args", raw: &args}, {name: "resultDisplay", raw: &display}}) != nil {
			return
		}
		var wrote string
		if _, file := geminiFiles.files[name]; file && len(display) > 0 && display[0] == '{' &&
			decode(display, []wireField{{name: "filePath", str: &wrote}}) == nil && wrote != "" {
			w.add(wrote)
			return
		}
		geminiFiles.record(name, args, w)
	})
}
