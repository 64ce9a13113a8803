package agent

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/tetherdev/tether/internal/jsontext"
	"github.com/tetherdev/tether/state"
)

// Event is one agent hook call, mapped onto tether's events.
type Event struct {
	Kind           state.Event // session-start, turn-start, turn-end, session-end, error; empty when Ignore
	Ignore         bool        // a payload we deliberately do not track (tool hooks, subagents, notifications...)
	Agent          string      // canonical agent name, e.g. "claude-code"
	Native         string      // the agent's own event name, e.g. "UserPromptSubmit"
	SessionID      string
	Cwd            string
	TranscriptPath string
	Prompt         string // turn-start
	Source         string // session-start, as the agent gave it: startup | resume | clear | compact | fork | ...
	Reason         string // session-end reason as the agent gave it; error message for error
	Model          string
	SessionGone    bool // the agent says its session no longer exists (a dead resume token)
	// Key names this very event as the agent sent it (Codex's turn_id,
	// Claude Code's prompt_id, Cursor's generation_id, else the payload's
	// timestamp): the same event delivered twice, through two configs or
	// at user and project level, carries the same key. "" when the payload
	// has none.
	Key string
	// NoCreate: the event may only update a session tether already
	// records (Codex's notify program, which also fires for threads that
	// are not sessions of the user's).
	NoCreate bool
	// OwnerPID is the agent's PID as the payload carries it (OpenCode's
	// plugin, Pi's extension), 0 when it does not: a hint for the owner,
	// checked like any.
	OwnerPID int
	// Wait is, for a wait (EventWait, EventWaitInput), what the agent waits
	// for, and Since the signal's own time when the payload carries one
	// (else zero: now); for EventWaitOver, Key names the request whose
	// wait is over ("" for any).
	Wait state.Wait
	// Unannounced: the event says a turn runs, which may be one the agent
	// never announced (Droid's PreToolUse: `droid exec` fires no
	// UserPromptSubmit). It starts a turn only when none runs, with the
	// prompt the transcript holds (StartTurnFromTranscript), and is
	// otherwise nothing.
	Unannounced bool
}

// Info describes an agent tether knows.
type Info struct {
	Name     string // canonical name, as recorded in Session.Agent
	Display  string // human name, e.g. "Claude Code"
	OwnerEnv string // environment variable holding the agent's PID for its hooks, or ""
	Binary   string // the agent's command, e.g. "claude"
	// QuietStderr: the agent shows a hook's stderr to the user (Gemini CLI
	// does, as a system message), so the hook must say nothing there.
	QuietStderr bool
	// Database: the agent keeps its sessions in a database, not transcript
	// files (OpenCode): the conversation is read by asking the agent.
	Database bool
}

// Errors Parse wraps, so the hook can tell them apart in its log.
var (
	ErrUnknownAgent     = errors.New("unknown agent")
	ErrEmptyPayload     = errors.New("empty payload")
	ErrNotJSON          = errors.New("payload is not valid JSON")
	ErrNotObject        = errors.New("payload is not a JSON object")
	ErrBadField         = errors.New("payload field has the wrong type")
	ErrNoEvent          = errors.New("no event name in the payload or on the command line")
	ErrMissingSessionID = errors.New("payload has no session ID")
	ErrInvalidSessionID = state.ErrInvalidID // a session ID the store refuses
	ErrWrongAgent       = errors.New("payload is another agent's")
)

