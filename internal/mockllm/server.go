package mockllm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// Server is one running mock. URL is its base, http://127.0.0.1:PORT.
type Server struct {
	URL string

	srv     *httptest.Server
	closing chan struct{}
	held    chan struct{}

	mu   sync.Mutex
	reqs []Request
}

// Request is one request a mock received.
type Request struct {
	Method string
	Path   string // with the query, as sent: "/v1/messages?beta=true"
	Body   []byte
}

// handler answers one request whose body has been read.
type handler func(s *Server, w http.ResponseWriter, r *http.Request, body []byte)

// start runs a mock on 127.0.0.1, closed when the test ends: held streams
// are released first, so closing never waits on them.
func start(tb testing.TB, h handler) *Server {
	s := &Server{closing: make(chan struct{}), held: make(chan struct{}, 64)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.RequestURI(), Body: body})
		s.mu.Unlock()
		h(s, w, r, body)
	}))
	s.URL = s.srv.URL
	tb.Cleanup(func() {
		close(s.closing)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
	return s
}

// Requests returns a copy of the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Saw reports whether any request's body contained text, as sent on the
// wire (JSON-escaped): e.g. whether a prompt reached the model.
func (s *Server) Saw(text string) bool {
	for _, r := range s.Requests() {
		if bytes.Contains(r.Body, []byte(text)) {
			return true
		}
	}
	return false
}

// Held receives once each time a stream starts being held open.
func (s *Server) Held() <-chan struct{} { return s.held }

// hold keeps a started stream open until the client goes away or the
// server closes.
func (s *Server) hold(r *http.Request) {
	select {
	case s.held <- struct{}{}:
	default:
	}
	select {
	case <-r.Context().Done():
	case <-s.closing:
	}
}

// startStream writes the headers of a server-sent event stream.
func startStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// event writes one server-sent event and flushes it; an empty name writes
// only the data line, as APIs without event names do.
func event(w http.ResponseWriter, name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("mockllm: marshal %T: %v", data, err)) // a bug in the mock itself
	}
	if name != "" {
		fmt.Fprintf(w, "event: %s\n", name)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// respond writes a whole JSON response with its status.
func respond(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
