package state

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherdev/tether/proclive"
)

// The reference codec: the encoding/json implementation the hand-written
// one replaced, kept as the oracle it must agree with byte for byte.

// sessionFields has Session's fields without its JSON methods, so the
// reference codec can use the standard encoding for the known fields.
type sessionFields Session

// refMarshal is json.Marshal without HTML escaping.
func refMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// refMarshalJSON is the old Session.MarshalJSON.
func refMarshalJSON(s Session) ([]byte, error) {
	b, err := refMarshal(sessionFields(s))
	if err != nil || len(s.extra) == 0 {
		return b, err
	}
	keys := make([]string, 0, len(s.extra))
	for k := range s.extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = b[:len(b)-1]
	for _, k := range keys {
		kb, err := refMarshal(k)
		if err != nil {
			return nil, err
		}
		b = append(b, ',')
		b = append(b, kb...)
		b = append(b, ':')
		b = append(b, s.extra[k]...)
	}
	return append(b, '}'), nil
}

// refEncodeSession is what marshal(sess) returned: encoding/json compacts
// the output of MarshalJSON.
func refEncodeSession(s *Session) ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	b, err := refMarshalJSON(*s)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// refUnmarshalJSON is the old Session.UnmarshalJSON.
func refUnmarshalJSON(s *Session, data []byte) error {
	var f sessionFields
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if dec.Decode(&f) == nil && len(bytes.TrimSpace(data[dec.InputOffset():])) == 0 {
		*s = Session(f)
		return nil
	}
	f = sessionFields{}
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	*s = Session(f)
	known := refKnownFields()
	for k, v := range all {
		if refIsKnown(known, k) {
			continue
		}
		if s.extra == nil {
			s.extra = map[string]json.RawMessage{}
		}
		s.extra[k] = v
	}
	return nil
}

func refIsKnown(known map[string]bool, k string) bool {
	if known[k] {
		return true
	}
	for name := range known {
		if strings.EqualFold(name, k) {
			return true
		}
	}
	return false
}

var refKnownFields = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, name := range jsonNames(reflect.TypeFor[sessionFields]()) {
		m[name] = true
	}
	return m
})

// refDecodeSession is the old decodeSession: json.Unmarshal validated the
// whole input, then called UnmarshalJSON.
func refDecodeSession(data []byte, id string) (*Session, error) {
	var s Session
	if !json.Valid(data) {
		return nil, ErrCorrupt
	}
	if err := refUnmarshalJSON(&s, data); err != nil {
		return nil, err
	}
	if s.Version < 1 || s.ID != id {
		return nil, ErrCorrupt
	}
	return &s, nil
}

// jsonNames lists the JSON names of t's exported fields, from their tags.
func jsonNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

func TestFieldNamesMatchTags(t *testing.T) {
	for _, tc := range []struct {
		typ   reflect.Type
		names []string
	}{
		{reflect.TypeFor[Session](), sessionNames},
		{reflect.TypeFor[Wait](), waitNames},
		{reflect.TypeFor[proclive.Identity](), identityNames},
		{reflect.TypeFor[CheckpointRef](), checkpointNames},
		{reflect.TypeFor[GitHubLink](), githubNames},
		{reflect.TypeFor[TurnRecord](), turnNames},
	} {
		if got := jsonNames(tc.typ); !slices.Equal(got, tc.names) {
			t.Errorf("%v: the codec knows %q, the tags say %q", tc.typ, tc.names, got)
		}
	}
}

