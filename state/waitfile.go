package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tetherdev/tether/internal/jsontext"
)

// A wait lives beside its session's state, in sessions/<id>.wait, not in
// the state file: an agent signals waits at every dialog, and a wait is
// worth no fsync, nor any change to the directory after the first. The
// file is rewritten in place (emptied when the wait is over), never
// fsynced, under the session's lock: a crash may lose it, and a reader may
// catch it half-written; either reads as no wait (the session as it was
// before it: active, or idle at its prompt) until the agent's next signal,
// and never touches the state. It applies only to the turn, and the phase,
// it was written for: a turn that starts or ends leaves it stale, and a
// stale or unreadable one is ignored, and emptied by the session's next
// write; it goes with the session's end. The state file keeps a session's
// phase as the transition table's row (active or idle), never waiting,
// unless an older build wrote it so.

// waitRecord is a wait as its file holds it.
type waitRecord struct {
	Turn  int   // the session's turns when it began
	Phase Phase // the phase it waits in: PhaseActive (in a turn) or PhaseIdle (at the prompt)
	Wait
}

func waitPath(id string) string { return filepath.Join(locLive.dir(), id+".wait") }

// waitOf is the wait record session s calls for: nil unless it waits.
func waitOf(s *Session) *waitRecord {
	if s.Phase != PhaseWaiting || s.Waiting == nil {
		return nil
	}
	return &waitRecord{Turn: s.Turns, Phase: waitBase(s), Wait: *s.Waiting}
}

// waitBase is the phase a waiting session is stored in.
func waitBase(s *Session) Phase {
	if TablePhase(s) == PhaseAtPrompt {
		return PhaseIdle
	}
	return PhaseActive
}

// stored is the session as its state file holds it: without its wait.
func (s *Session) stored() *Session {
	if s.Phase != PhaseWaiting {
		return s
	}
	c := *s
	c.Phase, c.Waiting = waitBase(s), nil
	return &c
}

// overlayWait makes s wait as rec says, when rec applies to it: its turn,
// its phase, and no wait it holds already.
func overlayWait(s *Session, rec *waitRecord) {
	if rec == nil || s.Waiting != nil || s.Phase != rec.Phase || s.Turns != rec.Turn {
		return
	}
	w := rec.Wait
	s.Phase, s.Waiting = PhaseWaiting, &w
}

// readWait reads session id's wait file: exists says whether there is
// one, rec is nil when it holds none (empty) or does not read.
func readWait(root *tree, id string) (rec *waitRecord, exists bool) {
	data, err := root.ReadFile(waitPath(id))
	if err != nil {
		return nil, !errors.Is(err, fs.ErrNotExist)
	}
	if len(data) == 0 {
		return nil, true
	}
	r, err := decodeWaitRecord(data)
	if err != nil {
		return nil, true
	}
	return &r, true
}

// sameWait tells two wait records (nil: none) alike.
func sameWait(a, b *waitRecord) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// putWait brings session id's wait file to rec (nil: none), when it
// differs from what was read (had; exists: there is a file): rewritten in
// place, emptied, or, for a session no longer live, removed.
func (s *Store) putWait(root *tree, id string, rec, had *waitRecord, exists, live bool) error {
	switch {
	case !live:
		if !exists {
			return nil
		}
		if err := root.Remove(waitPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove wait: %w", err)
		}
		return nil
	case rec == nil && !exists, sameWait(rec, had) && (rec != nil || !exists):
		return nil
	}
	var data []byte
	if rec != nil {
		var err error
		if data, err = encodeWaitRecord(*rec); err != nil {
			return fmt.Errorf("write wait: %w", err)
		}
		data = append(data, '\n')
	}
	f, err := s.openFile(root, waitPath(id), os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return fmt.Errorf("write wait: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write wait: %w", err)
	}
	return nil
}

var waitRecordNames = []string{"turn", "phase", "since", "kind", "detail", "key"}

func encodeWaitRecord(r waitRecord) ([]byte, error) {
	e := encoder{b: make([]byte, 0, 160)}
	e.open("")
	e.int("turn", int64(r.Turn))
	e.str("phase", string(r.Phase))
	e.time("since", r.Since)
	e.str("kind", r.Kind)
	if r.Detail != "" {
		e.str("detail", r.Detail)
	}
	if r.Key != "" {
		e.str("key", r.Key)
	}
	return e.close()
}

func decodeWaitRecord(data []byte) (waitRecord, error) {
	var r waitRecord
	v, err := jsontext.Parse(data)
	if err != nil {
		return r, err
	}
	err = decodeObject(v, "state.waitRecord", waitRecordNames, func(name string, v jsontext.Value) error {
		switch name {
		case "turn":
			return decodeInt(&r.Turn, v)
		case "phase":
			return decodeString(&r.Phase, v)
		case "since":
			return decodeTime(&r.Since, v)
		case "kind":
			return decodeString(&r.Kind, v)
		case "detail":
			return decodeString(&r.Detail, v)
		case "key":
			return decodeString(&r.Key, v)
		}
		return nil
	}, nil)
	if err == nil && r.Kind == "" {
		err = errors.New("a wait of no kind")
	}
	return r, err
}
