package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"
)

// appendLog appends encoded records to a turn log and fsyncs it; with
// background, the fsync runs while the caller goes on (writing the state
// meanwhile) and the returned wait reports when the records are durable.
// wait must be called in every case: it closes the file. A torn last line
// left by a crash mid-append is cut off first: it was never acknowledged,
// and appending after it would glue the next record to it.
func (s *Store) appendLog(root *tree, rel string, data []byte, background bool) (size int64, wait func() error, err error) {
	f, err := s.openFile(root, rel, os.O_RDWR|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return 0, nil, fmt.Errorf("append turn log: %w", err)
	}
	size, err = appendRecords(f, data)
	if err != nil {
		f.Close()
		return 0, nil, fmt.Errorf("append turn log %s: %w", rel, err)
	}
	syncClose := func() error {
		err := f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("append turn log %s: %w", rel, err)
		}
		return nil
	}
	if !background {
		// Inline: a goroutine would cost a thread hand-off for nothing.
		err := syncClose()
		return size, func() error { return err }, nil
	}
	done := make(chan error, 1)
	go func() { done <- syncClose() }()
	return size, func() error { return <-done }, nil
}

// appendRecords cuts a torn tail, writes data and returns the log's new
// size.
func appendRecords(f *os.File, data []byte) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	if size > 0 {
		cut, err := completeLength(f, size)
		if err != nil {
			return 0, err
		}
		if cut < size {
			if err := f.Truncate(cut); err != nil {
				return 0, fmt.Errorf("cut torn line: %w", err)
			}
			size = cut
		}
	}
	if _, err := f.Write(data); err != nil {
		return 0, err
	}
	return size + int64(len(data)), nil
}

// maxPromptInState bounds the prompt copy kept in the session file for
// status; the whole prompt is in the turn log.
const maxPromptInState = 200

// applyTurn brings a session's turn fields up to a turn record. Appending
// a record and replaying one a crash left uncounted both go through here,
// so the record alone says what its turn changed. An ended session keeps
// its phase: only a transition revives.
func applyTurn(s *Session, r TurnRecord) {
	switch r.T {
	case RecTurnStart:
		// The owner captured for this turn. A record without one (a failed
		// capture, or an older tether) leaves the session's as it is: the
		// state file then says what the capture did.
		if r.Owner != nil {
			s.Owner = r.Owner
		}
		s.Turns = max(s.Turns, r.Turn)
		s.LastTurnStartedAt = r.At
		s.LastPrompt = trimPrompt(r.Prompt)
		s.LastTurnKey, s.TurnTranscriptFrom = r.Key, r.TranscriptSize
		s.InUse()
		if s.Phase != PhaseEnded {
			s.SetPhase(PhaseActive)
		}
	case RecTurnEnd:
		s.LastTurnEndedAt = r.At
		if r.Error != "" {
			s.LastError = r.Error
		}
		if s.Phase != PhaseEnded {
			s.SetPhase(PhaseIdle)
		}
	default:
		return
	}
	if r.At.After(s.LastHookAt) {
		s.LastHookAt = r.At
	}
}

// trimPrompt keeps the first line of a prompt, short enough for a status row.
func trimPrompt(p string) string {
	p = strings.TrimSpace(p)
	if i := strings.IndexByte(p, '\n'); i >= 0 {
		p = p[:i] + " …"
	}
	if len(p) <= maxPromptInState {
		return p
	}
	cut := maxPromptInState
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return p[:cut] + "…"
}

// completeLength returns the length of the file up to and including its
// last newline. Usually the last byte is one; otherwise it reads back in
// chunks.
func completeLength(f *os.File, size int64) (int64, error) {
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err == nil && last[0] == '\n' {
		return size, nil
	}
	buf := make([]byte, 4096)
	end := size
	for end > 0 {
		n := int64(len(buf))
		if n > end {
			n = end
		}
		chunk := buf[:n]
		if _, err := f.ReadAt(chunk, end-n); err != nil && err != io.EOF {
			return 0, err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			return end - n + int64(i) + 1, nil
		}
		end -= n
	}
	return 0, nil
}

// ReadTurns returns the turn records of session id after byte offset
// `after`, and the offset reached: the end of the last complete line, to
// pass as `after` next time. A torn last line (no newline yet) is left for
// later; complete lines that do not parse are skipped. The log is read
// wherever it is (sessions/ or ended/; offsets survive the move). A session
// without a turn log has no records: nil, after.
func (s *Store) ReadTurns(id string, after int64) (recs []TurnRecord, next int64, err error) {
	if err := ValidateID(id); err != nil {
		return nil, after, err
	}
	if after < 0 {
		return nil, after, fmt.Errorf("read turns of %s: negative offset %d", id, after)
	}
	root, err := s.openRoot(false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, after, nil
		}
		return nil, after, fmt.Errorf("read turns of %s: %w", id, err)
	}
	f, err := openLog(root, id)
	if err != nil {
		return nil, after, fmt.Errorf("read turns of %s: %w", id, err)
	}
	if f == nil {
		return nil, after, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, after, fmt.Errorf("read turns of %s: %w", id, err)
	}
	if after > fi.Size() {
		return nil, after, fmt.Errorf("read turns of %s: offset %d is beyond the end of the log (%d bytes)", id, after, fi.Size())
	}
	data, err := io.ReadAll(io.NewSectionReader(f, after, fi.Size()-after))
	if err != nil {
		return nil, after, fmt.Errorf("read turns of %s: %w", id, err)
	}
	recs, n := parseTurns(data)
	return recs, after + n, nil
}

// openLog opens the turn log from whichever home holds it. The live home
// is tried again last, in case a revival moved the log between the tries.
func openLog(root *tree, id string) (*os.File, error) {
	for _, w := range []where{locLive, locEnded, locLive} {
		f, err := root.Open(logPath(w, id))
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return nil, nil
}

// parseTurns decodes the complete lines of a turn log and returns the
// records and the number of bytes consumed (through the last newline).
// Blank lines and lines that are not a turn record are skipped.
func parseTurns(data []byte) ([]TurnRecord, int64) {
	var (
		recs []TurnRecord
		pos  int
	)
	for {
		i := bytes.IndexByte(data[pos:], '\n')
		if i < 0 {
			return recs, int64(pos)
		}
		line := data[pos : pos+i]
		pos += i + 1
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r, err := decodeTurn(line)
		if err != nil || r.T == "" {
			continue
		}
		recs = append(recs, r)
	}
}
