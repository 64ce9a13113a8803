// Package agent turns a coding agent's hook payload into a tether event.
//
// One adapter per agent (Claude Code, Gemini CLI, Codex, Cursor, Copilot CLI,
// OpenCode, Factory's Droid, Pi, Qwen Code) reads the payload the agent
// documents for its hooks (for OpenCode and Pi, which have plugins
// instead, the payload of tether's own plugin or extension) and maps the
// agent's own event names onto state's events: session-start, turn-start,
// turn-end, session-end and error, and the signals that the agent waits for its user
// (wait, wait-input) or that a wait is over (wait-over), with what it waits
// for (Event.Wait): one table per agent (waits.go), one entry per event.
// Everything else an agent reports (tool calls that ask nothing, subagents'
// turns, other notifications, compaction) comes back with Ignore set, so it
// is never mistaken for a turn of the main session.
//
// What the package promises:
//   - Parse is safe on any bytes: it never panics, and on success the session
//     ID is valid for the store and the event is either one tether tracks or
//     marked Ignore.
//   - Event.OwnerPID is the agent's PID when the payload carries it
//     (OpenCode's plugin, Pi's extension: the process may exit before its
//     hook runs); like
//     Info.OwnerEnv it is only a hint, which the hook checks.
//   - Parse decodes the payload once, without reflection, and does no I/O;
//     it is cheap enough for the hook's hot path. Event.Key names the event
//     itself (turn_id, prompt_id, generation_id or timestamp), so the same
//     event delivered twice is recognised; Codex's notify may only update a
//     session its hooks record (Event.NoCreate).
//   - TranscriptPath derives the transcript of an agent whose early events
//     do not name it (Copilot CLI), and TurnCancelled reads, bounded and
//     never blocking, whether the agent wrote a cancel into its transcript
//     for an agent that fires no hook on one (Claude Code's Esc, Copilot
//     CLI's abort); EndTurnFromTranscript records such an end, and at a
//     session end, read in the same pass, a model error that ended the
//     turn, for an agent that may kill the hook that would say so (Claude
//     Code's StopFailure, as it exits).
//   - An agent is mostly data (table.go): its event table, where its
//     payload keeps what tether reads (read into one said), its resume and
//     fresh commands, its transcript home (transcriptHomes), its transcript
//     readers and its wait signals; its adapter's parse holds only what the
//     agent does differently (Codex's notify, Copilot CLI's failed tool
//     calls, Droid's PreToolUse, Qwen Code's and Droid's idle_prompt, ...).
//   - StartTurnFromTranscript records a turn the agent ran without
//     announcing it (`droid exec` fires no UserPromptSubmit), from the last
//     prompt of its transcript with no end after it, the turn's slice
//     starting at that prompt's line; TurnFailure reads the error of a
//     failed turn for an agent whose turn end does not say (Droid's Stop).
//   - TurnWrites reads, for the sweep, which files each turn's own tool
//     calls wrote, from its span of the agent's transcript, one reader per
//     adapter (its writes field), and whether a tool that may write anything
//     ran (a shell, a subagent, a tool tether does not know). Which tools
//     write which file and which write none is data (fileTools, toolcalls.go);
//     so is where Claude Code, Droid, Pi and Qwen Code keep their calls
//     (toolCalls). Codex (apply_patch's patch, or a command that is only
//     apply_patch; its FileChange items), Gemini CLI (write_file and
//     replace, the file they wrote), Copilot CLI (create and edit, its
//     fileEdits) have a reader each; OpenCode, which keeps its conversation
//     in its database, is read from a turn's exported messages
//     (ConversationWrites: write, edit, apply_patch's patch and files). An
//     agent without a reader (Cursor) cannot tell, and says so: its turns
//     are credited from the captures.
//   - The mappings follow what the real CLIs send (agent/testdata/recorded).
//     ReviewerAnswers reads, bounded and never blocking, whether the
//     agent's own automatic reviewer answers its permission requests rather
//     than its user (Codex's approvals_reviewer auto_review): such a
//     request is no wait for anyone. Attended says whether the agent runs
//     where nobody is asked, though it signals a dialog (Claude Code's -p,
//     by its hooks' environment; Copilot CLI's -p, by its command line):
//     no wait either.
//   - A payload that is plainly another agent's is refused with ErrWrongAgent
//     rather than recorded under the wrong agent.
//   - Response says what the hook must print on stdout for the agent's
//     protocol, and is nil whenever the protocol asks for nothing.
//   - ResumeCommand and FreshCommand build argv slices (never shell strings)
//     for the sweep's resume command.
//   - A transcript is read only where its agent keeps transcripts: one table
//     (transcriptHomes) says where, per agent, and TranscriptRoot resolves it
//     from the agent's environment. OpenTranscript opens only a regular file
//     inside that directory, through os.Root (no symlink leads out) and
//     without blocking (a FIFO or a device is refused, never waited on).
//   - Apply is the one way a hook call changes a session, whether the hook
//     applies it under the session's lock or a later writer or reader
//     applies it from the spool (Spooled, ApplySpooled): a spooled call
//     carries the answers its hook got (owner, transcript sizes and
//     roots), so it changes the session as it would have then.
//
// The package imports only the standard library, state and proclive,
// because the hook binary may import nothing heavier.
package agent
