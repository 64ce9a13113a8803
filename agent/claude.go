package agent

// claudeCode is Claude Code's hook protocol: JSON on stdin, snake_case, the
// event in hook_event_name. Claude Code exports CLAUDE_PID to its hooks.
func claudeCode() adapter {
	const name = "claude-code"
	return adapter{
		info:   Info{Name: name, Display: "Claude Code", OwnerEnv: "CLAUDE_PID", Binary: "claude"},
		events: claudeEvents,
		waits:  claudeWaits,
		// -p: "0", and its permission requests, which its hooks still get,
		// are answered by its rules, with no dialog.
		attendedEnv: "CLAUDE_CODE_SESSION_ATTENDED",
		parse:       snakeParse(name, claudeEvents, nil),
		resume:      resumeWith("claude", "", "--resume", "--resume"),
		fresh:       freshWith("claude", "", ""),
		cancelled:   claudeCancelled,
		failure:     claudeFailure,
		writes:      claudeTools.writes,
	}
}