// sessionCases are session files around the decoder's rules.
var sessionCases = []string{
	`{"version":1,"id":"x","phase":"idle","turns":3,"future":{"a":[1,2]},"owner":{"os":"linux","pid":1,"start":2}}`,
	`{"version":2,"id":"x","ID":"y","Turns":1,"extra":null}`,
	`{"version":1,"id":"x","started_at":"2026-01-01T00:00:00.123456789+02:00","checkpoints":[{"id":"c","linked":["a"]}]}`,
	`null`, `[]`, `"x"`, `1`, `true`, `{}`, ` {"version":1,"id":"x"} `, `{"version":1,"id":"x"} {}`,
	// Keys: escaped, case-folded (also through Unicode folding), unknown ones kept raw.
	`{"version":1,"\u0069d":"x","Phase":"active","ſtarted_at":"2026-01-01T00:00:00Z","Kind":1}`,
	`{"version":1,"id":"x","LAST_PROMPT":"p","last_prompt":"q","Last_Prompt":null}`,
	"{\"version\":1,\"id\":\"x\",\"z\" : [ 1 , { \"b\" : \"<&>\" } ] ,\"a\":\"\xff\",\"a\":2,\"\\u0061\":3}",
	// null leaves a field as it was; a pointer or a slice becomes nil.
	`{"version":1,"id":"x","turns":4,"turns":null,"owner":{"pid":1},"owner":null,"checkpoints":null}`,
	// A repeated object merges into the first; a repeated array reuses its elements.
	`{"version":1,"id":"x","owner":{"os":"linux","pid":1},"owner":{"name":"claude"}}`,
	`{"version":1,"id":"x","github":{"repo":"o/r","issue":1},"GitHub":{"pr":2}}`,
	`{"version":1,"id":"x","phase":"waiting","waiting":{"since":"2026-01-01T00:00:00Z","kind":"permission","detail":"Bash ` + "`npm test`" + `","key":"Bash"}}`,
	`{"version":1,"id":"x","waiting":{"kind":"question"},"Waiting":{"detail":"why?"},"waiting":null}`,
	`{"version":1,"id":"x","waiting":{"since":1}}`, `{"version":1,"id":"x","waiting":[]}`,
	`{"version":1,"id":"x","checkpoints":[{"id":"a","linked":["1","2"]},{"id":"b"}],"checkpoints":[{"linked":[null]}]}`,
	`{"version":1,"id":"x","checkpoints":[{"id":"a"},{"id":"b"},{"id":"c"}],"checkpoints":[{}],"checkpoints":[null,null,{}]}`,
	`{"version":1,"id":"x","checkpoints":[{"id":"a"}],"checkpoints":[],"checkpoints":[null]}`,
	`{"version":1,"id":"x","checkpoints":[null,{"id":"a","linked":[]}]}`,
	// Type mismatches and bad values.
	`{"version":"1","id":"x"}`, `{"version":1.0,"id":"x"}`, `{"version":1e0,"id":"x"}`, `{"version":1,"id":1}`,
	`{"version":1,"id":"x","owner":{"start":-1}}`, `{"version":1,"id":"x","owner":{"start":-0}}`,
	`{"version":1,"id":"x","owner":{"start":18446744073709551615}}`, `{"version":1,"id":"x","owner":{"start":18446744073709551616}}`,
	`{"version":1,"id":"x","turn_log_size":9223372036854775807}`, `{"version":1,"id":"x","turn_log_size":9223372036854775808}`,
	`{"version":1,"id":"x","owner":"me"}`, `{"version":1,"id":"x","owner":[]}`, `{"version":1,"id":"x","checkpoints":{}}`,
	`{"version":1,"id":"x","checkpoints":[1]}`, `{"version":1,"id":"x","checkpoints":[{"linked":"a"}]}`,
	`{"version":1,"id":"x","resumable":"true"}`, `{"version":1,"id":"x","resumable":1}`,
	`{"version":1,"id":"x","started_at":"2026-01-01"}`, `{"version":1,"id":"x","started_at":1}`,
	`{"version":1,"id":"x","started_at":"2026-01-01T00:00:00\u005a"}`, `{"version":1,"id":"x","github":{"retry_at":{}}}`,
	`{"version":1,"id":"x","turns":"a","started_at":"bad"}`, `{"version":1,"id":"x","phase":{}}`,
	`{"version":0,"id":"x"}`, `{"version":1,"id":"y"}`, `{"version":1,"id":"x"`,
}

func TestDecodeSessionMatchesReference(t *testing.T) {
	for _, c := range sessionCases {
		checkDecodeSession(t, []byte(c))
	}
}

// checkDecodeSession compares decodeSession with the reference decoder.
func checkDecodeSession(t *testing.T, data []byte) {
	t.Helper()
	got, err := decodeSession(data, "x")
	want, werr := refDecodeSession(data, "x")
	switch {
	case (err == nil) != (werr == nil):
		t.Fatalf("decodeSession(%q) = %+v, %v; reference: %+v, %v", data, got, err, want, werr)
	case err != nil:
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("decodeSession(%q): %v does not wrap ErrCorrupt", data, err)
		}
		return
	case !reflect.DeepEqual(got, want):
		t.Fatalf("decodeSession(%q) =\n%+v\nreference:\n%+v", data, got, want)
	}
	// What was read is written as the reference writes it, and reads back
	// the same.
	out := checkEncodeSession(t, got)
	again, err := decodeSession(out, "x")
	if err != nil {
		t.Fatalf("re-read of %s: %v", out, err)
	}
	if out2 := checkEncodeSession(t, again); !bytes.Equal(out, out2) {
		t.Fatalf("not stable:\n%s\n%s", out, out2)
	}
}

