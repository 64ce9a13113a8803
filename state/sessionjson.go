package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/tetherdev/tether/internal/jsontext"
	"github.com/tetherdev/tether/proclive"
)

// Session files are read and written by hand, with jsontext, rather than
// by encoding/json: the hook reads and writes one on every event, and
// encoding/json's first use costs a fresh process more than the rest of
// the hook. The output is byte for byte what encoding/json writes for the
// struct tags, and the input is read as encoding/json reads it: tests hold
// the reflection-based codec as the reference.

// MarshalJSON writes the session as encodeSession does.
func (s Session) MarshalJSON() ([]byte, error) { return encodeSession(&s) }

// UnmarshalJSON reads the known fields and keeps every other field in
// extra, to be written back unchanged. The session is replaced, not merged
// into; null gives the zero Session.
func (s *Session) UnmarshalJSON(data []byte) error {
	v, err := jsontext.Parse(data)
	if err != nil {
		return err
	}
	var d Session
	if err := d.decode(v); err != nil {
		return err
	}
	*s = d
	return nil
}

// encodeSession writes a session file's JSON, without a newline: the known
// fields in struct order (omitempty and omitzero as tagged), then the
// unknown ones kept from the file, sorted by key and compacted. A nil
// session is null.
func encodeSession(s *Session) ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	e := encoder{b: make([]byte, 0, 1024)}
	e.open("")
	e.int("version", int64(s.Version))
	e.str("id", s.ID)
	if s.Incarnation != "" {
		e.str("incarnation", s.Incarnation)
	}
	e.str("agent", s.Agent)
	e.str("phase", string(s.Phase))
	if s.Waiting != nil {
		e.wait("waiting", s.Waiting)
	}
	if s.Worktree != "" {
		e.str("worktree", s.Worktree)
	}
	if s.Cwd != "" {
		e.str("cwd", s.Cwd)
	}
	if s.Branch != "" {
		e.str("branch", s.Branch)
	}
	e.time("started_at", s.StartedAt)
	e.time("updated_at", s.UpdatedAt)
	if !s.LastTurnStartedAt.IsZero() {
		e.time("last_turn_started_at", s.LastTurnStartedAt)
	}
	if !s.LastTurnEndedAt.IsZero() {
		e.time("last_turn_ended_at", s.LastTurnEndedAt)
	}
	if !s.LastHookAt.IsZero() {
		e.time("last_hook_at", s.LastHookAt)
	}
	e.int("turns", int64(s.Turns))
	if s.LastPrompt != "" {
		e.str("last_prompt", s.LastPrompt)
	}
	if s.LastTurnKey != "" {
		e.str("last_turn_key", s.LastTurnKey)
	}
	if s.TurnTranscriptFrom != 0 {
		e.int("turn_transcript_from", s.TurnTranscriptFrom)
	}
	if s.Owner != nil {
		e.identity("owner", s.Owner)
	}
	if s.TranscriptPath != "" {
		e.str("transcript_path", s.TranscriptPath)
	}
	if s.TranscriptRoot != "" {
		e.str("transcript_root", s.TranscriptRoot)
	}
	if s.AgentDB {
		e.bool("agent_db", true)
	}
	e.bool("resumable", s.Resumable)
	if s.ResumableReason != "" {
		e.str("resumable_reason", s.ResumableReason)
	}
	if !s.EndedAt.IsZero() {
		e.time("ended_at", s.EndedAt)
	}
	if s.EndReason != "" {
		e.str("end_reason", s.EndReason)
	}
	if s.EndNote != "" {
		e.str("end_note", s.EndNote)
	}
	if s.Interrupted {
		e.bool("interrupted", s.Interrupted)
	}
	if s.EndedBy != "" {
		e.str("ended_by", string(s.EndedBy))
	}
	e.int("turn_log_size", s.TurnLogSize)
	e.int("condensed", s.Condensed)
	e.int("condensed_turns", int64(s.CondensedTurns))
	if len(s.Checkpoints) > 0 {
		e.checkpoints("checkpoints", s.Checkpoints)
	}
	if s.LastError != "" {
		e.str("last_error", s.LastError)
	}
	if s.GitHub != nil {
		e.github("github", s.GitHub)
	}
	if len(s.SpoolApplied) > 0 {
		e.strings("spool_applied", s.SpoolApplied)
	}
	for _, k := range slices.Sorted(maps.Keys(s.extra)) {
		e.b = append(e.b, ',')
		e.b = jsontext.AppendString(e.b, k)
		e.b = append(e.b, ':')
		b, err := jsontext.AppendCompact(e.b, s.extra[k])
		if err != nil {
			e.fail(fmt.Errorf("unknown field %q: %w", k, err))
		}
		e.b = b
	}
	return e.close()
}

