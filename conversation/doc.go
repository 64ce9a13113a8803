// Package conversation reads what was said in a session of an agent that
// keeps its sessions in a database instead of a transcript file (OpenCode),
// by asking the agent: `opencode export <id>`. The sweep runs it when it
// condenses such a session, and resume when it asks whether the agent still
// has one; the hook never does (it must return in milliseconds).
//
// What the package promises:
//   - Export runs the agent's own command, as an argv (no shell), in the
//     session's worktree, bounded by the context; it never writes to the
//     agent's database. A session the agent says it does not have is
//     ErrGone; any other failure is an error naming the command, with the
//     first line the agent printed.
//   - Messages keep the agent's JSON of each message as it was (compacted),
//     so what reaches a checkpoint is what the agent recorded, redacted
//     there like any transcript.
//   - Select is pure: the messages of the given turns, each turn known by
//     the ID of its prompt (the turn record's key), and the answers to it.
package conversation
