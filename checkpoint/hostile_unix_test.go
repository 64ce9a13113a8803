//go:build unix

package checkpoint

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tetherdev/tether/state"
)

// TestTranscriptFIFODoesNotHangTheSweep: a FIFO where the transcript
// should be is refused at once, and the checkpoints lock is free after.
func TestTranscriptFIFODoesNotHangTheSweep(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.agent(t, "fifo")
	fifo := filepath.Join(filepath.Dir(a.transcript), "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	a.hostileTurn("hang on", fifo)
	type outcome struct {
		res []Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := f.repo.Condense(f.st, []string{"fifo"}, nil)
		done <- outcome{res, err}
	}()
	var got outcome
	select {
	case got = <-done:
	case <-time.After(hangGuard):
		t.Fatalf("Condense did not return within %v: it is blocked on the FIFO", hangGuard)
	}
	if got.err != nil || len(got.res) != 1 {
		t.Fatalf("Condense = %+v, %v", got.res, got.err)
	}
	cp, err := f.repo.Read(got.res[0].Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if !cp.Transcript.Unavailable || !strings.Contains(cp.Transcript.Reason, "not a regular file") {
		t.Errorf("transcript %+v, want unavailable: not a regular file", cp.Transcript)
	}
	// The lock is free once Condense returns, unless a reader still blocked
	// on the FIFO holds it. The wait is a hang guard: a process another
	// test forks holds a copy of the lock's descriptor until it execs,
	// which a loaded machine can stretch past 100 ms (seen in CI).
	other, err := state.Open(f.common, state.Options{LockWait: hangGuard})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	unlock, err := other.Lock(lockName)
	if err != nil {
		t.Fatalf("the checkpoints lock after condensing: %v", err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
}
