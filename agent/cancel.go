package agent

import (
	"bytes"
	"io"
	"iter"
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
	return readTurnEnd(agentName, root, path, from, -1, false).Cancelled
}

// TurnEnd is how a running turn ended, as its agent wrote it into its
// transcript and no hook reported it: Cancelled by the user, or Failure,
// the error a model call ended it with. The zero TurnEnd says the
// transcript shows no end, or cannot be read.
type TurnEnd struct {
	Cancelled bool
	Failure   string
}

// readTurnEnd reads in one pass how the running turn ended (TurnEnd):
// a cancel anywhere between from and to (to < 0: the end of the file; see
// TurnCancelled); with failures, a model
// error the conversation did not go on after. Failures are for an agent
// whose hook for a failed turn may never record it: Claude Code fires
// StopFailure and SessionEnd as it exits and kills the hooks still running,
// StopFailure's among them, so the SessionEnd hook must tell a turn that
// failed from one cut short; a turn that goes on may have failed a call it
// retried, so only the end of a session asks.
func readTurnEnd(agentName, root, path string, from, to int64, failures bool) TurnEnd {
	a, found := find(agentName)
	if !found {
		return TurnEnd{}
	}
	failure := a.failure
	if !failures {
		failure = nil
	}
	if a.cancelled == nil && failure == nil {
		return TurnEnd{}
	}
	var end TurnEnd
	scanTurn(root, path, from, to, func(line []byte, _ int64) {
		if a.cancelled != nil && !end.Cancelled {
			end.Cancelled = a.cancelled(line)
		}
		if failure != nil {
			if msg, ok := failure(line); ok {
				end.Failure = msg
			}
		}
	})
	if end.Cancelled {
		end.Failure = "" // the user stopped it: whatever failed is not why it ended
	}
	return end
}

// scanTurn calls fn with each line the agent wrote into its transcript
// between bytes from and to (to < 0: its end; a spooled call reads what
// its hook saw), and the line's offset, reading at most the last 256 KiB
// of that (a cancel or a failure is among the last lines), and only of a
// transcript OpenTranscript opens inside root.
func scanTurn(root, path string, from, to int64, fn func(line []byte, off int64)) {
	if path == "" || from < 0 {
		return
	}
	f, err := OpenTranscript(root, path)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return
	}
	end := fi.Size()
	if to >= 0 {
		end = min(end, to)
	}
	if end <= from {
		return
	}
	start := max(from, end-maxTurnScan)
	data, err := io.ReadAll(io.NewSectionReader(f, start, end-start))
	if err != nil {
		return
	}
	off := start
	if start > from {
		// Started mid-line: the first, partial line is not judged.
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return
		}
		data, off = data[i+1:], off+int64(i+1)
	}
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		fn(line, off)
		off += int64(len(line)) + 1
	}
}

// ReviewerAnswers reports whether the agent's own automatic reviewer, not
// its user, answers the permission requests of its running turn, as the
// agent wrote into its transcript (root and path as for TurnCancelled):
// Codex fires PermissionRequest before its reviewer (approvals_reviewer
// auto_review) decides, and its user never sees that request. The last
// statement in the transcript's tail counts; false when there is none, or
// the agent has no such reviewer.
func ReviewerAnswers(agentName, root, path string) bool {
	a, found := find(agentName)
	if !found || a.reviewer == nil {
		return false
	}
	auto := false
	scanTurn(root, path, 0, -1, func(line []byte, _ int64) {
		if a, ok := a.reviewer(line); ok {
			auto = a
		}
	})
	return auto
}

// turnLine is what a transcript line says of a turn: its start, the
// user's Prompt (and the Key naming it), or its End.
type turnLine struct {
	Start       bool
	Prompt, Key string
	End         bool
}

// StartTurnFromTranscript starts, in a session loaded idle under its lock,
// a turn the agent ran without announcing it (`droid exec` fires no
// UserPromptSubmit): the last prompt its transcript holds past the last
// turn's start, as far as size (its size when the caller looked), with no
// end after it. The turn-start record carries that
// prompt, and the prompt's offset as its transcript size, so the turn's
// slice of the transcript starts with it. It reports whether it started
// one. The hook calls it before a turn end or a session end, the sweep
// before it ends a session whose owner died.
func StartTurnFromTranscript(tx *state.Tx, at time.Time, head string, size int64) (bool, error) {
	s := tx.Session
	if s.Phase != state.PhaseIdle {
		return false, nil
	}
	t, from, ok := pendingTurn(s.Agent, s.TranscriptRoot, s.TranscriptPath, s.TurnTranscriptFrom, size)
	if !ok {
		return false, nil
	}
	return true, tx.AppendTurn(state.TurnRecord{
		T: state.RecTurnStart, Turn: s.Turns + 1, At: at, Prompt: t.Prompt, Head: head,
		TranscriptSize: from, Owner: s.Owner, Key: t.Key,
	})
}

