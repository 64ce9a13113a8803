package github

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	gh "github.com/google/go-github/v92/github"
)

// requestTimeout bounds each API call when the caller supplies no client.
const requestTimeout = 10 * time.Second

// Client is an authenticated GitHub REST client for one host.
type Client struct {
	api  *gh.Client
	host string
	log  *slog.Logger
}

// Option configures NewClient.
type Option func(*clientConfig)

type clientConfig struct {
	httpClient *http.Client
	baseURL    string
	log        *slog.Logger
}

// WithHTTPClient makes the client send its requests through hc (a copy of
// it: hc itself is not modified).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *clientConfig) { c.httpClient = hc }
}

// WithBaseURL overrides the REST API base URL derived from the host (a GHE
// server behind an unusual path, or a test server).
func WithBaseURL(u string) Option {
	return func(c *clientConfig) { c.baseURL = u }
}

// WithLogger logs each request (method, path, status; never headers) at
// debug level, and rate-limit stops at warn level.
func WithLogger(l *slog.Logger) Option {
	return func(c *clientConfig) { c.log = l }
}

// NewClient returns a client for host (github.com or a GHE host, as
// returned by ParseRemote) that authenticates with token. An empty token
// is ErrNoToken: nothing is ever sent unauthenticated.
func NewClient(host, token string, opts ...Option) (*Client, error) {
	if token == "" {
		return nil, fmt.Errorf("github client for %s: %w", host, ErrNoToken)
	}
	if !validToken(token) {
		return nil, fmt.Errorf("github client for %s: %w: token holds whitespace or control characters", host, ErrNoToken)
	}
	cfg := clientConfig{baseURL: APIURL(host)}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.log == nil {
		cfg.log = slog.New(slog.DiscardHandler)
	}
	hc := http.Client{Timeout: requestTimeout}
	if cfg.httpClient != nil {
		hc = *cfg.httpClient
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = loggingTransport{next: base, log: cfg.log}
	// go-github adds the token on every round trip, redirects included, so
	// a redirect to another host would carry it there: refuse those.
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("stopped after 5 redirects")
		}
		if req.URL.Host != via[0].URL.Host {
			return fmt.Errorf("refusing redirect from %s to another host %s", via[0].URL.Host, req.URL.Host)
		}
		return nil
	}
	api, err := gh.NewClient(
		gh.WithHTTPClient(&hc),
		gh.WithAuthToken(token),
		gh.WithURLs(&cfg.baseURL, nil),
		gh.WithUserAgent("tether"),
	)
	if err != nil {
		return nil, fmt.Errorf("github client for %s: %w", host, err)
	}
	return &Client{api: api, host: host, log: cfg.log}, nil
}

// Host is the GitHub host this client talks to.
func (c *Client) Host() string { return c.host }

// loggingTransport records each request without its headers, so the token
// (added by go-github above this transport) never reaches the log.
type loggingTransport struct {
	next http.RoundTripper
	log  *slog.Logger
}

func (t loggingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	attrs := []any{"method", req.Method, "path", req.URL.Path, "took", time.Since(start)}
	if err != nil {
		t.log.Debug("github request failed", append(attrs, "err", err)...)
		return resp, err
	}
	t.log.Debug("github request", append(attrs, "status", resp.StatusCode)...)
	return resp, nil
}
