package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// appendLog appends encoded records to a turn log and fsyncs it. A torn
// last line left by a crash mid-append is cut off first: it was never
// acknowledged, and appending after it would glue the next record to it.
func (s *Store) appendLog(root *os.Root, rel string, data []byte) (int64, error) {
	f, err := s.openFile(root, rel, os.O_RDWR|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return 0, fmt.Errorf("append turn log: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("append turn log: %w", err)
	}
	size := fi.Size()
	if size > 0 {
		cut, err := completeLength(f, size)
		if err != nil {
			return 0, fmt.Errorf("append turn log %s: %w", rel, err)
		}
		if cut < size {
			if err := f.Truncate(cut); err != nil {
				return 0, fmt.Errorf("append turn log %s: cut torn line: %w", rel, err)
			}
			size = cut
		}
	}
	if _, err := f.Write(data); err != nil {
		return 0, fmt.Errorf("append turn log %s: %w", rel, err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("append turn log %s: %w", rel, err)
	}
	return size + int64(len(data)), nil
}

// completeLength returns the length of the file up to and including its
// last newline. Usually the last byte is one; otherwise it reads back in
// chunks.
func completeLength(f *os.File, size int64) (int64, error) {
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
func openLog(root *os.Root, id string) (*os.File, error) {
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
		var r TurnRecord
		if err := json.Unmarshal(line, &r); err != nil || r.T == "" {
			continue
		}
		recs = append(recs, r)
	}
}
