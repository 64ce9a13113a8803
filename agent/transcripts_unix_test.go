//go:build unix

package agent

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOpenTranscriptFIFO: a FIFO with no writer is refused at once, not
// waited on.
func TestOpenTranscriptFIFO(t *testing.T) {
	root := t.TempDir()
	fifo := filepath.Join(root, "t.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := OpenTranscript(root, fifo)
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrTranscriptNotRegular) {
			t.Errorf("OpenTranscript(FIFO) = %v, want %v", err, ErrTranscriptNotRegular)
		}
	case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
		t.Fatal("OpenTranscript blocked on a FIFO")
	}
}
