package mockllm

import (
	"io"
	"testing"
	"time"
)

// heldUntilGone checks the rest of a held stream: nothing more arrives
// while the client stays, and the stream ends once it goes away (cancel).
func heldUntilGone(t *testing.T, body io.Reader, cancel func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(body)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("stream ended while held: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream stayed open after the client went away")
	}
}
