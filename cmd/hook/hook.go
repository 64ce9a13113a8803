package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/tetherdev/tether/agent"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/internal/jsontext"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// maxPayload bounds what we read from the agent: a prompt can be large, but
// a payload past this is not one we want to hold in memory.
const maxPayload = 4 << 20

// maxDrain bounds how much of an oversized payload is read and thrown away,
// so the agent's write completes instead of failing on a closed pipe (an
// EPIPE the agent might not handle), without reading forever.
const maxDrain = 64 << 20

// hook is one run of tether-hook. Its streams, environment and
// surroundings are fields so tests can run it in-process as well as
// through the real binary.
type hook struct {
	args           []string
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// getwd is the process working directory: where to look for the
	// repository when the payload names none, and where to log a failure
	// that happened before the payload named one.
	getwd func() (string, error)
	// sweepBinary locates tether-sweep for self-healing; "" when there is
	// none.
	sweepBinary func() string
	// self is this binary, which captures the worktree (see
	// startCapture); "" when there is none.
	self func() string

	store   *state.Store // set once the repo is found, for logging
	agent   string
	session string // set once the payload is parsed, for logging
}

// run does the whole job and never fails outward.
func (h *hook) run() {
	if len(h.args) == 1 && (h.args[0] == "-h" || h.args[0] == "--help" || h.args[0] == "help") {
		// A person asking: no payload to wait for, nothing to log.
		fmt.Fprintf(h.stdout, "usage: tether-hook <agent> [event] < payload\n\n"+
			"Agents call it from their hooks to record sessions; tether-sweep install\n"+
			"sets that up. Agents: %s.\n", strings.Join(agent.Names(), ", "))
		return
	}
	ev, err := h.record()
	// The agent's protocol is answered whatever happened to the record:
	// Cursor, for one, waits for a verdict on every prompt.
	if rerr := h.respond(ev); err == nil {
		err = rerr
	}
	if err != nil {
		h.fail(err)
	}
	if h.store != nil {
		_ = h.store.Close()
	}
}

// fail leaves one line on stderr and one in the log; the agent carries on.
// Where the agent shows a hook's stderr to the user (Gemini CLI), only the
// log line.
func (h *hook) fail(err error) {
	msg := oneLine(err.Error())
	if info, ok := agent.Lookup(h.agent); !ok || !info.QuietStderr {
		fmt.Fprintf(h.stderr, "tether-hook: %s\n", msg)
	}
	if h.store == nil {
		h.store = h.storeFromWorkdir()
	}
	if h.store != nil {
		h.store.Logger().Error("hook failed", "agent", h.agent, state.LogKeySession, h.session, state.LogKeyError, msg)
	}
}

// storeFromWorkdir finds a store to log in when the payload never named a
// repository (it could not be read): agents run their hooks in the
// project, so the working directory is the best guess. nil when it is not
// in a repository.
func (h *hook) storeFromWorkdir() *state.Store {
	wd, err := h.getwd()
	if err != nil {
		return nil
	}
	_, st, err := openStore(wd, h.getenv)
	if err != nil {
		return nil
	}
	return st
}

// openStore finds the repository around dir and opens its session store:
// every path of the hook starts here. Outside a repository the error wraps
// gitdir.ErrNotRepo (or ErrBare).
func openStore(dir string, getenv func(string) string) (gitdir.Repo, *state.Store, error) {
	repo, err := gitdir.FindEnv(dir, getenv)
	if err != nil {
		return repo, nil, fmt.Errorf("find repository from %s: %w", dir, err)
	}
	st, err := state.Open(repo.CommonDir, state.Options{LockWait: hookLockWait, Apply: agent.ApplySpooled})
	if err != nil {
		return repo, nil, fmt.Errorf("open store: %w", err)
	}
	return repo, st, nil
}

