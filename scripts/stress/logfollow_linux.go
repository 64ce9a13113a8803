package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// logFollower tails tether.log through its rotations (it is size-capped
// and keeps one old file), so that no warning of a long run is missed.
type logFollower struct {
	path string

	mu      sync.Mutex
	f       *os.File
	partial []byte
	lines   int
	entries []logEntry // WARN and ERROR lines
	spooled int        // events hooks spooled, their session's lock busy
}

func (l *logFollower) follow(stop <-chan struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		l.poll()
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// poll reads what was appended since the last poll. When the path names a
// new file, the old one (still open here, though renamed) is read to its
// end first.
func (l *logFollower) poll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		f, err := os.Open(l.path)
		if err != nil {
			return
		}
		l.f = f
	}
	for {
		l.drain()
		cur, err := os.Stat(l.path)
		if err != nil {
			return
		}
		if open, err := l.f.Stat(); err == nil && os.SameFile(cur, open) {
			return
		}
		f, err := os.Open(l.path)
		if err != nil {
			return
		}
		l.f.Close()
		l.f, l.partial = f, nil
	}
}

func (l *logFollower) drain() {
	b, err := io.ReadAll(l.f)
	if err != nil || len(b) == 0 {
		return
	}
	data := append(l.partial, b...)
	i := bytes.LastIndexByte(data, '\n')
	l.partial = bytes.Clone(data[i+1:])
	for line := range bytes.Lines(data[:i+1]) {
		l.lines++
		e, ok := parseLogLine(line)
		if ok && (strings.HasPrefix(e.Level, "WARN") || strings.HasPrefix(e.Level, "ERROR")) {
			l.entries = append(l.entries, e)
		}
		if ok && strings.HasPrefix(e.Msg, "event spooled") {
			l.spooled++
		}
	}
}

// warnings returns the WARN and ERROR lines seen, after a last poll.
func (l *logFollower) warnings() ([]logEntry, int) {
	l.poll()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.entries, l.lines
}

// spools counts the events hooks spooled, after a last poll.
func (l *logFollower) spools() int {
	l.poll()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.spooled
}
