// Package agent turns a coding agent's hook payload into a tether event.
//
// One adapter per agent (Claude Code, Gemini CLI, Codex, Cursor, Copilot CLI)
// reads the payload the agent documents for its hooks and maps the agent's
// own event names onto state's events: session-start, turn-start, turn-end,
// session-end and error. Everything else an agent reports (tool calls,
// subagents, notifications, compaction) comes back with Ignore set, so it is
// never mistaken for a turn of the main session.
//
// What the package promises:
//   - Parse is safe on any bytes: it never panics, and on success the session
//     ID is valid for the store and the event is either one tether tracks or
//     marked Ignore.
//   - Parse decodes the payload once with encoding/json into a small struct
//     and does no I/O; it is cheap enough for the hook's hot path.
//   - A payload that is plainly another agent's is refused with ErrWrongAgent
//     rather than recorded under the wrong agent.
//   - Response says what the hook must print on stdout for the agent's
//     protocol, and is nil whenever the protocol asks for nothing.
//   - ResumeCommand and FreshCommand build argv slices (never shell strings)
//     for the sweep's resume command.
//
// The package imports only the standard library and state, because the hook
// binary may import nothing heavier.
package agent
