package agent

import (
	"bytes"
	"strings"

	"github.com/tetherdev/tether/internal/jsontext"
)

// codexWrites reads one line of a Codex rollout ({"type":…,"payload":{…}}),
// its tools being codexFiles but for apply_patch and exec_command:
//   - a tool call the model made, a response_item: {"type":"function_call",
//     "name","arguments":"<JSON>"} or {"type":"custom_tool_call","name",
//     "input":"<text>"} (apply_patch, a freeform tool for the models Codex
//     gives one: "input" is the patch); other items named *_call are tools
//     of the API's own (web_search_call reads, the rest may write);
//   - what a patch did, an event_msg item_completed of a FileChange:
//     {"changes":{"<absolute path>":{"type":"add"|"update"|"delete",
//     "move_path":…}}}, however the patch came (the tool, or a shell
//     command Codex ran as apply_patch).
func codexWrites(line []byte, w *ToolWrites) {
	if !bytes.Contains(line, []byte(`"response_item"`)) && !bytes.Contains(line, []byte(`"FileChange"`)) {
		return
	}
	var typ string
	var payload []byte
	if decode(line, []wireField{{name: "type", str: &typ}, {name: "payload", raw: &payload}}) != nil {
		return
	}
	var kind, name, args, input string
	var item []byte
	if decode(payload, []wireField{{name: "type", str: &kind}, {name: "name", str: &name}, {name: "arguments", str: &args},
		{name: "input", str: &input}, {name: "item", raw: &item}}) != nil {
		return
	}
	switch {
	case typ == "event_msg" && kind == "item_completed":
		codexFileChange(item, w)
	case typ != "response_item":
	case kind == "custom_tool_call" && name == "apply_patch":
		patchPaths(input, w)
	case kind == "function_call" && name == "apply_patch":
		var patch string
		if decode([]byte(args), []wireField{{name: "input", str: &patch}}) == nil {
			patchPaths(patch, w)
		}
	case kind == "function_call" && name == "exec_command":
		var cmd string
		if decode([]byte(args), []wireField{{name: "cmd", str: &cmd}}) == nil {
			if patch, ok := codexHeredocPatch(cmd); ok {
				patchPaths(patch, w)
				return
			}
		}
		w.Shell = true
	case kind == "function_call" || kind == "custom_tool_call":
		codexFiles.record(name, nil, w)
	case kind == "web_search_call" || kind == "tool_search_call":
	case strings.HasSuffix(kind, "_call"):
		w.Shell = true // local_shell_call, and what the API adds
	}
}

// codexFileChange records the files of a completed FileChange item.
func codexFileChange(item []byte, w *ToolWrites) {
	var kind string
	var changes []byte
	if decode(item, []wireField{{name: "type", str: &kind}, {name: "changes", raw: &changes}}) != nil || kind != "FileChange" {
		return
	}
	v, err := jsontext.Parse(changes)
	if err != nil || v.Kind() != jsontext.Object {
		return
	}
	for k, change := range v.Members() {
		path, _ := k.Unquote() // a key is a string
		w.add(path)
		var moved string
		if decode(change.Raw(), []wireField{{name: "move_path", str: &moved}}) == nil {
			w.add(moved)
		}
	}
}

// codexHeredocPatch is the patch of a shell command that is apply_patch
// given its patch in a heredoc and nothing else, as Codex teaches a model
// with no apply_patch tool to call it: apply_patch <<'EOF' … EOF (Codex
// applies it itself; run by a shell, its apply_patch applies the same).
// ok is false for any other command, and for one that does more.
func codexHeredocPatch(cmd string) (patch string, ok bool) {
	cmd = strings.TrimSpace(cmd)
	rest, ok := strings.CutPrefix(cmd, "apply_patch")
	if !ok {
		if rest, ok = strings.CutPrefix(cmd, "applypatch"); !ok {
			return "", false
		}
	}
	rest, ok = strings.CutPrefix(strings.TrimLeft(rest, " \t"), "<<")
	if !ok {
		return "", false
	}
	first, body, ok := strings.Cut(rest, "\n")
	delim := strings.TrimSpace(first)
	if len(delim) >= 2 && (delim[0] == '\'' || delim[0] == '"') && delim[len(delim)-1] == delim[0] {
		delim = delim[1 : len(delim)-1]
	}
	if !ok || !isWord(delim) {
		return "", false
	}
	// The heredoc ends at the first line that is its delimiter, which must
	// be the command's last.
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		if l == delim {
			if i != len(lines)-1 {
				return "", false
			}
			return strings.Join(lines[:i], "\n"), true
		}
	}
	return "", false
}

// isWord tells a non-empty run of letters, digits and underscores.
func isWord(s string) bool {
	for _, c := range s {
		if !(c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return s != ""
}
