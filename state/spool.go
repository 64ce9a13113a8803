package state

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The spool keeps the events a writer could not apply in its time: the
// hook, which must return to its agent within milliseconds, finds the
// session's lock held (other hooks of the session, a sweep condensing it)
// and spools its event instead of dropping it. No lock is taken to spool:
// each event is a file of its own, spool/<id>/<time>-<random>.event,
// written under a temporary name, fsynced and renamed into place, so it is
// whole when it appears and no two writers ever share a name.
//
// The next writer of the session applies the spooled events (begin), in
// the order of their names, before its own change, with Options.Apply,
// and records them in the state it writes (Session.SpoolApplied); the
// turn records they append carry their names too (TurnRecord.Spool), for
// a writer killed between its append and its state. Once that state is
// durable, still under the lock, their files go. An event is thus applied
// exactly once, whatever is killed when. Readers (Load, List, Preview)
// apply the spooled events in memory the same way, so every reader sees
// them before any writer has.

// spoolDir holds a directory per session with events waiting.
const spoolDir = "spool"

// spoolExt ends the name of a spooled event; temporary files start with
// a dot.
const spoolExt = ".event"

// ApplyFunc applies one spooled event, as its writer spooled it (Spool),
// to the session in tx. It must depend on nothing but the event and the
// session: a reader applies it in memory, a writer for good, and both
// must see the same.
type ApplyFunc func(tx *Tx, event []byte) error

// errNoApply refuses to write a session whose events wait in the spool
// with a store that cannot apply them: its change would go before them.
var errNoApply = errors.New("the session has spooled events and this store cannot apply them (Options.Apply)")

// staleSpoolTemp is the age past which a temporary file in the spool is
// a killed spooler's: spooling one event takes milliseconds.
const staleSpoolTemp = time.Minute

func spoolPath(id string) string { return filepath.Join(spoolDir, id) }

// Spool keeps event for session id until a writer or reader of the
// session applies it (see ApplyFunc), without taking any lock. It returns
// once the event is durable.
func (s *Store) Spool(id string, event []byte) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	root, err := s.openRoot(true)
	if err != nil {
		return fmt.Errorf("spool an event of %s: %w", id, err)
	}
	dir := spoolPath(id)
	name := fmt.Sprintf("%020d-%016x%s", time.Now().UnixNano(), rand.Uint64(), spoolExt)
	// The session's directory is removed once its events are applied: one
	// removed between making it and writing into it is made again.
	for attempt := 0; ; attempt++ {
		err = s.spoolInto(root, dir, name, event)
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt == 3 {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("spool an event of %s: %w", id, err)
	}
	// A sweep has work: the next commit's hook must not skip it.
	if err := s.ensureActive(root); err != nil {
		return fmt.Errorf("spool an event of %s: %w", id, err)
	}
	return nil
}

// spoolInto writes one event file into dir, durably.
func (s *Store) spoolInto(root *tree, dir, name string, event []byte) error {
	if err := ensureDirOnce(root, dir); err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+strconv.FormatUint(rand.Uint64(), 36))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(event)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return syncDir(root, dir)
}

// spooled lists the names of the session's spooled events, oldest
// first; none when it has no spool directory.
func spooled(root *tree, id string) ([]string, error) {
	names, err := readDirNames(root, spoolPath(id))
	if err != nil {
		return nil, fmt.Errorf("read spool of %s: %w", id, err)
	}
	return slices.DeleteFunc(names, func(n string) bool { return !strings.HasSuffix(n, spoolExt) || strings.HasPrefix(n, ".") }), nil
}

// spoolRun is what applying a session's spool did.
type spoolRun struct {
	applied []string // events applied now, in order
	done    []string // events applied for good, whose files are to go
	bad     []string // events the applier refused
}

