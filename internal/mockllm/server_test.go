package mockllm

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// checkHeld checks a held stream: s signals the hold, the response's
// first line (starting with first) came before it, and then a line saying
// say (unless empty); nothing more comes until cancel makes the client go
// away, when the stream ends.
func checkHeld(t *testing.T, s *Server, resp *http.Response, cancel func(), first, say string) {
	t.Helper()
	select {
	case <-s.Held():
	case <-time.After(10 * time.Second):
		t.Fatal("the stream was never held")
	}
	body := bufio.NewReader(resp.Body)
	line, err := body.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, first) {
		t.Fatalf("first line %q, %v; want it to start with %q", line, err, first)
	}
	for !strings.Contains(line, say) {
		if line, err = body.ReadString('\n'); err != nil {
			t.Fatalf("the held stream ended before saying %q: %v", say, err)
		}
	}
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