func (e *encoder) identity(key string, id *proclive.Identity) {
	e.open(key)
	e.str("os", id.OS)
	e.int("pid", int64(id.PID))
	e.uint("start", id.Start)
	if id.Boot != "" {
		e.str("boot", id.Boot)
	}
	if id.Host != "" {
		e.str("host", id.Host)
	}
	if id.PIDNS != "" {
		e.str("pidns", id.PIDNS)
	}
	if id.Name != "" {
		e.str("name", id.Name)
	}
	if id.Interactive {
		e.bool("interactive", id.Interactive)
	}
	e.b = append(e.b, '}')
}

func (e *encoder) wait(key string, w *Wait) {
	e.open(key)
	e.time("since", w.Since)
	e.str("kind", w.Kind)
	if w.Detail != "" {
		e.str("detail", w.Detail)
	}
	if w.Key != "" {
		e.str("key", w.Key)
	}
	e.b = append(e.b, '}')
}

func (e *encoder) strings(key string, list []string) {
	e.key(key)
	e.b = append(e.b, '[')
	for i, v := range list {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = jsontext.AppendString(e.b, v)
	}
	e.b = append(e.b, ']')
}

func (e *encoder) checkpoints(key string, refs []CheckpointRef) {
	e.key(key)
	e.b = append(e.b, '[')
	for i, r := range refs {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.open("")
		e.str("id", r.ID)
		if len(r.Linked) > 0 {
			e.strings("linked", r.Linked)
		}
		e.b = append(e.b, '}')
	}
	e.b = append(e.b, ']')
}

func (e *encoder) github(key string, g *GitHubLink) {
	e.open(key)
	if g.Repo != "" {
		e.str("repo", g.Repo)
	}
	if g.Host != "" {
		e.str("host", g.Host)
	}
	if g.Issue != 0 {
		e.int("issue", int64(g.Issue))
	}
	if g.PR != 0 {
		e.int("pr", int64(g.PR))
	}
	if g.State != "" {
		e.str("state", g.State)
	}
	if g.Note != "" {
		e.str("note", g.Note)
	}
	if !g.CheckedAt.IsZero() {
		e.time("checked_at", g.CheckedAt)
	}
	if g.LastError != "" {
		e.str("last_error", g.LastError)
	}
	if !g.RetryAt.IsZero() {
		e.time("retry_at", g.RetryAt)
	}
	e.b = append(e.b, '}')
}

// ErrCorrupt marks a session file that cannot be used: not JSON, or not a
// session of the expected ID.
var ErrCorrupt = errors.New("corrupt session file")

// decodeSession parses a session file and checks it is the session id.
func decodeSession(data []byte, id string) (*Session, error) {
	var s Session
	if err := s.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if s.Version < 1 {
		return nil, fmt.Errorf("%w: version %d", ErrCorrupt, s.Version)
	}
	if s.ID != id {
		return nil, fmt.Errorf("%w: holds session %q", ErrCorrupt, s.ID)
	}
	return &s, nil
}

// The JSON names of the fields, in struct order (a test checks them
// against the tags).
var (
	sessionNames = []string{
		"version", "id", "incarnation", "agent", "phase", "waiting", "worktree", "cwd", "branch", "started_at", "updated_at",
		"last_turn_started_at", "last_turn_ended_at", "last_hook_at", "turns", "last_prompt", "last_turn_key",
		"turn_transcript_from", "owner",
		"transcript_path", "transcript_root", "agent_db", "resumable", "resumable_reason", "ended_at", "end_reason", "end_note",
		"interrupted", "ended_by", "turn_log_size", "condensed", "condensed_turns", "checkpoints", "last_error", "github",
		"spool_applied",
	}
	waitNames       = []string{"since", "kind", "detail", "key"}
	identityNames   = []string{"os", "pid", "start", "boot", "host", "pidns", "name", "interactive"}
	checkpointNames = []string{"id", "linked"}
	githubNames     = []string{"repo", "host", "issue", "pr", "state", "note", "checked_at", "last_error", "retry_at"}
)

