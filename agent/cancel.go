package agent

import (
	"bytes"
	"io"
	"strings"
	"time"

	"github.com/tetherdev/tether/internal/jsontext"
	"github.com/tetherdev/tether/state"
)

// maxCancelScan bounds how much of a transcript TurnCancelled reads: a
// cancel is among the last lines the agent wrote.
const maxCancelScan = 256 << 10

// TurnCancelled reports whether the agent wrote into its transcript, past
// byte from (where the running turn started), that the user cancelled the
// turn. It is for agents that fire no hook on a cancel: Claude Code's TUI
// fires nothing when Esc stops a turn, but writes "[Request interrupted by
// user]" into the transcript; Copilot CLI writes an abort entry. It reads at most the last 256 KiB, only of a
// transcript OpenTranscript opens inside root, and says false whenever it
// cannot tell: a running turn is then taken as running.
func TurnCancelled(agentName, root, path string, from int64) bool {
	a, found := find(agentName)
	if !found || a.cancelled == nil || path == "" || from < 0 {
		return false
	}
	f, err := OpenTranscript(root, path)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() <= from {
		return false
	}
	start := max(from, fi.Size()-maxCancelScan)
	data, err := io.ReadAll(io.NewSectionReader(f, start, fi.Size()-start))
	if err != nil {
		return false
	}
	if start > from {
		// Started mid-line: the first, partial line is not judged.
		_, data, _ = bytes.Cut(data, []byte{'\n'})
	}
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		if a.cancelled(line) {
			return true
		}
	}
	return false
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
	err := tx.AppendTurn(state.TurnRecord{
		T: state.RecTurnEnd, Turn: s.Turns, At: at, Head: head, TranscriptSize: TranscriptSize(s.TranscriptRoot, s.TranscriptPath),
	})
	return err == nil, err
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
