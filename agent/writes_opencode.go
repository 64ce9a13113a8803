package agent

import "bytes"

// opencodeWrites reads one message of an OpenCode session as `opencode
// export` gives it, its tools being opencodeFiles: its tool parts,
// {"parts":[{"type":"tool","tool":…,"state":{"input":{…},"metadata":
// {…}}}]}. apply_patch's input is its patch ({"patchText":…}, paths
// relative to the project) and its metadata the files it wrote
// ({"files":[{"filePath","movePath"}]}, absolute). A message's "patch"
// parts are no record of the agent's: OpenCode's snapshots of the whole
// worktree, another's writes and all.
func opencodeWrites(line []byte, w *ToolWrites) {
	if !bytes.Contains(line, []byte(`"tool"`)) {
		return
	}
	var parts []byte
	if decode(line, []wireField{{name: "parts", raw: &parts}}) != nil {
		return
	}
	elements(parts, func(part []byte) {
		var typ, tool string
		var st, input, meta []byte
		if decode(part, []wireField{{name: "type", str: &typ}, {name: "tool", str: &tool}, {name: "state", raw: &st}}) != nil || typ != "tool" ||
			decode(st, []wireField{{name: "input", raw: &input}, {name: "metadata", raw: &meta}}) != nil {
			return
		}
		if tool != "apply_patch" {
			opencodeFiles.record(tool, input, w)
			return
		}
		var patch string
		var files []byte
		if decode(input, []wireField{{name: "patchText", str: &patch}}) == nil {
			patchPaths(patch, w)
		}
		if decode(meta, []wireField{{name: "files", raw: &files}}) == nil {
			elements(files, func(f []byte) {
				var path, moved string
				if decode(f, []wireField{{name: "filePath", str: &path}, {name: "movePath", str: &moved}}) == nil {
					w.add(path)
					w.add(moved)
				}
			})
		}
	})
}
