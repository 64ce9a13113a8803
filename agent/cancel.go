package agent

import (
	"bytes"
	"io"
	"strings"
	"time"

	"github.com/tetherdev/tether/internal/jsontext"
	"github.com/tetherdev/tether/state"
)

// maxTurnScan bounds how much of a transcript scanTurn reads: a cancel or
// a failure is among the last lines the agent wrote.
const maxTurnScan = 256 << 10

// TurnCancelled reports whether the agent wrote into its transcript, past
// byte from (where the running turn started), that the user cancelled the
// turn. It is for agents that fire no hook on a cancel: Claude Code's TUI
// fires nothing when Esc stops a turn, but writes "[Request interrupted by
// user]" into the transcript; Copilot CLI writes an abort entry. It says
// false whenever it cannot tell (see scanTurn): a running turn is then
// taken as running.
func TurnCancelled(agentName, root, path string, from int64) bool {
	a, found := find(agentName)
	if !found || a.cancelled == nil {
		return false
	}
	cancelled := false
	scanTurn(root, path, from, func(line []byte) { cancelled = cancelled || a.cancelled(line) })
	return cancelled
}

// TurnFailed returns the error a model call ended the running turn with,
// as the agent wrote it into its transcript past byte from, when nothing of
// the conversation came after it; "" when it did not, or when it cannot
// tell (see scanTurn). It is for an agent whose hook for a failed turn may
// never record it: Claude Code fires StopFailure and SessionEnd as it exits
// and kills the hooks still running, StopFailure's among them, so the
// SessionEnd hook must tell a turn that failed from one cut short.
func TurnFailed(agentName, root, path string, from int64) string {
	a, found := find(agentName)
	if !found || a.failure == nil {
		return ""
	}
	failure := ""
	scanTurn(root, path, from, func(line []byte) {
		if msg, ok := a.failure(line); ok {
			failure = msg
		}
	})
	return failure
}

// scanTurn calls fn with each line the agent wrote into its transcript
// past byte from, reading at most the last 256 KiB (a cancel or a failure
// is among the last lines), and only of a transcript OpenTranscript opens
// inside root.
func scanTurn(root, path string, from int64, fn func(line []byte)) {
	if path == "" || from < 0 {
		return
	}
	f, err := OpenTranscript(root, path)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() <= from {
		return
	}
	start := max(from, fi.Size()-maxTurnScan)
	data, err := io.ReadAll(io.NewSectionReader(f, start, fi.Size()-start))
	if err != nil {
		return
	}
	if start > from {
		// Started mid-line: the first, partial line is not judged.
		_, data, _ = bytes.Cut(data, []byte{'\n'})
	}
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		fn(line)
	}
}

// EndCancelledTurn ends the running turn of a session loaded under its
// lock when its transcript says the user cancelled it (TurnCancelled): it
// appends the turn-end record the agent never sent, at the given time and
// HEAD, which leaves the session idle. It reports whether it did. The hook
// calls it before an event that follows such a turn, the sweep for a
// session it finds active.
func EndCancelledTurn(tx *state.Tx, at time.Time, head string) (bool, error) {
	s := tx.Session
	if s.Phase != state.PhaseActive || !TurnCancelled(s.Agent, s.TranscriptRoot, s.TranscriptPath, s.TurnTranscriptFrom) {
		return false, nil
	}
	return true, endTurn(tx, at, head, "")
}

// EndFailedTurn ends the running turn of a session loaded under its lock
// when its transcript says a model call failed it (TurnFailed), as
// EndCancelledTurn does, the record carrying the error. The hook calls it
// at a session end: the agent is gone, its turn over one way or the other.
func EndFailedTurn(tx *state.Tx, at time.Time, head string) (bool, error) {
	s := tx.Session
	if s.Phase != state.PhaseActive {
		return false, nil
	}
	failure := TurnFailed(s.Agent, s.TranscriptRoot, s.TranscriptPath, s.TurnTranscriptFrom)
	if failure == "" {
		return false, nil
	}
	return true, endTurn(tx, at, head, failure)
}