// oneLine keeps an error message on one line: payload text quoted in it
// could carry newlines or control characters, and the agent shows our
// stderr as it is.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// record parses the payload and applies its event. The event it returns is
// what the agent's protocol is answered with: on failure it still carries
// the agent and the event name when they are known.
func (h *hook) record() (agent.Event, error) {
	if len(h.args) == 0 {
		return agent.Event{}, errors.New("usage: tether-hook <agent> [event] < payload")
	}
	h.agent = h.args[0]
	var eventArg string
	rest := h.args[1:]
	if len(rest) > 0 && !strings.HasPrefix(strings.TrimSpace(rest[0]), "{") {
		eventArg, rest = rest[0], rest[1:]
	}
	payload, err := h.readPayload(rest)
	if err != nil {
		return agent.Event{Native: eventArg}, err
	}
	ev, err := agent.Parse(h.agent, eventArg, payload, rest)
	if err != nil {
		return ev, fmt.Errorf("%s payload: %w", h.agent, err)
	}
	if (ev.Kind == state.EventWait || ev.Kind == state.EventWaitInput) && !agent.Attended(ev.Agent, h.getenv, h.ownerArgs(ev)) {
		return ev, nil // nobody attends the session: no dialog, nobody waited for
	}
	if ev.Ignore {
		return ev, nil
	}
	h.session = ev.SessionID

	cwd := ev.Cwd
	if cwd == "" {
		if cwd, err = h.getwd(); err != nil {
			return ev, fmt.Errorf("working directory: %w", err)
		}
	}
	repo, st, err := openStore(cwd, h.getenv)
	if errors.Is(err, gitdir.ErrNotRepo) || errors.Is(err, gitdir.ErrBare) {
		return ev, nil // not a repository we track: stay silent
	}
	if err != nil {
		return ev, err
	}
	h.store = st

	if err := h.apply(st, repo, ev); err != nil {
		return ev, err
	}
	if ev.Kind == state.EventSessionStart {
		h.register(st, repo)
		h.selfHeal(st, repo)
	}
	return ev, nil
}

// register names the store in the user's registry of stores (status
// --all-repos) at a session's start: a stat, once it is there.
func (h *hook) register(st *state.Store, repo gitdir.Repo) {
	registry, err := state.RegistryDir(h.getenv)
	if err == nil {
		err = state.Register(registry, repo.CommonDir)
	}
	if err != nil {
		st.Logger().Warn("register the store", state.LogKeyError, err.Error())
	}
}

// readPayload takes the payload from stdin, bounded, or — for Codex's
// legacy notify program — from the last argument.
func (h *hook) readPayload(rest []string) ([]byte, error) {
	if n := len(rest); n > 0 && strings.HasPrefix(strings.TrimSpace(rest[n-1]), "{") {
		return []byte(rest[n-1]), nil
	}
	if f, ok := h.stdin.(*os.File); ok {
		// A terminal on stdin means nobody is sending a payload; reading
		// would wait forever.
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return nil, errors.New("no payload on stdin")
		}
	}
	return readValue(h.stdin, payloadWait)
}

// payloadWait bounds the wait for the payload. Agents write it at once and
// wait for the hook; one that keeps stdin open after the payload, or never
// completes it, must not hold itself up for longer.
const payloadWait = 2 * time.Second