// checkEncodeSession compares encodeSession with the reference encoder, and
// returns the encoding (nil if both fail).
func checkEncodeSession(t *testing.T, s *Session) []byte {
	t.Helper()
	got, err := encodeSession(s)
	want, werr := refEncodeSession(s)
	if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("encodeSession(%+v) =\n%s, %v\nreference:\n%s, %v", s, got, err, want, werr)
	}
	// Through encoding/json, as other packages marshal sessions.
	for _, html := range []bool{false, true} {
		gotJSON, err := encodeWith(s, html, false)
		wantJSON, werr := encodeWith(s, html, true)
		if (err == nil) != (werr == nil) || !bytes.Equal(gotJSON, wantJSON) {
			t.Fatalf("json encoding (html %v) of %+v =\n%s, %v\nreference:\n%s, %v", html, s, gotJSON, err, wantJSON, werr)
		}
	}
	return got
}

// refSession is a Session whose MarshalJSON is the reference one.
type refSession Session

func (s refSession) MarshalJSON() ([]byte, error) { return refMarshalJSON(Session(s)) }

func encodeWith(s *Session, escapeHTML, ref bool) ([]byte, error) {
	var v any = s
	if ref && s != nil {
		v = (*refSession)(s)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	err := enc.Encode(v)
	return buf.Bytes(), err
}

func TestEncodeSessionMatchesReference(t *testing.T) {
	full := sampleSession("s-1")
	full.LastHookAt, full.Incarnation = full.UpdatedAt, "inc"
	full.ResumableReason, full.EndReason, full.EndNote, full.LastError = "r", EndInterrupted, "a <note> & more", "e"
	full.EndedBy, full.SpoolApplied = EventSessionEnd, []string{"0001-a.event", "0002-\"b\".event"}
	full.EndedAt, full.Interrupted = full.UpdatedAt.In(time.FixedZone("", 3600)), true
	full.Owner.Interactive = true
	full.Phase, full.Waiting = PhaseWaiting, &Wait{Since: full.UpdatedAt, Kind: WaitPermission, Detail: "Bash `go test <./...>`", Key: "Bash"}
	full.Checkpoints = []CheckpointRef{{ID: "c1"}, {ID: "c2", Linked: []string{"abc", "def"}}, {Linked: []string{}}}
	full.GitHub = &GitHubLink{Repo: "o/r", Host: "github.com", Issue: 1, PR: 2, State: "pr-merged", Note: "n",
		CheckedAt: full.StartedAt, LastError: "x", RetryAt: full.UpdatedAt}
	full.extra = map[string]json.RawMessage{"zz": json.RawMessage(" [ 1 , \"a b\" ] "), "a\u2028": json.RawMessage(`"<&>"`)}
	for _, s := range []*Session{
		nil, {}, sampleSession("s-2"), full,
		{Version: 1, GitHub: &GitHubLink{}, Owner: &proclive.Identity{}, Checkpoints: []CheckpointRef{}, Waiting: &Wait{}},
		{Version: 1, StartedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Version: 1, GitHub: &GitHubLink{RetryAt: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{Version: 1, LastPrompt: "bad \xff utf8, \x00 control, \u2029 separator"},
		{Version: 1, extra: map[string]json.RawMessage{"x": json.RawMessage(`{`)}},
	} {
		checkEncodeSession(t, s)
	}
}

// gen draws values from fuzz input; past its end everything is zero.
type gen struct{ b []byte }

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

func (g *gen) int64() int64 {
	var b [8]byte
	n := copy(b[:], g.b)
	g.b = g.b[n:]
	return int64(binary.LittleEndian.Uint64(b[:]))
}

var trickyStrings = []string{"idle", "a\"b\\c", "<a href='x'>&amp;</a>", "\x00\x1f\x7f\b\f\n\r\t", "é😀", "\u2028\u2029", "\xff\xfe", "\xed\xa0\x80"}

func (g *gen) str() string {
	switch g.byte() % 4 {
	case 0:
		return ""
	case 1:
		return trickyStrings[int(g.byte())%len(trickyStrings)]
	}
	n := min(int(g.byte()%24), len(g.b))
	s := string(g.b[:n])
	g.b = g.b[n:]
	return s
}

var zones = []*time.Location{time.UTC, time.Local, time.FixedZone("", 5*3600+30*60), time.FixedZone("X", -(23*3600 + 59*60)), time.FixedZone("", 24*3600)}

func (g *gen) time() time.Time {
	switch g.byte() % 4 {
	case 0:
		return time.Time{}
	case 1:
		return time.Date(2026, 3, 1, 10, 0, 0, int(g.byte()), time.UTC)
	}
	// Mostly years 1970-2250, some far out of RFC 3339's range.
	sec := g.int64() % (1 << 33)
	if g.byte()%8 == 0 {
		sec = g.int64()
	}
	return time.Unix(sec, g.int64()%1e9).In(zones[int(g.byte())%len(zones)])
}

// extraValues are valid JSON values as a session file may hold them.
var extraValues = []string{`1`, ` { "a" : [ 1 , 2 ] } `, `"x\u0041 <&>"`, `null`, `[]`, "\"\xff\"", `1.50e+3`, `{"k":"` + "\u2028" + `"}`}

func (g *gen) session() *Session {
	s := &Session{
		Version: int(g.int64() % 3), ID: g.str(), Incarnation: g.str(), Agent: g.str(), Phase: Phase(g.str()), Worktree: g.str(), Branch: g.str(),
		StartedAt: g.time(), UpdatedAt: g.time(), LastTurnStartedAt: g.time(), LastTurnEndedAt: g.time(), LastHookAt: g.time(),
		Turns: int(g.int64()), LastPrompt: g.str(), TranscriptPath: g.str(), TranscriptRoot: g.str(), Resumable: g.byte()%2 == 0, ResumableReason: g.str(),
		EndedAt: g.time(), EndReason: g.str(), EndNote: g.str(), Interrupted: g.byte()%2 == 0,
		TurnLogSize: g.int64(), Condensed: g.int64(), CondensedTurns: int(g.int64()), LastError: g.str(),
	}
	if g.byte()%2 == 0 {
		s.Owner = &proclive.Identity{OS: g.str(), PID: int(g.int64()), Start: uint64(g.int64()), Boot: g.str(),
			Host: g.str(), PIDNS: g.str(), Name: g.str(), Interactive: g.byte()%2 == 0}
	}
	if g.byte()%2 == 0 {
		s.Waiting = &Wait{Since: g.time(), Kind: g.str(), Detail: g.str(), Key: g.str()}
	}
	if n := int(g.byte() % 4); n > 0 {
		s.Checkpoints = make([]CheckpointRef, n-1)
		for i := range s.Checkpoints {
			s.Checkpoints[i].ID = g.str()
			for range g.byte() % 3 {
				s.Checkpoints[i].Linked = append(s.Checkpoints[i].Linked, g.str())
			}
		}
	}
	if g.byte()%2 == 0 {
		s.GitHub = &GitHubLink{Repo: g.str(), Host: g.str(), Issue: int(g.int64() % 1000), PR: int(g.int64() % 1000),
			State: g.str(), Note: g.str(), CheckedAt: g.time(), LastError: g.str(), RetryAt: g.time()}
	}
	for range g.byte() % 4 {
		if s.extra == nil {
			s.extra = map[string]json.RawMessage{}
		}
		s.extra[g.str()] = json.RawMessage(extraValues[int(g.byte())%len(extraValues)])
	}
	return s
}

// FuzzEncodeSession builds sessions from the fuzz input: encodeSession must
// write what the reference writes, and both decoders must read it back
// alike.
func FuzzEncodeSession(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{1, 2, 3, 0xff, 0x80, 7}, 60))
	f.Add([]byte(strings.Repeat("\x01\x05", 200)))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := gen{data}
		s := g.session()
		out := checkEncodeSession(t, s)
		if out == nil {
			return
		}
		checkDecodeSession(t, out)
	})
}

