package mockllm

import (
	"net/http"
	"strings"
	"testing"
)

// NewFactory starts a mock for Factory's Droid: the Chat Completions API
// of NewChat (a custom model of provider generic-chat-completion-api, with
// URL+"/v1" as its baseUrl) and, with FACTORY_API_BASE_URL=URL, Factory's
// own API, of which it answers only what Droid cannot run offline
// without: GET /api/cli/whoami, which the TUI asks before it starts (with
// FACTORY_API_KEY set). Every other /api call (settings, feature flags,
// session sync, usage reports) gets a 404, which Droid takes as "nothing
// there" and goes on.
func NewFactory(tb testing.TB, dir string) *Server {
	return start(tb, func(s *Server, w http.ResponseWriter, r *http.Request, body []byte) {
		switch {
		case r.URL.Path == "/api/cli/whoami":
			respond(w, http.StatusOK, map[string]string{"userId": "mock-user", "orgId": "mock-org"})
		case strings.HasPrefix(r.URL.Path, "/api/"):
			respond(w, http.StatusNotFound, map[string]string{"error": "mock: not served"})
		default:
			chat(s, w, r, body, dir)
		}
	})
}