// applySpool applies to tx the session's spooled events that are not
// applied yet: those not named in its SpoolApplied nor by a turn record
// replayed past its state (tail). A writer (write set) then records in the
// session which events its state has applied: the new ones, and those
// applied before whose files are still there.
func (s *Store) applySpool(root *tree, tx *Tx, tail []TurnRecord, names []string, write bool) (spoolRun, error) {
	var run spoolRun
	if len(names) == 0 && len(tx.Session.SpoolApplied) == 0 {
		return run, nil
	}
	done := map[string]bool{}
	for _, n := range tx.Session.SpoolApplied {
		done[n] = true
	}
	for _, r := range tail {
		if r.Spool != "" {
			done[r.Spool] = true
		}
	}
	for _, name := range names {
		if done[name] {
			run.done = append(run.done, name)
			continue
		}
		if s.opts.Apply == nil {
			if write {
				return run, errNoApply
			}
			return run, nil
		}
		data, err := root.ReadFile(filepath.Join(spoolPath(tx.Session.ID), name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // applied and removed since it was listed (a reader's race)
		}
		if err != nil {
			return run, fmt.Errorf("read spooled event %s: %w", name, err)
		}
		turns, recs := len(tx.turns), len(tx.recs)
		before, err := encodeSession(tx.Session)
		if err != nil {
			return run, err
		}
		tx.spooling = name
		err = s.opts.Apply(tx, data)
		tx.spooling = ""
		if err != nil {
			// Undone, and left out: one bad event must not hold the
			// session's every write.
			back, derr := decodeSession(before, tx.Session.ID)
			if derr != nil {
				return run, errors.Join(err, derr)
			}
			*tx.Session = *back
			tx.turns, tx.recs = tx.turns[:turns], tx.recs[:recs]
			run.bad = append(run.bad, name)
			s.Logger().Warn("spooled event not applied", LogKeySession, tx.Session.ID, "event", name, LogKeyError, err.Error())
			continue
		}
		run.applied = append(run.applied, name)
		run.done = append(run.done, name)
	}
	if write {
		tx.Session.SpoolApplied = run.done
	}
	return run, nil
}

// finishSpool removes the files of the events the committed write
// applied, and the bad ones to quarantine, then the session's spool
// directory once empty. Under the session's lock, after the state that
// records them applied is durable.
func (s *Store) finishSpool(root *tree, id string, run spoolRun) error {
	if len(run.done)+len(run.bad) == 0 {
		return nil
	}
	dir := spoolPath(id)
	for _, name := range run.bad {
		if err := s.quarantine(root, filepath.Join(dir, name), id, errors.New("a spooled event that could not be applied")); err != nil {
			return err
		}
	}
	for _, name := range run.done {
		if err := root.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove spooled event: %w", err)
		}
	}
	// A spooler killed before its rename left its temporary file.
	if names, err := readDirNames(root, dir); err == nil {
		for _, name := range names {
			if fi, err := root.Lstat(filepath.Join(dir, name)); err == nil && strings.HasPrefix(name, ".") && time.Since(fi.ModTime()) > staleSpoolTemp {
				_ = root.Remove(filepath.Join(dir, name))
			}
		}
	}
	if err := syncDir(root, dir); err != nil {
		return err
	}
	// Gone only when empty: a writer spooling now keeps it (its
	// temporary file is in it), or makes it again.
	if root.Remove(dir) == nil {
		return syncDir(root, spoolDir)
	}
	return nil
}

// foldSpool brings a session read without its lock up to its spooled
// events, in memory: what the next writer will apply.
func (s *Store) foldSpool(root *tree, sess *Session, tail []TurnRecord) {
	if sess.Version > SchemaVersion || s.opts.Apply == nil {
		return
	}
	names, err := spooled(root, sess.ID)
	if err != nil || len(names) == 0 {
		return
	}
	tx := &Tx{Session: sess, Exists: true}
	_, _ = s.applySpool(root, tx, tail, names, false)
}

// spoolIDs lists the sessions that have events in the spool.
func spoolIDs(root *tree) ([]string, error) {
	names, err := readDirNames(root, spoolDir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", spoolDir, err)
	}
	return slices.DeleteFunc(names, func(n string) bool { return ValidateID(n) != nil }), nil
}

// pendingSpool lists the loaded session's spooled events not applied yet.
func pendingSpool(l loaded) []string {
	done := map[string]bool{}
	if l.sess != nil {
		for _, n := range l.sess.SpoolApplied {
			done[n] = true
		}
	}
	for _, r := range l.tail {
		done[r.Spool] = true
	}
	return slices.DeleteFunc(slices.Clone(l.spool), func(n string) bool { return done[n] })
}

// DrainSpool applies the spooled events of the sessions ids (none: of
// every session) for good, each in a write of its own session
// (MutateEach), and returns the sessions it wrote. The sweep runs it
// first, so that what it condenses is in the turn logs; a command about
// one session, so that its turn log says all.
func (s *Store) DrainSpool(only ...string) ([]string, error) {
	ids, err := s.Spooled()
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	if len(only) > 0 {
		ids = slices.DeleteFunc(ids, func(id string) bool { return !slices.Contains(only, id) })
		if len(ids) == 0 {
			return nil, nil
		}
	}
	_, errs := s.MutateEach(ids, func(*Tx) error { return ErrNoChange })
	return ids, errors.Join(errs...)
}

// Spooled lists the sessions that have spooled events (applied or not:
// their files go with the next write).
func (s *Store) Spooled() ([]string, error) {
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the spool: %w", err)
	}
	return spoolIDs(root)
}