// FuzzDecodeSessionMatchesReference feeds arbitrary bytes to decodeSession
// and the reference decoder: both fail, or both give the same session.
func FuzzDecodeSessionMatchesReference(f *testing.F) {
	for _, c := range sessionCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecodeSession(t, data)
	})
}

// turnCases are turn log lines around the decoder's rules.
var turnCases = []string{
	`{"t":"turn-start","turn":1,"at":"2026-01-01T00:00:00Z","prompt":"p","head":"abc","transcript_size":10}`,
	`{"t":"turn-end","turn":1,"at":"2026-01-01T00:00:00.5-07:00","transcript_size":0}` + "\r",
	`null`, `{}`, `[]`, `1`, `{"T":"x","Turn":2,"AT":null,"x":{"y":[]}}`, `{"t":"x","t":null,"turn":3,"turn":null}`,
	`{"t":"turn-start","turn":2,"owner":{"os":"linux","pid":7,"start":9,"name":"claude"},"OWNER":{"host":"h"}}`,
	`{"t":"x","owner":null}`, `{"t":"x","owner":{"pid":"7"}}`, `{"t":"x","owner":1}`,
	`{"t":"turn-end","turn":1,"error":"boom","ERROR":"x"}`, `{"t":"turn-end","error":null}`, `{"error":1}`,
	`{"t":1}`, `{"turn":1.5}`, `{"turn":"1"}`, `{"at":"yesterday"}`, `{"transcript_size":-1}`, `{"t":"x"`, `{"t":"x"} x`,
}

