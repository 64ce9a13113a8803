package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// sessionFields has Session's fields without its JSON methods, so the
// methods can use the standard encoding for the known fields.
type sessionFields Session

// MarshalJSON writes the known fields, then the unknown ones kept from
// the file the session was read from.
func (s Session) MarshalJSON() ([]byte, error) {
	b, err := marshal(sessionFields(s))
	if err != nil || len(s.extra) == 0 {
		return b, err
	}
	keys := make([]string, 0, len(s.extra))
	for k := range s.extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = b[:len(b)-1] // the closing brace; the known part is never empty
	for _, k := range keys {
		kb, err := marshal(k)
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

// marshal is json.Marshal without HTML escaping: prompts and unknown
// fields are stored as written ("&", "<" stay readable and byte-stable).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads the known fields and keeps every other field in
// extra, to be written back unchanged.
func (s *Session) UnmarshalJSON(data []byte) error {
	// Usually every field is known: one strict pass then suffices. Any
	// failure takes the full path, which also reports real errors.
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
	known := knownFields()
	for k, v := range all {
		if isKnown(known, k) {
			continue
		}
		if s.extra == nil {
			s.extra = map[string]json.RawMessage{}
		}
		s.extra[k] = v
	}
	return nil
}

// isKnown matches the way encoding/json matches keys to fields: exactly,
// else ignoring case. A key the decoder put in a field must not also be
// kept as unknown, or it would be written twice.
func isKnown(known map[string]bool, k string) bool {
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

// knownFields is the set of JSON names of Session's fields, from its tags.
var knownFields = sync.OnceValue(func() map[string]bool {
	t := reflect.TypeFor[sessionFields]()
	m := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		m[name] = true
	}
	return m
})

// ErrCorrupt marks a session file that cannot be used: not JSON, or not a
// session of the expected ID.
var ErrCorrupt = errors.New("corrupt session file")

// decodeSession parses a session file and checks it is the session id.
func decodeSession(data []byte, id string) (*Session, error) {
	var s Session
	if err := json.Unmarshal(data, &s); err != nil {
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