// pendingTurn reads the last prompt of the transcript past byte from
// whose turn has not ended, and the offset of its line: a turn the agent
// runs without having announced it, for an agent that may (see
// adapter.turns); ok is false for the others, and whenever it cannot
// tell.
func pendingTurn(agentName, root, path string, from, to int64) (t turnLine, at int64, ok bool) {
	a, found := find(agentName)
	if !found || a.turns == nil {
		return turnLine{}, 0, false
	}
	scanTurn(root, path, from, to, func(line []byte, off int64) {
		switch l := a.turns(line); {
		case l.Start:
			t, at, ok = l, off, true
		case l.End:
			t, at, ok = turnLine{}, 0, false
		}
	})
	return t, at, ok
}

// TurnFailure is the error a model call ended the running turn with, as
// its agent wrote it into its transcript between bytes from and to (to <
// 0: its end), for an agent whose turn end does not say (Droid's Stop);
// "" for the others, and when the turn did not fail.
func TurnFailure(agentName, root, path string, from, to int64) string {
	if a, found := find(agentName); !found || !a.stopFailures {
		return ""
	}
	return readTurnEnd(agentName, root, path, from, to, true).Failure
}

// EndTurnFromTranscript ends the running turn of a session loaded under
// its lock when its transcript, as far as size (its size when the caller
// looked), says it ended (readTurnEnd; a failure only with failures): it
// appends the turn-end record the agent never sent, at the given time and
// HEAD, carrying the failure, which leaves the session idle. It returns
// how the turn ended, zero when it did not. The hook calls it before an
// event that follows such a turn (failures at a session end), the sweep
// for a session it finds active.
func EndTurnFromTranscript(tx *state.Tx, at time.Time, head string, failures bool, size int64) (TurnEnd, error) {
	s := tx.Session
	if !s.TurnRunning() {
		return TurnEnd{}, nil
	}
	end := readTurnEnd(s.Agent, s.TranscriptRoot, s.TranscriptPath, s.TurnTranscriptFrom, size, failures)
	if end == (TurnEnd{}) {
		return end, nil
	}
	return end, tx.AppendTurn(state.TurnRecord{
		T: state.RecTurnEnd, Turn: s.Turns, At: at, Head: head, Error: end.Failure, TranscriptSize: size,
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
	for text := range claudeTexts(message) {
		if strings.HasPrefix(text, claudeCancelMarker) {
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
	for text := range claudeTexts(message) {
		if text != "" {
			msg = text
			break
		}
	}
	first, _, _ := strings.Cut(msg, "\n")
	return first, true
}

// claudeTexts yields the texts of a message of a Claude Code transcript:
// its content when that is a string, else the text of each text block.
func claudeTexts(message []byte) iter.Seq[string] {
	return func(yield func(string) bool) {
		var content []byte
		if decode(message, []wireField{{name: "content", raw: &content}}) != nil {
			return
		}
		v, err := jsontext.Parse(content)
		if err != nil {
			return
		}
		if s, err := v.Unquote(); err == nil {
			yield(s)
			return
		}
		for block := range v.Elements() {
			var kind, text string
			if decode(block.Raw(), []wireField{{name: "type", str: &kind}, {name: "text", str: &text}}) == nil && kind == "text" && !yield(text) {
				return
			}
		}
	}
}

// Unsettled tells a session whose record may still change with what its
// agent writes: its agent ended it while a turn ran (session-end, so
// interrupted), and the agent is one that writes how a turn ended into its
// transcript, where its hook may not have seen it yet. Claude Code and
// Copilot CLI, sent SIGINT mid-turn in -p, write the user's cancel and
// fire their session end at the same moment: which comes first is a race.
func Unsettled(s *state.Session) bool {
	a, ok := find(s.Agent)
	return ok && (a.cancelled != nil || a.failure != nil) &&
		s.Phase == state.PhaseEnded && s.Interrupted && s.EndedBy == state.EventSessionEnd
}

// SettleEnd revisits an Unsettled session once its agent is done writing
// (gone, or ended long enough ago): a cancel, or a model error, that the
// agent wrote after the running turn started settles the record as the
// session-end hook makes it when it sees one, so that one user action
// gives one record whoever won the race: the turn ended there (a turn-end
// record at the session's end, at the given HEAD) and the session ended
// cleanly. It reports whether it changed the session.
func SettleEnd(tx *state.Tx, head string) (bool, error) {
	s := tx.Session
	if !Unsettled(s) {
		return false, nil
	}
	size := TranscriptSize(s.TranscriptRoot, s.TranscriptPath)
	end := readTurnEnd(s.Agent, s.TranscriptRoot, s.TranscriptPath, s.TurnTranscriptFrom, size, true)
	if end == (TurnEnd{}) {
		return false, nil
	}
	if err := tx.AppendTurn(state.TurnRecord{
		T: state.RecTurnEnd, Turn: s.Turns, At: s.EndedAt, Head: head, Error: end.Failure, TranscriptSize: size,
	}); err != nil {
		return false, err
	}
	_, act := state.Transition(state.PhaseIdle, state.EventSessionEnd)
	s.EndReason, s.Interrupted = act.EndReason, act.Interrupted
	return true, nil
}
