package agent

import "bytes"

// gemini is Gemini CLI's hook protocol: JSON on stdin with the same base
// fields as Claude Code (session_id, transcript_path, cwd, hook_event_name),
// its own event names, and a stdout that must stay silent or hold JSON.
// When a hook's stdout is empty, Gemini CLI shows its stderr to the user as
// a system message: the hook keeps quiet there.
func gemini() adapter {
	const name = "gemini"
	return adapter{
		info:      Info{Name: name, Display: "Gemini CLI", Binary: "gemini", QuietStderr: true},
		events:    geminiEvents,
		waits:     geminiWaits,
		parse:     snakeParse(name, geminiEvents, nil),
		cancelled: geminiCancelled,
		resume:    resumeWith("gemini", "", "--resume", "--resume"),
		fresh:     freshWith("gemini", "-i", "--prompt-interactive"),
		writes:    geminiWrites,
	}
}

// geminiCancelled tells the entry Gemini CLI 0.61 writes into its chat
// when the user denies a tool's confirmation (Esc, "No"): the turn stops,
// and no AfterAgent fires. {"type":"info","content":"Request cancelled."}.
// Esc mid-turn writes it too, and fires AfterAgent: that turn has ended
// already when anyone reads this.
func geminiCancelled(line []byte) bool {
	if !bytes.Contains(line, []byte("Request cancelled.")) {
		return false
	}
	var typ, content string
	return decode(line, []wireField{{name: "type", str: &typ}, {name: "content", str: &content}}) == nil &&
		typ == "info" && content == "Request cancelled."
}
