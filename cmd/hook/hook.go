package main

import (
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
	st, err := state.Open(repo.CommonDir, state.Options{})
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
		h.selfHeal(st, repo)
	}
	return ev, nil
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

// ownerErrPrefix marks a LastError left by a failed owner capture.
const ownerErrPrefix = "owner: "

// sameTurn tells a turn start that is the turn already recorded: the
// agent's key for it is the last turn's, delivered again (two configs, or
// user and project level) while the session goes on. An ended session that
// hears its last turn's key again is no duplicate: that turn outlived the
// owner recorded for it, and the key is evidence of life. Codex's app-server
// daemon runs a turn on after its TUI is killed; `codex resume` joins that
// turn, steering its first prompt into it under the same turn_id.
func sameTurn(from state.Phase, lastKey, key string) bool {
	return key != "" && key == lastKey && from != state.PhaseEnded
}

// apply runs the event through the transition table under the session lock.
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
	now := time.Now().UTC()
	head, branch, headErr := gitdir.Head(repo.GitDir, repo.CommonDir)
	var from, to state.Phase
	var act state.Actions
	var duplicate, cancelled, failed, unannounced bool
	var captureTurn int // the turn whose boundary this event is, if any
	var captureAt string
	_, err := st.MutateTx(ev.SessionID, func(tx *state.Tx) error {
		s := tx.Session
		from = s.Phase
		if ev.NoCreate && from == state.PhaseNone {
			return state.ErrNoChange
		}
		if ev.Kind == state.EventTurnStart && sameTurn(from, s.LastTurnKey, ev.Key) {
			duplicate = true
			return state.ErrNoChange
		}
		if ev.Unannounced {
			// A turn runs: the one recorded, or one the agent never
			// announced, whose prompt its transcript holds.
			if from != state.PhaseIdle {
				return state.ErrNoChange
			}
			switch started, err := agent.StartTurnFromTranscript(tx, now, head); {
			case err != nil:
				return err
			case !started:
				return state.ErrNoChange
			}
			unannounced, to = true, s.Phase
			captureTurn, captureAt = s.Turns, "start"
			s.LastHookAt = now
			return nil
		}
		if from == state.PhaseIdle && (ev.Kind == state.EventTurnEnd || ev.Kind == state.EventError || ev.Kind == state.EventSessionEnd) {
			// The turn this ends may be one the agent never announced.
			started, err := agent.StartTurnFromTranscript(tx, now, head)
			if err != nil {
				return err
			}
			unannounced = started
		}
		if ev.Kind == state.EventTurnStart || ev.Kind == state.EventSessionEnd {
			// The agent fired nothing when the user cancelled the running
			// turn, but wrote it into its transcript: that turn ended
			// there, it was not interrupted by what comes now.
			// Nor, at a session end, may its hook have recorded a turn a
			// model error ended: the agent exits, killing it, as this runs.
			end, err := agent.EndTurnFromTranscript(tx, now, head, ev.Kind == state.EventSessionEnd)
			if err != nil {
				return err
			}
			cancelled, failed = end.Cancelled, end.Failure != ""
		}
		to, act = state.Transition(state.TablePhase(s), ev.Kind)
		if act.Ignore {
			return state.ErrNoChange
		}
		if act.BeginWait {
			w := ev.Wait
			if w.Since.IsZero() {
				w.Since = now
			}
			if w.Kind == state.WaitPermission && agent.ReviewerAnswers(s.Agent, s.TranscriptRoot, s.TranscriptPath) {
				return state.ErrNoChange // the agent's own reviewer answers it, not the user
			}
			if !s.BeginWait(w) {
				return state.ErrNoChange // the same wait, signalled again
			}
		}
		if act.EndWait && !s.EndWait(ev.Wait.Key) {
			return state.ErrNoChange // another request's end
		}
		if s.StartedAt.IsZero() {
			s.StartedAt = now
		}
		s.Agent = ev.Agent
		if info, ok := agent.Lookup(ev.Agent); ok && info.Database {
			s.AgentDB = true // resumable, and readable, through the agent
		}
		s.Worktree = repo.WorkTree
		if headErr == nil && branch != "" {
			s.Branch = branch
		}
		switch {
		case ev.TranscriptPath != "":
			if ev.TranscriptPath != s.TranscriptPath {
				s.TranscriptRoot = h.transcriptRoot(st, ev.Agent, ev.SessionID, ev.TranscriptPath)
			}
			s.TranscriptPath = ev.TranscriptPath
		case s.TranscriptPath == "":
			// Copilot CLI names it only at a turn's end, but a session
			// killed in its first turn has one too.
			if p := agent.TranscriptPath(ev.Agent, s.ID, h.getenv); p != "" {
				s.TranscriptPath, s.TranscriptRoot = p, h.transcriptRoot(st, ev.Agent, ev.SessionID, p)
			}
		}
		s.LastHookAt = now

		if act.Revive {
			// A new life: nothing of the old ending, nor its last error.
			s.EndedAt, s.EndReason, s.EndNote, s.Interrupted, s.LastError = time.Time{}, "", "", false, ""
		}
		// A session first seen mid-way (tether installed during it) has no
		// owner yet: any event from a living agent is a chance to find it.
		if act.CaptureOwner || (s.Owner == nil && to != state.PhaseEnded) {
			prev := s.Owner
			s.Owner = nil // never leave an old owner behind a failed capture...
			hints := h.ownerHints(ev)
			owner, err := proclive.ResolveOwner(hints)
			if err != nil {
				// ...unless the agent that ran this hook says it is that
				// very owner, and it is gone: killed while its hook ran.
				// Dropping it would leave the session owner-less forever.
				if prev != nil && hints.AgentPID == prev.PID && proclive.Check(*prev).Liveness == proclive.Dead {
					s.Owner = prev
				}
				s.LastError = ownerErrPrefix + err.Error()
				st.Logger().Warn("owner not resolved", state.LogKeySession, s.ID, "agent", s.Agent, state.LogKeyError, err.Error())
			} else {
				s.Owner = &owner
				if strings.HasPrefix(s.LastError, ownerErrPrefix) {
					s.LastError = "" // the failure this capture makes good
				}
			}
		}
		switch {
		case ev.SessionGone:
			s.Resumable, s.ResumableReason = false, "agent reported the session is gone"
		case ev.Kind == state.EventSessionStart:
			s.InUse() // a turn start does the same through its record
		}
		if ev.Kind == state.EventError && !act.AppendTurnEnd {
			s.LastError = ev.Reason // else the turn's end record carries it (below)
		}
		// The records carry the turn's own fields into the session
		// (turns, times, prompt, resumable): see state.Tx.AppendTurn.
		if act.AppendTurnStart {
			if err := tx.AppendTurn(state.TurnRecord{
				T: state.RecTurnStart, Turn: s.Turns + 1, At: now, Prompt: ev.Prompt,
				Head: head, TranscriptSize: agent.TranscriptSize(s.TranscriptRoot, s.TranscriptPath), Owner: s.Owner, Key: ev.Key,
			}); err != nil {
				return err
			}
			captureTurn, captureAt = s.Turns, "start"
		}
		if act.AppendTurnEnd {
			rec := state.TurnRecord{
				T: state.RecTurnEnd, Turn: s.Turns, At: now,
				Head: head, TranscriptSize: agent.TranscriptSize(s.TranscriptRoot, s.TranscriptPath),
			}
			switch ev.Kind {
			case state.EventError:
				rec.Error = ev.Reason
			case state.EventTurnEnd:
				// An agent whose turn end does not say whether it failed.
				rec.Error = agent.TurnFailure(s.Agent, s.TranscriptRoot, s.TranscriptPath, s.TurnTranscriptFrom)
			}
			if err := tx.AppendTurn(rec); err != nil {
				return err
			}
			captureTurn, captureAt = s.Turns, "end"
		}
		if act.Finalize {
			s.EndedAt, s.EndReason, s.Interrupted = now, act.EndReason, act.Interrupted
			if ev.Reason != "" {
				s.EndNote = ev.Agent + ": " + ev.Reason // e.g. "claude-code: logout"
			}
		}
		s.SetPhase(to)
		return nil
	})
	if err != nil {
		return fmt.Errorf("record %s for session %s: %w", ev.Kind, ev.SessionID, err)
	}
	if unannounced {
		st.Logger().Info("turn started from the transcript", "session", ev.SessionID, "agent", h.agent, "native", ev.Native)
		from = state.PhaseIdle
	}
	switch {
	case duplicate:
		st.Logger().Info("duplicate event ignored", "session", ev.SessionID, "agent", h.agent, "native", ev.Native, "key", ev.Key)
		return nil
	case cancelled:
		st.Logger().Info("turn cancelled (from the transcript)", "session", ev.SessionID, "agent", h.agent)
		from = state.PhaseIdle
	case failed:
		st.Logger().Info("turn failed (from the transcript)", "session", ev.SessionID, "agent", h.agent)
		from = state.PhaseIdle
	}
	if captureAt != "" && captureTurn > 0 { // a turn end seen without its start has nothing to compare
		h.startCapture(st, repo, ev.SessionID, captureTurn, captureAt, now)
	}
	if act.Warn != "" {
		// Info, not Warn: agents do this legitimately (a compaction
		// mid-turn, Copilot's prompt before its session start), and status
		// shows warnings to people.
		st.Logger().Info(act.Warn, "session", ev.SessionID, "agent", h.agent, "native", ev.Native)
	}
	if from != to && !act.Ignore {
		st.Logger().Info("transition", "session", ev.SessionID, "agent", h.agent,
			"event", string(ev.Kind), "native", ev.Native, "from", phaseName(from), "to", string(to),
			slog.Bool("revived", act.Revive), "reason", act.EndReason)
	}
	return nil
}

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