// decode fills a zero Session from v. Unknown keys go to extra, the last
// of a repeated key winning, as in a map.
func (s *Session) decode(v jsontext.Value) error {
	return decodeObject(v, "state.Session", sessionNames, func(name string, v jsontext.Value) error {
		switch name {
		case "version":
			return decodeInt(&s.Version, v)
		case "id":
			return decodeString(&s.ID, v)
		case "incarnation":
			return decodeString(&s.Incarnation, v)
		case "agent":
			return decodeString(&s.Agent, v)
		case "phase":
			return decodeString(&s.Phase, v)
		case "waiting":
			return decodePointer(&s.Waiting, v, decodeWait)
		case "worktree":
			return decodeString(&s.Worktree, v)
		case "cwd":
			return decodeString(&s.Cwd, v)
		case "branch":
			return decodeString(&s.Branch, v)
		case "started_at":
			return decodeTime(&s.StartedAt, v)
		case "updated_at":
			return decodeTime(&s.UpdatedAt, v)
		case "last_turn_started_at":
			return decodeTime(&s.LastTurnStartedAt, v)
		case "last_turn_ended_at":
			return decodeTime(&s.LastTurnEndedAt, v)
		case "last_hook_at":
			return decodeTime(&s.LastHookAt, v)
		case "turns":
			return decodeInt(&s.Turns, v)
		case "last_prompt":
			return decodeString(&s.LastPrompt, v)
		case "last_turn_key":
			return decodeString(&s.LastTurnKey, v)
		case "turn_transcript_from":
			return decodeInt64(&s.TurnTranscriptFrom, v)
		case "owner":
			return decodePointer(&s.Owner, v, decodeIdentity)
		case "transcript_path":
			return decodeString(&s.TranscriptPath, v)
		case "transcript_root":
			return decodeString(&s.TranscriptRoot, v)
		case "agent_db":
			return decodeBool(&s.AgentDB, v)
		case "resumable":
			return decodeBool(&s.Resumable, v)
		case "resumable_reason":
			return decodeString(&s.ResumableReason, v)
		case "ended_at":
			return decodeTime(&s.EndedAt, v)
		case "end_reason":
			return decodeString(&s.EndReason, v)
		case "end_note":
			return decodeString(&s.EndNote, v)
		case "interrupted":
			return decodeBool(&s.Interrupted, v)
		case "ended_by":
			return decodeString(&s.EndedBy, v)
		case "turn_log_size":
			return decodeInt64(&s.TurnLogSize, v)
		case "condensed":
			return decodeInt64(&s.Condensed, v)
		case "condensed_turns":
			return decodeInt(&s.CondensedTurns, v)
		case "checkpoints":
			return jsontext.DecodeSlice(&s.Checkpoints, v, "[]state.CheckpointRef", decodeCheckpoint)
		case "last_error":
			return decodeString(&s.LastError, v)
		case "github":
			return decodePointer(&s.GitHub, v, decodeGitHub)
		case "spool_applied":
			return jsontext.DecodeSlice(&s.SpoolApplied, v, "[]string", decodeString)
		}
		return nil
	}, func(key []byte, v jsontext.Value) {
		if s.extra == nil {
			s.extra = map[string]json.RawMessage{}
		}
		s.extra[string(key)] = bytes.Clone(v.Raw())
	})
}

func decodeIdentity(id *proclive.Identity, v jsontext.Value) error {
	return decodeObject(v, "proclive.Identity", identityNames, func(name string, v jsontext.Value) error {
		switch name {
		case "os":
			return decodeString(&id.OS, v)
		case "pid":
			return decodeInt(&id.PID, v)
		case "start":
			return decodeUint64(&id.Start, v)
		case "boot":
			return decodeString(&id.Boot, v)
		case "host":
			return decodeString(&id.Host, v)
		case "pidns":
			return decodeString(&id.PIDNS, v)
		case "name":
			return decodeString(&id.Name, v)
		case "interactive":
			return decodeBool(&id.Interactive, v)
		}
		return nil
	}, nil)
}

func decodeWait(w *Wait, v jsontext.Value) error {
	return decodeObject(v, "state.Wait", waitNames, func(name string, v jsontext.Value) error {
		switch name {
		case "since":
			return decodeTime(&w.Since, v)
		case "kind":
			return decodeString(&w.Kind, v)
		case "detail":
			return decodeString(&w.Detail, v)
		case "key":
			return decodeString(&w.Key, v)
		}
		return nil
	}, nil)
}

func decodeCheckpoint(c *CheckpointRef, v jsontext.Value) error {
	return decodeObject(v, "state.CheckpointRef", checkpointNames, func(name string, v jsontext.Value) error {
		switch name {
		case "id":
			return decodeString(&c.ID, v)
		case "linked":
			return jsontext.DecodeSlice(&c.Linked, v, "[]string", decodeString)
		}
		return nil
	}, nil)
}

func decodeGitHub(g *GitHubLink, v jsontext.Value) error {
	return decodeObject(v, "state.GitHubLink", githubNames, func(name string, v jsontext.Value) error {
		switch name {
		case "repo":
			return decodeString(&g.Repo, v)
		case "host":
			return decodeString(&g.Host, v)
		case "issue":
			return decodeInt(&g.Issue, v)
		case "pr":
			return decodeInt(&g.PR, v)
		case "state":
			return decodeString(&g.State, v)
		case "note":
			return decodeString(&g.Note, v)
		case "checked_at":
			return decodeTime(&g.CheckedAt, v)
		case "last_error":
			return decodeString(&g.LastError, v)
		case "retry_at":
			return decodeTime(&g.RetryAt, v)
		}
		return nil
	}, nil)
}