// readValue reads one JSON value from r, and stops at whichever comes
// first: the end of the value (jsontext.Frame), the end of the stream, or
// wait. A value over maxPayload is refused, after reading on up to maxDrain
// so the agent's write completes. The reads run in a goroutine, which is
// left blocked in a read that never returns: the process exits soon after.
func readValue(r io.Reader, wait time.Duration) ([]byte, error) {
	type chunk struct {
		b   []byte
		err error
	}
	chunks, stop := make(chan chunk), make(chan struct{})
	defer close(stop)
	go func() {
		for {
			buf := make([]byte, 32<<10)
			n, err := r.Read(buf)
			select {
			case chunks <- chunk{buf[:n], err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	var (
		data  []byte
		frame jsontext.Frame
		seen  int
	)
	for {
		select {
		case c := <-chunks:
			seen += len(c.b)
			end, done := frame.Next(c.b)
			if seen <= maxPayload {
				data = append(data, c.b...)
				if done {
					return data[:end], nil
				}
			}
			over := seen > maxPayload
			switch {
			case over && (done || c.err != nil || seen > maxPayload+maxDrain):
				return nil, fmt.Errorf("payload over %d MiB, ignored", maxPayload>>20)
			case c.err == io.EOF && !over:
				return data, nil
			case c.err != nil && !over:
				return nil, fmt.Errorf("read payload: %w", c.err)
			}
		case <-timer.C:
			if seen > maxPayload {
				return nil, fmt.Errorf("payload over %d MiB, ignored", maxPayload>>20)
			}
			return nil, fmt.Errorf("read payload: no complete payload within %v (%d bytes; stdin still open)", wait, seen)
		}
	}
}

// respond prints what the agent's protocol expects on stdout, if anything.
func (h *hook) respond(ev agent.Event) error {
	if out := agent.Response(h.agent, ev); out != nil {
		if _, err := h.stdout.Write(out); err != nil {
			return fmt.Errorf("write response: %w", err)
		}
	}
	return nil
}

// hookLockWait bounds the hook's wait for its session's lock. Past it the
// event is spooled (spool), not dropped: the agent waits on its hook, and
// other hooks of the session, or a sweep condensing it, may hold the lock
// for longer.
const hookLockWait = 100 * time.Millisecond

// apply applies the event to its session under the session's lock, or
// spools it when the lock is not free in time.
func (h *hook) apply(st *state.Store, repo gitdir.Repo, ev agent.Event) error {
	if ev.NoCreate {
		// Only for a session the agent's hooks already record: a quick
		// look first spares the lock file a phantom session would leave.
		if _, err := st.Load(ev.SessionID); errors.Is(err, state.ErrNotFound) {
			return nil
		}
	}
	if ev.Kind == state.EventWaitOver {
		// Every tool call ends with one: most end no wait, and a look
		// without the lock says so (a wait recorded after it began later
		// than this tool's end).
		if s, err := st.Load(ev.SessionID); err == nil && s.Phase != state.PhaseWaiting || errors.Is(err, state.ErrNotFound) {
			return nil
		}
	}
	if ev.Unannounced {
		// Droid fires one at every tool call: most come inside a turn the
		// hook recorded, and a look without the lock says so.
		if s, err := st.Load(ev.SessionID); err == nil && s.Phase != state.PhaseIdle || errors.Is(err, state.ErrNotFound) {
			return nil
		}
	}
	call := agent.Call{Event: ev, At: time.Now().UTC(), Worktree: repo.WorkTree}
	head, branch, headErr := gitdir.Head(repo.GitDir, repo.CommonDir)
	call.Head = head
	if headErr == nil {
		call.Branch = branch
	}
	env := &surroundings{h: h, st: st, ev: ev}
	var out agent.Outcome
	stored, err := st.MutateTx(ev.SessionID, func(tx *state.Tx) error {
		var err error
		out, err = agent.Apply(tx, call, env)
		return err
	})
	spooled := false
	if errors.Is(err, state.ErrLockTimeout) {
		out, stored, err = h.spool(st, call, env)
		spooled = err == nil
	}
	if err != nil {
		return fmt.Errorf("record %s for session %s: %w", ev.Kind, ev.SessionID, err)
	}
	h.report(st, repo, call, out, stored, spooled)
	return nil
}

// spool keeps an event whose session's lock stayed busy: with all the
// hook knows now that applying it may ask (the owner, the transcript's
// size), to be applied by the session's next writer or reader. What the
// event will do is read from the session as a reader sees it, spooled
// events and all: the turn whose boundary it is, to capture.
func (h *hook) spool(st *state.Store, call agent.Call, env *surroundings) (agent.Outcome, *state.Session, error) {
	cur, err := st.Load(call.Event.SessionID)
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		cur = nil // the spooled call does not depend on it
	}
	sp := agent.Spool(call, env, cur)
	data, err := json.Marshal(sp)
	if err != nil {
		return agent.Outcome{}, nil, err
	}
	var out agent.Outcome
	preview, perr := st.Preview(call.Event.SessionID, func(tx *state.Tx) error {
		out, err = agent.Apply(tx, call, sp)
		return err
	})
	if perr != nil {
		out, preview = agent.Outcome{}, nil // no capture: the turn is not known
	}
	if err := st.Spool(call.Event.SessionID, data); err != nil {
		return agent.Outcome{}, nil, err
	}
	st.Logger().Info("event spooled: the session's lock stayed busy", state.LogKeySession, call.Event.SessionID,
		"agent", h.agent, "native", call.Event.Native, "waited", hookLockWait.String())
	return out, preview, nil
}

// report logs what applying (or spooling) the event did, starts the
// capture of the turn boundary it is, and the notification of a change
// worth one (stored: the session as it is now).
func (h *hook) report(st *state.Store, repo gitdir.Repo, call agent.Call, out agent.Outcome, stored *state.Session, spooled bool) {
	ev := call.Event
	if out.OwnerErr != nil && !spooled {
		st.Logger().Warn("owner not resolved", state.LogKeySession, ev.SessionID, "agent", ev.Agent, state.LogKeyError, out.OwnerErr.Error())
	}
	from, to, act := out.From, out.To, out.Act
	if out.Unannounced {
		st.Logger().Info("turn started from the transcript", "session", ev.SessionID, "agent", h.agent, "native", ev.Native)
		from = state.PhaseIdle
	}
	switch {
	case out.Duplicate:
		st.Logger().Info("duplicate event ignored", "session", ev.SessionID, "agent", h.agent, "native", ev.Native, "key", ev.Key)
		return
	case out.Cancelled:
		st.Logger().Info("turn cancelled (from the transcript)", "session", ev.SessionID, "agent", h.agent)
		from = state.PhaseIdle
	case out.Failed:
		st.Logger().Info("turn failed (from the transcript)", "session", ev.SessionID, "agent", h.agent)
		from = state.PhaseIdle
	}
	if out.CaptureAt != "" && out.CaptureTurn > 0 { // a turn end seen without its start has nothing to compare
		h.startCapture(st, repo, ev.SessionID, out.CaptureTurn, out.CaptureAt, call.At)
	}
	h.notify(st, repo, notifyOf(act, out.NewWait), stored)
	if act.Warn != "" {
		// Info, not Warn: agents do this legitimately (a compaction
		// mid-turn, Copilot's prompt before its session start), and status
		// shows warnings to people.
		st.Logger().Info(act.Warn, "session", ev.SessionID, "agent", h.agent, "native", ev.Native)
	}
	if from != to && !act.Ignore {
		st.Logger().Info("transition", "session", ev.SessionID, "agent", h.agent,
			"event", string(ev.Kind), "native", ev.Native, "from", phaseName(from), "to", string(to),
			slog.Bool("revived", act.Revive), "reason", act.EndReason, slog.Bool("spooled", spooled))
	}
}

// surroundings answer agent.Apply from the hook's own process, the
// agent's environment and its files, now.
type surroundings struct {
	h  *hook
	st *state.Store
	ev agent.Event

	resolved bool
	owner    proclive.Identity
	ownerErr error
}

func (e *surroundings) TranscriptRoot(path string) string {
	return e.h.transcriptRoot(e.st, e.ev.Agent, e.ev.SessionID, path)
}

func (e *surroundings) GuessTranscript() (string, string) {
	p := agent.TranscriptPath(e.ev.Agent, e.ev.SessionID, e.h.getenv)
	if p == "" {
		return "", ""
	}
	return p, e.TranscriptRoot(p)
}

func (e *surroundings) TranscriptSize(root, path string) int64 {
	return agent.TranscriptSize(root, path)
}

// Owner resolves the agent's process once.
func (e *surroundings) Owner() (proclive.Identity, error) {
	if !e.resolved {
		e.owner, e.ownerErr = proclive.ResolveOwner(e.h.ownerHints(e.ev))
		e.resolved = true
	}
	return e.owner, e.ownerErr
}

func (e *surroundings) OwnerPID() int { return e.h.ownerHints(e.ev).AgentPID }

// ownerHints passes on what the agent itself says its PID is (in the
// payload, else in its environment), and the session's directory and ID,
// which tell its client when the hook runs under a daemon shared by many
// sessions (Codex's app-server); the walk starts at our parent and skips
// our own executable by default.
func (h *hook) ownerHints(ev agent.Event) proclive.Hints {
	hints := proclive.Hints{Dir: ev.Cwd, Session: ev.SessionID, AgentPID: ev.OwnerPID}
	if info, ok := agent.Lookup(h.agent); ok && info.OwnerEnv != "" && hints.AgentPID == 0 {
		if pid, err := strconv.Atoi(h.getenv(info.OwnerEnv)); err == nil && pid > 0 {
			hints.AgentPID = pid
		}
	}
	return hints
}

// ownerArgs reads, when called, the command line of the agent's process:
// nil when it cannot be found or read.
func (h *hook) ownerArgs(ev agent.Event) func() []string {
	return func() []string {
		owner, err := proclive.ResolveOwner(h.ownerHints(ev))
		if err != nil {
			return nil
		}
		args, _ := proclive.Args(owner.PID)
		return args
	}
}

func phaseName(p state.Phase) string {
	if p == state.PhaseNone {
		return "none"
	}
	return string(p)
}

// transcriptRoot is the directory the agent keeps its transcripts in, from
// the agent's environment (ours): the one place the sweep will read the
// session's transcript. Resolved here rather than at the sweep, which runs
// later and elsewhere (a git hook, a person's shell) without the agent's
// CLAUDE_CONFIG_DIR or CODEX_HOME. A transcript the payload names outside
// it is recorded as named, never read, and warned about.
func (h *hook) transcriptRoot(st *state.Store, agentName, id, path string) string {
	root := agent.TranscriptRoot(agentName, h.getenv)
	if _, ok := agent.TranscriptInRoot(root, path); ok {
		return root
	}
	// The agent may name the file through the real path of a symlinked home.
	if real, err := filepath.EvalSymlinks(root); err == nil {
		if _, ok := agent.TranscriptInRoot(real, path); ok {
			return real
		}
	}
	st.Logger().Warn("transcript path outside the agent's transcript directory: it will not be read",
		state.LogKeySession, id, "agent", agentName, "transcript", path, "root", root)
	return root
}