// adapter is one agent's protocol.
type adapter struct {
	info Info
	// parse decodes payload into ev, whose Agent and Native (the event
	// argument) are already set. It sets Native when the payload names its
	// event, and Kind or Ignore when it knows the event; what the payload
	// says of a wait goes into wf, for waits.
	parse func(ev *Event, payload []byte, wf *waitFields) error
	// waits are the agent's events that start or end a wait for its user.
	waits []waitSignal
	// dialogCalls reads a transcript line for its tool calls, for an
	// agent whose dialog signal names no tool (see DialogCall); nil for
	// the others.
	dialogCalls func(line []byte, fn func(name string, input []byte))
	// attendedEnv names the variable the agent's hooks get that says "0"
	// when nobody attends the session (see Attended); "" for none.
	attendedEnv string
	// headlessFlags start the agent's non-interactive mode, where it
	// shows no dialog though it may signal one (see Attended).
	headlessFlags []string
	// events are the agent's events that are turns of its main session
	// (see eventTable); also used to spot a payload sent to the wrong
	// adapter.
	events eventTable
	// resume and fresh build argv; nil when the agent has no such command.
	resume func(id string) []string
	fresh  func(prompt string) []string
	// howTo explains how to resume by hand when resume is nil.
	howTo func(id string) string
	// transcript is where the agent keeps session id's transcript, for an
	// agent whose payloads do not all say (nil: they do, or it is unknown).
	transcript func(id string, getenv func(string) string) string
	// cancelled tells a transcript line that says the user cancelled the
	// turn, for an agent that fires no hook on a cancel (see
	// TurnCancelled); nil for the others.
	cancelled func(line []byte) bool
	// failure reads a transcript line for readTurnEnd, for an agent whose
	// hook for a failed turn may never record it; nil for the others.
	failure func(line []byte) (msg string, ok bool)
	// stopFailures: the agent's turn end may say nothing of a failure
	// (Droid fires Stop after a failed model call too; Qwen Code's
	// idle_prompt may end a turn before its StopFailure lands): the hook
	// reads it from the transcript at every turn end (TurnFailure).
	stopFailures bool
	// turns reads a transcript line for the start or the end of a turn,
	// for an agent that may run a turn it never announced (see
	// StartTurnFromTranscript); nil for the others.
	turns func(line []byte) turnLine
	// respond is what the hook prints on stdout, or nil.
	respond func(ev Event) []byte
	// reviewer reads a transcript line that states who answers the turn's
	// permission requests (found), and whether an automatic reviewer does
	// rather than the user (see ReviewerAnswers); nil for an agent whose
	// requests all go to its user.
	reviewer func(line []byte) (auto, found bool)
	// writes reads a transcript line for TurnWrites (for an agent that
	// keeps its conversation in a database, a message of its export, for
	// ConversationWrites): the files the agent's own tools wrote; nil for
	// an agent whose transcript tether does not read for them (its turns
	// are credited from the captures).
	writes func(line []byte, w *ToolWrites)
}

// Lookup returns what tether knows about an agent, by name or alias.
func Lookup(agentName string) (Info, bool) {
	a, ok := find(agentName)
	return a.info, ok
}

// Parse maps one hook call onto a tether event.
//
// eventArg is the optional event argument of `tether-hook <agent> [event]`;
// the payload's own event name wins where the agent names it. args is the
// rest of argv: when payload is empty, a JSON object in the last argument (or
// in eventArg) is taken as the payload, as Codex's legacy notify program
// passes it. On error the returned Event still carries Agent and Native when
// they are known, so the hook can answer the agent's protocol with Response.
func Parse(agentName, eventArg string, payload []byte, args []string) (Event, error) {
	a, ok := find(agentName)
	if !ok {
		return Event{Native: eventArg}, fmt.Errorf("%w %q (known: %s)", ErrUnknownAgent, agentName, strings.Join(Names(), ", "))
	}
	eventArg = strings.TrimSpace(eventArg)
	if strings.HasPrefix(eventArg, "{") {
		// The JSON landed where the event name goes: notify = ["tether-hook", "codex"].
		if len(bytes.TrimSpace(payload)) == 0 {
			payload = []byte(eventArg)
		}
		eventArg = ""
	}
	if len(bytes.TrimSpace(payload)) == 0 && len(args) > 0 {
		if last := strings.TrimSpace(args[len(args)-1]); strings.HasPrefix(last, "{") {
			payload = []byte(last)
		}
	}
	ev := Event{Agent: a.info.Name, Native: eventArg}
	// On failure only the agent and event name go back: the rest of a
	// payload we refuse is not to be recorded.
	fail := func(err error) (Event, error) { return Event{Agent: ev.Agent, Native: ev.Native}, err }
	if err := checkObject(payload); err != nil {
		return fail(err)
	}
	var wf waitFields
	if err := a.parse(&ev, payload, &wf); err != nil {
		return fail(err)
	}
	if sig, ok := findWait(a.waits, ev.Native); ok && ev.Kind == "" && !ev.Ignore {
		if kind, w := sig.read(wf); kind != "" {
			ev.Kind, ev.Wait = kind, w
		} else {
			ev.Ignore = true
		}
	}
	if ev.SessionID == "" {
		return fail(fmt.Errorf("%w (%s event %q)", ErrMissingSessionID, a.info.Name, clip(ev.Native)))
	}
	if err := state.ValidateID(ev.SessionID); err != nil {
		return fail(err)
	}
	if ev.Native == "" {
		return fail(ErrNoEvent)
	}
	if ev.Kind == "" && !ev.Ignore {
		if other := trackedBy(a.info.Name, ev.Native); other != "" {
			return fail(wrongAgent(a.info.Name, ev.Native+" is a "+other+" event"))
		}
		ev.Ignore = true
	}
	if ev.Ignore {
		ev.Kind = ""
	}
	return ev, nil
}

// Response is what the hook must print on stdout for this event, or nil when
// the agent's protocol asks for nothing. It is meaningful for an Event
// returned with an error too, as long as Native is set.
func Response(agentName string, ev Event) []byte {
	a, ok := find(agentName)
	if !ok || a.respond == nil {
		return nil
	}
	return a.respond(ev)
}

