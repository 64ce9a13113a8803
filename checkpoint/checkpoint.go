package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/redact"
	"github.com/tetherdev/tether/snapshot"
	"github.com/tetherdev/tether/state"
)

// FormatVersion is the version of checkpoint.json this build writes.
const FormatVersion = 1

// Checkpoint is checkpoint.json: the turns of one session condensed in one
// go, with the transcript slice they produced. It never holds the time of
// condensing, so a retry writes the same bytes.
type Checkpoint struct {
	Version     int                `json:"version"`
	ID          string             `json:"id"`
	Session     string             `json:"session"`
	Incarnation string             `json:"incarnation,omitempty"` // of the session's record (state.Session.Incarnation)
	Agent       string             `json:"agent"`
	Worktree    string             `json:"worktree,omitempty"`
	Branch      string             `json:"branch,omitempty"`
	StartedAt   time.Time          `json:"started_at,omitzero"` // session start
	EndedAt     time.Time          `json:"ended_at,omitzero"`   // set once the session has ended
	EndReason   string             `json:"end_reason,omitempty"`
	Interrupted bool               `json:"interrupted,omitempty"` // the session ended mid-turn
	Owner       *proclive.Identity `json:"owner,omitempty"`
	TurnLog     LogRange           `json:"turn_log"`
	Turns       []Turn             `json:"turns"`
	Transcript  Transcript         `json:"transcript"`
	// Redactions counts the secrets replaced by markers in this
	// checkpoint's files, by rule: the prompts, the transcript slice, and
	// any other field. It never holds a secret.
	Redactions redact.Counts `json:"redactions,omitempty"`
}