// encoder appends the members of JSON objects. The first error sticks and
// is returned by close.
type encoder struct {
	b   []byte
	err error
}

func (e *encoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// key starts a member; the names are plain ASCII, never escaped.
func (e *encoder) key(k string) {
	if e.b[len(e.b)-1] != '{' {
		e.b = append(e.b, ',')
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, k...)
	e.b = append(e.b, '"', ':')
}

// open starts an object, as the member key unless key is "".
func (e *encoder) open(key string) {
	if key != "" {
		e.key(key)
	}
	e.b = append(e.b, '{')
}

// close ends the outermost object.
func (e *encoder) close() ([]byte, error) {
	if e.err != nil {
		return nil, e.err
	}
	return append(e.b, '}'), nil
}

func (e *encoder) str(k, v string) {
	e.key(k)
	e.b = jsontext.AppendString(e.b, v)
}

func (e *encoder) int(k string, v int64) {
	e.key(k)
	e.b = strconv.AppendInt(e.b, v, 10)
}

func (e *encoder) uint(k string, v uint64) {
	e.key(k)
	e.b = strconv.AppendUint(e.b, v, 10)
}

func (e *encoder) bool(k string, v bool) {
	e.key(k)
	e.b = strconv.AppendBool(e.b, v)
}

func (e *encoder) time(k string, t time.Time) {
	e.key(k)
	b, err := jsontext.AppendTime(e.b, t)
	if err != nil {
		e.fail(fmt.Errorf("%s: %w", k, err))
	}
	e.b = b
}

// decodeObject calls field with each member of object v whose key names
// one of names, by that name (see jsontext.Match), and other (unless nil)
// with the others. Null is an object without members; any other kind is
// an error naming typ. The first error stops the decoding: the caller
// discards the result.
func decodeObject(v jsontext.Value, typ string, names []string, field func(name string, v jsontext.Value) error, other func(key []byte, v jsontext.Value)) error {
	switch v.Kind() {
	case jsontext.Null:
		return nil
	case jsontext.Object:
	default:
		return &jsontext.TypeError{Value: v.Kind().String(), Type: typ}
	}
	var buf [64]byte
	for k, m := range v.Members() {
		key, err := k.AppendUnquote(buf[:0])
		if err != nil {
			return err
		}
		i := jsontext.Match(key, names)
		if i < 0 {
			if other != nil {
				other(key, m)
			}
			continue
		}
		if err := field(names[i], m); err != nil {
			return fmt.Errorf("%s: %w", names[i], err)
		}
	}
	return nil
}

// The decoders below store v as json.Unmarshal stores it into a field of
// that type: null leaves the field as it was, other mismatches are errors.

func decodeString[T ~string](dst *T, v jsontext.Value) error {
	if v.Kind() == jsontext.Null {
		return nil
	}
	s, err := v.Unquote()
	if err == nil {
		*dst = T(s)
	}
	return err
}

func decodeInt(dst *int, v jsontext.Value) error {
	if v.Kind() == jsontext.Null {
		return nil
	}
	n, err := v.Int()
	if err == nil {
		*dst = n
	}
	return err
}

func decodeInt64(dst *int64, v jsontext.Value) error {
	if v.Kind() == jsontext.Null {
		return nil
	}
	n, err := v.Int64()
	if err == nil {
		*dst = n
	}
	return err
}

func decodeUint64(dst *uint64, v jsontext.Value) error {
	if v.Kind() == jsontext.Null {
		return nil
	}
	n, err := v.Uint64()
	if err == nil {
		*dst = n
	}
	return err
}

func decodeBool(dst *bool, v jsontext.Value) error {
	if v.Kind() == jsontext.Null {
		return nil
	}
	b, err := v.Bool()
	if err == nil {
		*dst = b
	}
	return err
}

func decodeTime(dst *time.Time, v jsontext.Value) error {
	if v.Kind() == jsontext.Null {
		return nil
	}
	t, err := v.Time()
	if err == nil {
		*dst = t
	}
	return err
}

// decodePointer decodes v into the value *p points to, allocating it when
// nil; null sets *p to nil. A repeated key thus merges into what the
// earlier one set, as with encoding/json.
func decodePointer[T any](p **T, v jsontext.Value, decode func(*T, jsontext.Value) error) error {
	if v.Kind() == jsontext.Null {
		*p = nil
		return nil
	}
	if *p == nil {
		*p = new(T)
	}
	return decode(*p, v)
}