// ResumeCommand is the argv that resumes the agent's own session, e.g.
// claude --resume ID. ok is false for an unknown agent, an invalid ID, or an
// agent without such a command (see HowToResume).
func ResumeCommand(agentName, sessionID string) (argv []string, ok bool) {
	a, found := find(agentName)
	if !found || a.resume == nil || state.ValidateID(sessionID) != nil {
		return nil, false
	}
	return a.resume(sessionID), true
}

// FreshCommand is the argv that starts the agent anew with prompt as its
// first message (just the agent when prompt is empty).
func FreshCommand(agentName, prompt string) (argv []string, ok bool) {
	a, found := find(agentName)
	if !found || a.fresh == nil {
		return nil, false
	}
	return a.fresh(prompt), true
}

// HowToResume tells a person how to pick the session up again.
func HowToResume(agentName, sessionID string) string {
	a, found := find(agentName)
	if !found {
		return fmt.Sprintf("unknown agent %q: resume session %s with that agent's own tools", agentName, sessionID)
	}
	if err := state.ValidateID(sessionID); err != nil {
		return fmt.Sprintf("cannot resume this %s session: %v", a.info.Display, err)
	}
	if a.resume != nil {
		return fmt.Sprintf("run `%s` in the session's worktree", strings.Join(a.resume(sessionID), " "))
	}
	return a.howTo(sessionID)
}

// TranscriptPath is where the agent keeps the transcript of session id, for
// the agents whose early events do not name it (Copilot CLI names it only
// at a turn's end), or "" when the payloads are the only source. getenv is
// the agent's environment, as its hooks inherit it.
func TranscriptPath(agentName, sessionID string, getenv func(string) string) string {
	a, found := find(agentName)
	if !found || a.transcript == nil || state.ValidateID(sessionID) != nil {
		return ""
	}
	return a.transcript(sessionID, getenv)
}

// SaysSessionGone reports whether an agent's error text says the session it
// was asked for does not exist, the sign of a dead resume token. It matches
// the phrasings the agents use for a missing conversation.
func SaysSessionGone(text string) bool {
	t := strings.ToLower(text)
	for _, phrase := range []string{
		"no conversation found",
		"conversation not found",
		"session not found",
		"no session found",
		"no saved session",
		"could not find session",
		"invalid session identifier",
	} {
		if strings.Contains(t, phrase) {
			return true
		}
	}
	return false
}

// checkObject rejects what cannot be a hook payload, with the reason.
func checkObject(payload []byte) error {
	p := bytes.TrimSpace(payload)
	switch {
	case len(p) == 0:
		return ErrEmptyPayload
	case p[0] == '{':
		return nil // decoding reports anything else wrong with it
	case jsontext.Valid(p):
		return fmt.Errorf("%w (it is a JSON %s)", ErrNotObject, jsonKind(p[0]))
	default:
		return ErrNotJSON
	}
}

func jsonKind(first byte) string {
	switch first {
	case '[':
		return "array"
	case '"':
		return "string"
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}

// wireField is one key a wire struct reads, and where its value goes:
// exactly one of str, strs and raw is set.
type wireField struct {
	name string
	str  *string   // a string; null leaves it as it was
	strs *[]string // an array of strings (see jsontext.DecodeSlice)
	raw  *[]byte   // any value, as it is in the payload ("null" included)
}

// decode reads an object payload into fields without reflection: the hook
// parses one payload per run, and encoding/json's first use would cost
// more than the rest of the hook. It reads the payload as json.Unmarshal
// read it into the tagged wire structs this replaced: a key selects a
// field as jsontext.Match says, the first field of a name winning (so a
// wire struct's own field hides a foreign one of the same name, as
// embedding did); unknown keys are skipped; the last of a repeated key
// wins. Invalid JSON is ErrNotJSON; a value of the wrong type is
// ErrBadField, as "key is a JSON number, want string". A null payload sets
// nothing.
func decode(payload []byte, fields []wireField) error {
	v, err := jsontext.Parse(payload)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotJSON, err)
	}
	switch v.Kind() {
	case jsontext.Null:
		return nil
	case jsontext.Object:
	default:
		return fmt.Errorf("%w (it is a JSON %s)", ErrNotObject, jsonKind(v.Raw()[0]))
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	var buf [64]byte
	for k, val := range v.Members() {
		key, _ := k.AppendUnquote(buf[:0]) // a key is a string
		i := jsontext.Match(key, names)
		if i < 0 {
			continue
		}
		if err := fields[i].set(val); err != nil {
			var te *jsontext.TypeError
			if errors.As(err, &te) {
				return fmt.Errorf("%w: %s is a JSON %s, want %s", ErrBadField, fields[i].name, te.Value, te.Type)
			}
			return fmt.Errorf("%w: %s: %w", ErrBadField, fields[i].name, err)
		}
	}
	return nil
}

