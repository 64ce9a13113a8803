package agent

import "bytes"

// copilotWrites reads one line of a Copilot CLI events.jsonl, its tools
// being copilotFiles: a tool as it starts, {"type":"tool.execution_start",
// "data":{"toolName":…,"arguments":{…}}}, and the files a tool edited, as
// it completes, {"type":"tool.execution_complete","data":{"fileEdits":
// [{"path":…,"kind":…}]}}.
func copilotWrites(line []byte, w *ToolWrites) {
	if !bytes.Contains(line, []byte(`"tool.execution_`)) {
		return
	}
	var typ string
	var data []byte
	if decode(line, []wireField{{name: "type", str: &typ}, {name: "data", raw: &data}}) != nil {
		return
	}
	switch typ {
	case "tool.execution_start":
		var name string
		var args []byte
		if decode(data, []wireField{{name: "toolName", str: &name}, {name: "arguments", raw: &args}}) == nil {
			copilotFiles.record(name, args, w)
		}
	case "tool.execution_complete":
		var edits []byte
		if decode(data, []wireField{{name: "fileEdits", raw: &edits}}) != nil {
			return
		}
		elements(edits, func(edit []byte) {
			var p string
			if decode(edit, []wireField{{name: "path", str: &p}}) == nil {
				w.add(p)
			}
		})
	}
}