// endTurn appends the running turn's end record the agent never sent.
func endTurn(tx *state.Tx, at time.Time, head, failure string) error {
	s := tx.Session
	return tx.AppendTurn(state.TurnRecord{
		T: state.RecTurnEnd, Turn: s.Turns, At: at, Head: head, Error: failure,
		TranscriptSize: TranscriptSize(s.TranscriptRoot, s.TranscriptPath),
	})
}

// TranscriptSize is the size of a transcript now, or 0 when it can't be
// read (see OpenTranscript); checkpoints slice transcripts by these sizes.
func TranscriptSize(root, path string) int64 {
	if path == "" {
		return 0
	}
	f, err := OpenTranscript(root, path)
	if err != nil {
		return 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	return fi.Size()
}

// claudeCancelMarker starts the user entry Claude Code writes into its
// transcript when the user cancels a turn ("[Request interrupted by
// user]", or "... for tool use]" during a tool call).
const claudeCancelMarker = "[Request interrupted by user"

// claudeCancelled tells a transcript line that is Claude Code's cancel
// entry: {"type":"user","message":{"content":[{"type":"text","text":
// "[Request interrupted by user]"}]}}, or with the text as the content.
// A tool result or an assistant message quoting the words is not one.
func claudeCancelled(line []byte) bool {
	if !bytes.Contains(line, []byte(claudeCancelMarker)) {
		return false
	}
	var typ string
	var message []byte
	if decode(line, []wireField{{name: "type", str: &typ}, {name: "message", raw: &message}}) != nil || typ != "user" {
		return false
	}
	var content []byte
	if decode(message, []wireField{{name: "content", raw: &content}}) != nil {
		return false
	}
	v, err := jsontext.Parse(content)
	if err != nil {
		return false
	}
	if s, err := v.Unquote(); err == nil {
		return strings.HasPrefix(s, claudeCancelMarker)
	}
	for block := range v.Elements() {
		var kind, text string
		if decode(block.Raw(), []wireField{{name: "type", str: &kind}, {name: "text", str: &text}}) == nil &&
			kind == "text" && strings.HasPrefix(text, claudeCancelMarker) {
			return true
		}
	}
	return false
}

// claudeFailure reads one line of a Claude Code transcript: ok when it is
// a message of the conversation (type user or assistant), and then msg is
// the error of one Claude Code wrote for a failed model call, its first
// line ({"type":"assistant","isApiErrorMessage":true,"message":{"content":
// [{"type":"text","text":"API Error: 400 …"}]}}), "" for any other.
func claudeFailure(line []byte) (msg string, ok bool) {
	if !bytes.Contains(line, []byte(`"type":"user"`)) && !bytes.Contains(line, []byte(`"type":"assistant"`)) {
		return "", false
	}
	var typ string
	var apiError, message []byte
	fields := []wireField{{name: "type", str: &typ}, {name: "isApiErrorMessage", raw: &apiError}, {name: "message", raw: &message}}
	if decode(line, fields) != nil || typ != "user" && typ != "assistant" {
		return "", false
	}
	if typ != "assistant" || string(apiError) != "true" {
		return "", true
	}
	msg = "model call failed" // unless the message says more
	var content []byte
	if decode(message, []wireField{{name: "content", raw: &content}}) == nil {
		if v, err := jsontext.Parse(content); err == nil {
			if text, err := v.Unquote(); err == nil && text != "" {
				msg = text
			}
			for block := range v.Elements() {
				var kind, text string
				if decode(block.Raw(), []wireField{{name: "type", str: &kind}, {name: "text", str: &text}}) == nil && kind == "text" && text != "" {
					msg = text
					break
				}
			}
		}
	}
	first, _, _ := strings.Cut(msg, "\n")
	return first, true
}