// LogRange is the byte range [From, To) of the session's turn log that the
// checkpoint condensed.
type LogRange struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// Turn is one turn of the session.
type Turn struct {
	Turn       int       `json:"turn"`
	Prompt     string    `json:"prompt,omitempty"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	EndedAt    time.Time `json:"ended_at,omitzero"`
	HeadBefore string    `json:"head_before,omitempty"` // HEAD when the turn started
	HeadAfter  string    `json:"head_after,omitempty"`  // HEAD when it ended
	// TranscriptFrom and TranscriptTo are the transcript's sizes when the
	// turn started and ended (To 0: not ended, or unknown): where its tool
	// calls are (agent.TurnWrites).
	TranscriptFrom int64 `json:"transcript_from,omitempty"`
	TranscriptTo   int64 `json:"transcript_to,omitempty"`
	// Interrupted: the turn never ended (another turn started, or the
	// session ended while it ran).
	Interrupted bool `json:"interrupted,omitempty"`
	// Running: the turn was still running when condensed; its end lands in
	// a later checkpoint as a Continued turn.
	Running bool `json:"running,omitempty"`
	// Continued: the turn started in an earlier checkpoint.
	Continued bool `json:"continued,omitempty"`
	// Redactions counts the secrets replaced in Prompt.
	Redactions redact.Counts `json:"redactions,omitempty"`
	// Changes lists the paths the turn added, modified and deleted, from the
	// captures of the worktree at its start and end (package snapshot);
	// absent when they are unknown: captures off or failed, or the turn
	// still running.
	Changes *snapshot.Changes `json:"changes,omitempty"`
	// Commits, for a turn still running that made (or saw made) several
	// commits, are its changes counted up to each earlier one (UpTo names
	// it); Changes is counted up to the latest.
	Commits []*snapshot.Changes `json:"commits,omitempty"`
	// Earlier, for a Continued turn, is what the checkpoint that held
	// its start recorded of its changes (while condensing only): a turn
	// counted up to a commit continues with what that commit did not take.
	Earlier *snapshot.Changes `json:"-"`
}

// Transcript describes the transcript slice stored for the checkpoint.
// From and To locate the slice in the agent's file; Bytes and SHA256
// describe what was stored: the slice after redaction, which differs in
// length from To - From when a secret was replaced.
type Transcript struct {
	Path string `json:"path,omitempty"`
	// Ref is the ref holding the stored slice (TranscriptRef), at the
	// checkpoint's path; empty when nothing was stored, and for a
	// checkpoint migrated from LegacyBranch, whose slice is on
	// LegacyTranscripts.
	Ref        string        `json:"ref,omitempty"`
	From       int64         `json:"from"`  // byte offset of the slice in the transcript file
	To         int64         `json:"to"`    // end offset (exclusive)
	Bytes      int64         `json:"bytes"` // size of the stored (redacted) slice
	SHA256     string        `json:"sha256,omitempty"`
	Files      []string      `json:"files,omitempty"`      // transcript.jsonl, transcript.001.jsonl, ...
	Redactions redact.Counts `json:"redactions,omitempty"` // secrets replaced in the slice
	// Unavailable is set when the slice could not be stored (no path, file
	// gone, file shorter than recorded); Reason says why.
	Unavailable bool   `json:"unavailable,omitempty"`
	Reason      string `json:"unavailable_reason,omitempty"`
}

// checkpointID derives a checkpoint's ID from its session, the session
// record's incarnation and the turn-log offset it starts at. The session
// ID and offset alone come back when an agent resumes a session whose
// record `clean` removed (or a quarantine, or another clone, started
// afresh): the incarnation, new with every record, keeps those apart. The
// end is left out on purpose: a retry after a crash may see more turns
// than the attempt that crashed, and must replace that attempt's
// checkpoint, not add a second one holding the same turns.
func checkpointID(session, incarnation string, from int64) string {
	sum := sha256.Sum256([]byte("tether-checkpoint\x00" + session + "\x00" + incarnation + "\x00" + strconv.FormatInt(from, 10)))
	return hex.EncodeToString(sum[:8])
}

// idLen is the length of a whole checkpoint ID (checkpointID).
const idLen = 16

// validID reports whether s looks like a checkpoint ID or an ID prefix.
func validID(s string) bool {
	return len(s) >= 4 && len(s) <= 64 && validHex(s) && strings.ToLower(s) == s
}

// validHex reports whether s is all hex digits.
func validHex(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// pairTurns turns the pending records of a turn log into turns. A start
// followed by another start was interrupted; a trailing start without an
// end is interrupted when the session has ended and running otherwise; an
// end whose start was condensed earlier is a continued turn.
func pairTurns(recs []state.TurnRecord, ended bool) []Turn {
	var turns []Turn
	var cur *Turn
	closeCur := func() {
		if cur != nil {
			turns = append(turns, *cur)
			cur = nil
		}
	}
	for _, rec := range recs {
		switch rec.T {
		case state.RecTurnStart:
			if cur != nil {
				cur.Interrupted = true
				closeCur()
			}
			cur = &Turn{Turn: rec.Turn, Prompt: rec.Prompt, StartedAt: rec.At, HeadBefore: rec.Head, TranscriptFrom: rec.TranscriptSize}
		case state.RecTurnEnd:
			if cur != nil && cur.Turn != rec.Turn {
				cur.Interrupted = true
				closeCur()
			}
			if cur == nil {
				cur = &Turn{Turn: rec.Turn, Continued: true}
			}
			cur.EndedAt, cur.HeadAfter, cur.TranscriptTo = rec.At, rec.Head, rec.TranscriptSize
			closeCur()
		}
	}
	if cur != nil {
		if ended {
			cur.Interrupted = true
		} else {
			cur.Running = true
		}
		closeCur()
	}
	return turns
}

// span is the transcript range a checkpoint should hold, before it is
// clamped to the file: [from, to), or [from, EOF) when toEOF.
type span struct {
	from, to int64
	toEOF    bool
}

// transcriptSpan decides the slice of the transcript for recs. It starts
// at the first turn-start's recorded transcript size, or, when the first
// record ends a turn condensed earlier while running, where that earlier
// checkpoint's slice stopped (contFrom, when known: >= 0). It ends at the
// last turn-end's recorded size; it runs to EOF when the last turn has no
// end (still running, or interrupted) or the session has ended, so nothing
// the agent wrote depends on the transcript file surviving.
func transcriptSpan(recs []state.TurnRecord, ended bool, contFrom int64) span {
	if len(recs) == 0 {
		return span{toEOF: true}
	}
	var sp span
	if first := recs[0]; first.T == state.RecTurnEnd && contFrom >= 0 {
		sp.from = contFrom
	} else {
		sp.from = first.TranscriptSize
	}
	last := recs[len(recs)-1]
	if ended || last.T != state.RecTurnEnd {
		sp.toEOF = true
	} else {
		sp.to = max(last.TranscriptSize, sp.from)
	}
	return sp
}

// lastTurnRunning reports whether the checkpoint ended in a running turn,
// which a later condense must continue.
func (c *Checkpoint) lastTurnRunning() bool {
	return len(c.Turns) > 0 && c.Turns[len(c.Turns)-1].Running
}

// ChangedNothing reports whether the checkpoint's turns are over and are
// known to have changed no file: no commit will ever take its work.
func (c *Checkpoint) ChangedNothing() bool {
	for _, t := range c.Turns {
		if t.Running || !t.Changes.Empty() || t.Changes == nil {
			return false
		}
	}
	return len(c.Turns) > 0
}

// marshal renders checkpoint.json.
func (c *Checkpoint) marshal() ([]byte, error) {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint %s: %w", c.ID, err)
	}
	return append(data, '\n'), nil
}

// parseCheckpoint decodes checkpoint.json and checks what readers rely on.
func parseCheckpoint(data []byte) (*Checkpoint, error) {
	var c Checkpoint
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("decode checkpoint.json: %w", err)
	}
	if c.Version < 1 {
		return nil, errors.New("decode checkpoint.json: missing version")
	}
	if !validID(c.ID) {
		return nil, fmt.Errorf("decode checkpoint.json: bad id %q", c.ID)
	}
	return &c, nil
}

// promptsMarkdown renders prompts.md: the prompts of the checkpoint's
// turns, for a person browsing the checkpoints with git.
func (c *Checkpoint) promptsMarkdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Session %s (%s)\n\nCheckpoint %s", c.Session, c.Agent, c.ID)
	if n := len(c.Turns); n > 0 {
		if first, last := c.Turns[0].Turn, c.Turns[n-1].Turn; first == last {
			fmt.Fprintf(&b, ", turn %d", first)
		} else {
			fmt.Fprintf(&b, ", turns %d-%d", first, last)
		}
	}
	b.WriteString(".\n")
	for _, t := range c.Turns {
		fmt.Fprintf(&b, "\n## Turn %d", t.Turn)
		switch {
		case t.Interrupted:
			b.WriteString(" (interrupted)")
		case t.Running:
			b.WriteString(" (running when condensed)")
		}
		b.WriteString("\n\n")
		var when []string
		if !t.StartedAt.IsZero() {
			when = append(when, "started "+t.StartedAt.UTC().Format(time.RFC3339))
		}
		if !t.EndedAt.IsZero() {
			when = append(when, "ended "+t.EndedAt.UTC().Format(time.RFC3339))
		}
		if len(when) > 0 {
			fmt.Fprintf(&b, "_%s_\n\n", strings.Join(when, ", "))
		}
		switch {
		case t.Prompt != "":
			b.WriteString(strings.TrimRight(t.Prompt, "\n"))
			b.WriteString("\n")
		case t.Continued:
			b.WriteString("(continued from an earlier checkpoint)\n")
		default:
			b.WriteString("(no prompt recorded)\n")
		}
	}
	return b.Bytes()
}