func TestDecodeTurnMatchesReference(t *testing.T) {
	for _, c := range turnCases {
		checkDecodeTurn(t, []byte(c))
	}
}

func checkDecodeTurn(t *testing.T, line []byte) {
	t.Helper()
	got, err := decodeTurn(line)
	var want TurnRecord
	werr := json.Unmarshal(line, &want)
	if (err == nil) != (werr == nil) || err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeTurn(%q) = %+v, %v; json.Unmarshal: %+v, %v", line, got, err, want, werr)
	}
	if err == nil {
		checkEncodeTurn(t, got)
	}
}

func checkEncodeTurn(t *testing.T, r TurnRecord) []byte {
	t.Helper()
	got, err := encodeTurn(r)
	want, werr := refMarshal(r)
	if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("encodeTurn(%+v) = %s, %v; reference: %s, %v", r, got, err, want, werr)
	}
	return got
}

func TestEncodeTurnMatchesReference(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 5, time.FixedZone("", -3600))
	for _, r := range []TurnRecord{
		{},
		{T: RecTurnStart, Turn: 3, At: at, Prompt: "fix <this> & \"that\"\n", Head: "abc", TranscriptSize: 1 << 40},
		{T: RecTurnEnd, Turn: -1, At: at.UTC(), TranscriptSize: -5},
		{T: RecTurnStart, At: at, Owner: &proclive.Identity{OS: "linux", PID: 7, Start: 9, Boot: "b", Host: "h", PIDNS: "pid:[1]", Name: "claude", Interactive: true}},
		{T: RecTurnStart, At: at, Owner: &proclive.Identity{}},
		{T: RecTurnEnd, At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{T: RecTurnEnd, Turn: 2, At: at, Key: "k", Error: "API Error: 400 \"bad\"\n<x>"},
		{T: RecTurnStart, Turn: 3, At: at, Spool: "01795843056408502648-0b5798f64fc0c751.event"},
	} {
		checkEncodeTurn(t, r)
	}
}

// FuzzEncodeTurn builds turn records from the fuzz input: encodeTurn must
// write what encoding/json writes, and decodeTurn read it back as
// json.Unmarshal does.
func FuzzEncodeTurn(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{1, 2, 3, 0xff, 0x80, 7}, 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := gen{data}
		r := TurnRecord{T: g.str(), Turn: int(g.int64()), At: g.time(), Prompt: g.str(), Head: g.str(), TranscriptSize: g.int64(), Key: g.str(), Error: g.str(), Spool: g.str()}
		if g.byte()%2 == 0 {
			r.Owner = &proclive.Identity{OS: g.str(), PID: int(g.int64()), Start: uint64(g.int64()), Name: g.str(), Interactive: g.byte()%2 == 0}
		}
		if out := checkEncodeTurn(t, r); out != nil {
			checkDecodeTurn(t, out)
		}
	})
}

// FuzzDecodeTurnMatchesReference feeds arbitrary bytes to decodeTurn and
// json.Unmarshal: both fail, or both give the same record.
func FuzzDecodeTurnMatchesReference(f *testing.F) {
	for _, c := range turnCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkDecodeTurn(t, line)
	})
}
