package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
)

// Attribute keys of log lines that Warnings understands: log the session
// ID under LogKeySession and an error's text under LogKeyError.
const (
	LogKeySession = "session"
	LogKeyError   = "err"
)

const logRel = "log/tether.log"

// logTail is how much of the log Warnings reads: recent lines only.
const logTail = 256 << 10

// Logger returns the store's logger: JSON lines in log/tether.log, rotated
// to tether.log.1 beyond Options.LogMaxSize. The file is opened on the
// first line logged; logging never fails the caller (slog drops write
// errors).
func (s *Store) Logger() *slog.Logger {
	s.logOnce.Do(func() {
		w := &logWriter{s: s}
		s.mu.Lock()
		s.logw = w
		s.mu.Unlock()
		s.logger = slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{
			ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
				// The store's clock, so log times agree with UpdatedAt and
				// warnings.
				if a.Key == slog.TimeKey && len(groups) == 0 {
					a.Value = slog.TimeValue(s.opts.Now())
				}
				return a
			},
		}))
	})
	return s.logger
}

// logWriter appends log lines, each in one write (O_APPEND keeps lines of
// concurrent processes whole), and rotates the file when it grows too big.
type logWriter struct {
	s    *Store
	mu   sync.Mutex
	f    *os.File
	size int64 // of f, as far as this process knows
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		if err := w.open(); err != nil {
			return 0, err
		}
	}
	if w.size+int64(len(p)) > w.s.opts.LogMaxSize {
		// A failed rotation keeps writing to the current file: a long log
		// beats a lost line.
		_ = w.rotate(int64(len(p)))
	}
	n, err := w.f.Write(p)
	w.size += int64(n)
	return n, err
}

func (w *logWriter) open() error {
	root, err := w.s.openRoot(true)
	if err != nil {
		return err
	}
	f, err := w.s.openFile(root, logRel, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	w.f, w.size = f, fi.Size()
	return nil
}

// rotate renames tether.log to tether.log.1 and reopens. Processes share
// the file, so the rename happens under a lock on the log file itself, and
// only if the file at the path is still this one and still too big;
// otherwise another process rotated first and this one just reopens.
func (w *logWriter) rotate(incoming int64) error {
	ok, err := waitLock(w.f, w.s.opts.LockWait)
	if err != nil {
		return err
	}
	if !ok {
		return ErrLockTimeout
	}
	root, err := w.s.openRoot(true)
	if err != nil {
		return err
	}
	mine, err := w.f.Stat()
	if err != nil {
		return err
	}
	if cur, err := root.Stat(logRel); err == nil && os.SameFile(cur, mine) && cur.Size()+incoming > w.s.opts.LogMaxSize {
		if err := root.Rename(logRel, logRel+".1"); err != nil {
			return err
		}
	}
	old := w.f
	err = w.open()
	old.Close() // also drops the lock
	if err != nil {
		w.f = nil
	}
	return err
}

func (w *logWriter) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// msgDismissed marks the point in the log before which Warnings reports
// nothing: a person has seen those warnings (DismissWarnings).
const msgDismissed = "warnings dismissed"

// DismissWarnings hides every warning logged so far from Warnings: a line
// in the log itself, so that it sits in order with what it dismisses and
// rotates away with it.
func (s *Store) DismissWarnings() {
	s.Logger().Info(msgDismissed)
}

// Warnings returns the WARN and ERROR lines logged at or after since and
// after the last DismissWarnings, from the tail of the log (and of the
// rotated log when the current one is short), oldest first.
func (s *Store) Warnings(since time.Time) ([]Warning, error) {
	root, err := s.openRoot(false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read warnings: %w", err)
	}
	cur, err := readTail(root, logRel, logTail)
	if err != nil {
		return nil, fmt.Errorf("read warnings: %w", err)
	}
	data := cur
	if len(cur) < logTail {
		older, err := readTail(root, logRel+".1", logTail-int64(len(cur)))
		if err != nil {
			return nil, fmt.Errorf("read warnings: %w", err)
		}
		data = append(older, cur...)
	}
	var out []Warning
	for line := range bytes.Lines(data) {
		var e struct {
			Time    time.Time `json:"time"`
			Level   string    `json:"level"`
			Msg     string    `json:"msg"`
			Session string    `json:"session"`
			Err     string    `json:"err"`
		}
		if json.Unmarshal(line, &e) != nil {
			continue // a line being written, or not ours
		}
		if e.Msg == msgDismissed && e.Level == "INFO" {
			out = out[:0]
			continue
		}
		if !strings.HasPrefix(e.Level, "WARN") && !strings.HasPrefix(e.Level, "ERROR") || e.Time.Before(since) {
			continue
		}
		msg := e.Msg
		if e.Err != "" {
			msg += ": " + e.Err
		}
		out = append(out, Warning{Time: e.Time, Msg: msg, Session: e.Session})
	}
	return out, nil
}

// readTail reads at most the last n bytes of a file, starting at a line
// boundary; nil if the file does not exist.
func readTail(root *tree, rel string, n int64) ([]byte, error) {
	f, err := root.Open(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(0, fi.Size()-n)
	data, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return nil, err
	}
	if off > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil, nil
		}
		data = data[i+1:]
	}
	return data, nil
}