// set stores v as json.Unmarshal stored it into the field's Go type.
func (f wireField) set(v jsontext.Value) error {
	switch {
	case f.raw != nil:
		*f.raw = v.Raw()
	case f.str != nil:
		return decodeString(f.str, v)
	case f.strs != nil:
		return jsontext.DecodeSlice(f.strs, v, "[]string", decodeString)
	}
	return nil
}

// decodeString decodes a string; null leaves dst as it was.
func decodeString(dst *string, v jsontext.Value) error {
	if v.Kind() == jsontext.Null {
		return nil
	}
	s, err := v.Unquote()
	if err == nil {
		*dst = s
	}
	return err
}

// foreign holds keys that only another agent's payload carries. They are
// kept raw (any JSON value) so they never fail a parse. An adapter whose
// own payload has one of these keys lists its own field first, which hides
// foreign's.
type foreign struct {
	ConversationID []byte // Cursor
	WorkspaceRoots []byte // Cursor
	SessionIDCamel []byte // Copilot CLI (camelCase)
	ThreadID       []byte // Codex notify
	OpencodePID    []byte // tether's OpenCode plugin
	PiPID          []byte // tether's Pi extension
}

func (f *foreign) fields() []wireField {
	return []wireField{
		{name: "conversation_id", raw: &f.ConversationID},
		{name: "workspace_roots", raw: &f.WorkspaceRoots},
		{name: "sessionId", raw: &f.SessionIDCamel},
		{name: "thread-id", raw: &f.ThreadID},
		{name: "opencode_pid", raw: &f.OpencodePID},
		{name: "pi_pid", raw: &f.PiPID},
	}
}

// check refuses a payload that carries another agent's keys. Such a payload
// is refused even with a session ID of the right shape: Cursor, for one, can
// run hooks configured for Claude Code, and recording its conversation as a
// Claude Code session would offer a resume command that cannot work.
func (f foreign) check(self string) error {
	for _, k := range []struct {
		raw        []byte
		agent, key string
	}{
		{f.ConversationID, "cursor", "conversation_id"},
		{f.WorkspaceRoots, "cursor", "workspace_roots"},
		{f.SessionIDCamel, "copilot", "sessionId"},
		{f.ThreadID, "codex", "thread-id"},
		{f.OpencodePID, "opencode", "opencode_pid"},
		{f.PiPID, "pi", "pi_pid"},
	} {
		if len(k.raw) > 0 && string(k.raw) != "null" {
			return wrongAgent(self, "it carries "+k.agent+"'s "+k.key)
		}
	}
	return nil
}

func wrongAgent(self, why string) error { return &wrongAgentError{self: self, why: why} }

// wrongAgentError reads "payload does not look like <agent>'s: <why>" and
// matches ErrWrongAgent.
type wrongAgentError struct{ self, why string }

func (e *wrongAgentError) Error() string {
	return "payload does not look like " + e.self + "'s: " + e.why
}

func (e *wrongAgentError) Is(target error) bool { return target == ErrWrongAgent }

// tracks reports whether the agent maps native to a tether event.
func (a adapter) tracks(native string) bool { _, ok := a.events.kind(native); return ok }

// trackedBy names another agent that maps native to a tether event, or "".
func trackedBy(self, native string) string {
	for _, name := range Names() {
		if name == self {
			continue
		}
		if a, _ := find(name); a.tracks(native) {
			return name
		}
	}
	return ""
}

// flagValue passes v to a flag so that a value starting with "-" is never
// read as another flag.
func flagValue(flag, long, v string) []string {
	if strings.HasPrefix(v, "-") {
		return []string{long + "=" + v}
	}
	return []string{flag, v}
}

// positional passes v as a positional argument, after "--" when it could be
// read as a flag. An empty v adds nothing.
func positional(v string) []string {
	switch {
	case v == "":
		return nil
	case strings.HasPrefix(v, "-"):
		return []string{"--", v}
	}
	return []string{v}
}

// clip shortens s for an error message: a payload can be megabytes.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}

// stringOf is a raw JSON value's text when it is a string, else "": for
// fields read leniently, which no payload fails on.
func stringOf(raw []byte) string {
	v, err := jsontext.Parse(raw)
	if err != nil || v.Kind() != jsontext.String {
		return ""
	}
	s, _ := v.Unquote()
	return s
}

// rawText is a raw JSON value as a key: a string's text, a number's
// digits; "" for null or nothing.
func rawText(raw []byte) string {
	v, err := jsontext.Parse(raw)
	switch {
	case err != nil || v.Kind() == jsontext.Null:
		return ""
	case v.Kind() == jsontext.String:
		s, _ := v.Unquote()
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// firstNonEmpty returns the first of vs that is not empty.
func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
