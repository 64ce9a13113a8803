package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

var (
	// ErrNotFound: no such session (neither live nor ended).
	ErrNotFound = errors.New("session not found")
	// ErrNoChange, returned by a Mutate callback, means "write nothing".
	ErrNoChange = errors.New("no change")
	// ErrLockTimeout: a lock stayed held longer than Options.LockWait.
	ErrLockTimeout = errors.New("timed out waiting for lock")
	// ErrNewerVersion: the session was written by a newer tether; it can be
	// read but not written.
	ErrNewerVersion = errors.New("session written by a newer tether")
)

// Options tunes a Store. Zero values mean the defaults.
type Options struct {
	LockWait   time.Duration    // bounded wait for a lock; default 2s
	Now        func() time.Time // clock for UpdatedAt and log times; default time.Now
	LogMaxSize int64            // tether.log rotates to tether.log.1 beyond this; default 1 MiB
	// Apply applies the events writers spooled (Spool) when they could not
	// take a session's lock in time. Without it, a reader does not see
	// them, and a writer refuses a session that has some.
	Apply ApplyFunc
}

// Store is the session store of one repository: <commonDir>/tether.
type Store struct {
	dir  string
	opts Options

	mu   sync.Mutex
	root *tree // opened on first use

	logOnce sync.Once
	logger  *slog.Logger
	logw    *logWriter // guarded by mu

	// pause, when set by tests, is called at named points of a write so a
	// test can run another writer exactly there.
	pause func(point string)
}

func (s *Store) callPause(point string) {
	if s.pause != nil {
		s.pause(point)
	}
}

// Open returns the store of the repository whose git common dir is
// commonDir. It touches nothing on disk: directories are created when
// first written to.
func Open(commonDir string, opts Options) (*Store, error) {
	if commonDir == "" {
		return nil, errors.New("open session store: empty git common dir")
	}
	abs, err := filepath.Abs(commonDir)
	if err != nil {
		return nil, fmt.Errorf("open session store in %s: %w", commonDir, err)
	}
	if opts.LockWait <= 0 {
		opts.LockWait = 2 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.LogMaxSize <= 0 {
		opts.LogMaxSize = 1 << 20
	}
	return &Store{dir: filepath.Join(abs, "tether"), opts: opts}, nil
}

// Dir is the store's directory, <commonDir>/tether.
func (s *Store) Dir() string { return s.dir }

// Close releases the store's open directory and log file. The Store must
// not be used afterwards.
func (s *Store) Close() error {
	s.mu.Lock()
	lw, root := s.logw, s.root
	s.root = nil
	s.mu.Unlock()
	var errs []error
	if lw != nil {
		// Not under s.mu: a log write holds the writer's lock and may need
		// s.mu to open the store.
		errs = append(errs, lw.close())
	}
	if root != nil {
		errs = append(errs, root.Close())
	}
	return errors.Join(errs...)
}

// openRoot opens the store directory, creating it (but not the common dir
// above it) when create is set. Without create, a missing store reports
// fs.ErrNotExist.
func (s *Store) openRoot(create bool) (*tree, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.root != nil {
		return s.root, nil
	}
	r, err := os.OpenRoot(s.dir)
	if err != nil && create && errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(s.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create session store: %w", err)
		}
		if err := syncPath(filepath.Dir(s.dir)); err != nil {
			return nil, fmt.Errorf("create session store: %w", err)
		}
		r, err = os.OpenRoot(s.dir)
	}
	if err != nil {
		return nil, fmt.Errorf("open session store: %w", err)
	}
	s.root = newTree(r)
	return s.root, nil
}

// where names the two homes of a session: sessions/ while it lives and
// ended/ once it has ended. locNone: no file.
type where int

const (
	locNone where = iota
	locLive
	locEnded
)

func (w where) dir() string {
	if w == locEnded {
		return "ended"
	}
	return "sessions"
}

func (w where) other() where {
	if w == locEnded {
		return locLive
	}
	return locEnded
}

func homeOf(p Phase) where {
	if p == PhaseEnded {
		return locEnded
	}
	return locLive
}

func statePath(w where, id string) string { return filepath.Join(w.dir(), id+".json") }
func tempPath(w where, id string) string  { return filepath.Join(w.dir(), id+".json.tmp") }
func logPath(w where, id string) string   { return filepath.Join(w.dir(), id+".turns.jsonl") }

// loaded is a session as found on disk. A crash while a session moves
// between sessions/ and ended/ can leave a state file in both; the newer
// one (by UpdatedAt, which Mutate keeps strictly increasing) is the truth.
type loaded struct {
	sess   *Session
	from   where     // home of sess
	has    [3]bool   // has[w]: a state file exists in w
	newest time.Time // latest UpdatedAt of all state files

	raw  []byte       // the state file of sess, as read
	tail []TurnRecord // turn records past its turn_log_size, folded into sess
	disk int64        // its turn_log_size as written, before the fold

	spool []string // the session's spooled events (not folded: see applySpool)

	wait     *waitRecord // its wait file as read (see waitfile.go), nil when none reads
	waitFile bool        // a wait file exists, readable or not
}

// load reads both homes of a session. With repair (only under the session
// lock), corrupt files are quarantined and treated as absent; otherwise
// they are an error.
func (s *Store) load(root *tree, id string, repair bool) (loaded, error) {
	var l loaded
	var quarantined error
	for _, w := range []where{locLive, locEnded} {
		sess, raw, err := s.readState(root, w, id)
		if err != nil {
			if !repair || !errors.Is(err, ErrCorrupt) {
				return loaded{}, err
			}
			if qerr := s.quarantine(root, statePath(w, id), id, err); qerr != nil {
				return loaded{}, qerr
			}
			quarantined = err
			continue
		}
		if sess == nil {
			continue
		}
		l.has[w] = true
		if sess.UpdatedAt.After(l.newest) {
			l.newest = sess.UpdatedAt
		}
		// Ties go to ended/, read last: never resurrect on a coin toss.
		if l.sess == nil || !sess.UpdatedAt.Before(l.sess.UpdatedAt) {
			l.sess, l.from, l.raw = sess, w, raw
		}
	}
	if repair && l.sess == nil {
		// No state file owns the session's turn logs, if any: they are a
		// quarantined state's, or a first write's that a kill cut short
		// before its state file existed. Appended to by a record created
		// afresh, they would number its turns twice.
		cause := errors.New("turn log with no state file: the session's first write was cut short")
		if quarantined != nil {
			cause = fmt.Errorf("turn log of the quarantined state file (%w)", quarantined)
		}
		if err := s.quarantineOrphanedLogs(root, id, cause); err != nil {
			return loaded{}, err
		}
	}
	if l.sess != nil {
		l.disk = l.sess.TurnLogSize
		l.tail = s.replayTurns(root, l.sess, locLive, locEnded)
		if l.from == locLive {
			l.wait, l.waitFile = readWait(root, id)
			overlayWait(l.sess, l.wait)
		}
	}
	spool, err := spooled(root, id)
	if err != nil {
		return loaded{}, err
	}
	l.spool = spool
	return l, nil
}

// folded is the session as a reader sees it: loaded, with its spooled
// events applied in memory; nil when there is none.
func (s *Store) folded(root *tree, l loaded, id string) *Session {
	sess := l.sess
	if sess == nil {
		if len(l.spool) == 0 || s.opts.Apply == nil {
			return nil
		}
		sess = &Session{Version: SchemaVersion, ID: id} // its first events are all spooled
	}
	if len(l.spool) == 0 || sess.Version > SchemaVersion {
		return sess
	}
	_, _ = s.applySpool(root, &Tx{Session: sess, Exists: l.sess != nil}, l.tail, l.spool, false)
	if l.sess == nil && sess.Phase == PhaseNone {
		return nil
	}
	return sess
}

// readState reads one state file, and returns it decoded and as read;
// nil, nil, nil when it does not exist.
func (s *Store) readState(root *tree, w where, id string) (*Session, []byte, error) {
	p := statePath(w, id)
	data, err := root.ReadFile(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("read %s: %w", p, err)
	}
	sess, err := decodeSession(data, id)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", p, err)
	}
	return sess, data, nil
}

// Load returns the session id, live or ended. It takes no lock and
// changes nothing: should a crash have left a state in both sessions/ and
// ended/, it returns the newer, and the next Mutate tidies up.
func (s *Store) Load(id string) (*Session, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	root, err := s.openRoot(false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("load session %s: %w", id, ErrNotFound)
		}
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	l, err := s.load(root, id, false)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	sess := s.folded(root, l, id)
	if sess == nil {
		return nil, fmt.Errorf("load session %s: %w", id, ErrNotFound)
	}
	return sess, nil
}

// Preview runs fn on session id as a reader sees it (Load), or on a fresh
// session as MutateTx would: what a write would do if it ran now, with
// nothing written and no lock taken. fn's turn records only change the
// session in memory.
func (s *Store) Preview(id string, fn func(*Tx) error) (*Session, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	var l loaded
	root, err := s.openRoot(false)
	switch {
	case err == nil:
		if l, err = s.load(root, id, false); err != nil {
			return nil, fmt.Errorf("preview session %s: %w", id, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("preview session %s: %w", id, err)
	}
	tx := &Tx{Exists: true}
	if root != nil {
		tx.Session = s.folded(root, l, id)
	}
	if tx.Session == nil {
		tx.Session, tx.Exists = &Session{Version: SchemaVersion, ID: id}, false
	}
	if err := fn(tx); err != nil && !errors.Is(err, ErrNoChange) {
		return nil, fmt.Errorf("preview session %s: %w", id, err)
	}
	return tx.Session, nil
}

// Tx is one locked read-modify-write of a session.
type Tx struct {
	// Session is the current state, to be modified in place. For a session
	// never stored, a fresh one: Version and ID set, Phase PhaseNone.
	Session *Session
	// Exists tells whether the session was on disk.
	Exists bool

	turns []byte       // encoded turn records, written at commit
	recs  []TurnRecord // the same, decoded
	clear []Mark       // marks to clear once committed (ClearMark)

	spooling string // the spooled event being applied, named in its records
}

// ClearMark has mark m of the session cleared once the transaction has
// committed (its state durable, or nothing to write), still under the
// session's lock; not if it fails. The sweep clears a session's
// to-condense mark in the write that records its turns condensed: a
// session that took turns since, under that lock, keeps it.
func (t *Tx) ClearMark(m Mark) { t.clear = append(t.clear, m) }

// finish clears the marks the committed transaction of w asked to clear,
// and the spooled events it applied.
func (s *Store) finish(root *tree, w *txWrite) error {
	for _, m := range w.tx.clear {
		if m == MarkCondense && w.tx.Session.HasPending() {
			// The write appended records the caller did not see when it
			// asked (spooled events applied before its callback): they
			// are still to condense.
			continue
		}
		if err := s.ClearMark(m, w.id); err != nil {
			return err
		}
	}
	return s.finishSpool(root, w.id, w.spool)
}

// Appends says whether the transaction appends turn records.
func (t *Tx) Appends() bool { return len(t.recs) > 0 }

// AppendTurn adds a record to the session's turn log and brings the
// session's turn fields up to it (see applyTurn). Records are written and
// fsynced when the transaction commits, still under the lock and before
// the state that counts them; if the callback fails or returns
// ErrNoChange they are dropped.
func (t *Tx) AppendTurn(rec TurnRecord) error {
	if rec.T == "" {
		return errors.New("append turn: record has no kind (t)")
	}
	if t.spooling != "" {
		rec.Spool = t.spooling
	}
	b, err := encodeTurn(rec)
	if err != nil {
		return fmt.Errorf("append turn %d: %w", rec.Turn, err)
	}
	t.turns = append(append(t.turns, b...), '\n')
	t.recs = append(t.recs, rec)
	applyTurn(t.Session, rec)
	return nil
}

// Mutate is MutateTx for callbacks that only change the session.
func (s *Store) Mutate(id string, fn func(*Session) error) (*Session, error) {
	return s.MutateTx(id, func(tx *Tx) error { return fn(tx.Session) })
}

// MutateTx runs fn on the current state of session id under its lock and
// stores the result: atomically, durably, with UpdatedAt set to now. A
// session whose phase becomes PhaseEnded moves to ended/ (state and turn
// log); one leaving PhaseEnded moves back. If fn returns ErrNoChange,
// nothing is written and the loaded session is returned; any other error
// aborts with nothing written. A session written by a newer tether is
// refused with ErrNewerVersion.
func (s *Store) MutateTx(id string, fn func(*Tx) error) (*Session, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	root, err := s.openRoot(true)
	if err != nil {
		return nil, fmt.Errorf("mutate session %s: %w", id, err)
	}
	lk, err := s.acquire(root, sessionLockPath(id), id)
	if err != nil {
		return nil, fmt.Errorf("mutate session %s: %w", id, err)
	}
	defer lk.release()
	w, err := s.begin(root, id, fn)
	if err == nil && w.write {
		s.commit(root, []*txWrite{w})
		err = w.err
	}
	if err == nil {
		err = s.finish(root, w)
	}
	if err != nil {
		return nil, fmt.Errorf("mutate session %s: %w", id, err)
	}
	return w.tx.Session, nil
}

// txWrite is one session's transaction on its way to disk.
type txWrite struct {
	id     string
	l      loaded
	tx     *Tx
	write  bool  // false: ErrNoChange, nothing to write
	logAt  where // where the turn log is now
	target where // where the state goes
	err    error // the first step that failed; the later ones skip it

	logSynced func() error // reports when appended turn records are durable

	spool spoolRun // the spooled events it applies
}

// begin loads session id (its lock held) and runs fn on it; the returned
// write is ready to commit when w.write is set.
func (s *Store) begin(root *tree, id string, fn func(*Tx) error) (*txWrite, error) {
	l, err := s.load(root, id, true)
	if err != nil {
		return nil, err
	}
	tx := &Tx{Session: l.sess, Exists: l.sess != nil}
	if l.sess == nil {
		tx.Session = &Session{Version: SchemaVersion, ID: id}
	} else if l.sess.Version > SchemaVersion {
		return nil, fmt.Errorf("schema version %d is newer than this tether's %d; upgrade tether: %w",
			l.sess.Version, SchemaVersion, ErrNewerVersion)
	}
	if tx.Session.Incarnation == "" {
		tx.Session.Incarnation = newIncarnation()
	}
	// The events spooled before this write come before it.
	run, err := s.applySpool(root, tx, l.tail, l.spool, true)
	if err != nil {
		return nil, err
	}
	w := &txWrite{id: id, l: l, tx: tx, spool: run}
	spooledChange := len(run.applied)+len(run.bad) > 0
	var keep []byte
	turns, recs := len(tx.turns), len(tx.recs)
	if spooledChange {
		tx.Exists = true
		if keep, err = encodeSession(tx.Session); err != nil {
			return nil, err
		}
	}
	if err := fn(tx); err != nil {
		if !errors.Is(err, ErrNoChange) {
			return nil, err
		}
		if spooledChange {
			// fn changes nothing; the spooled events are written all the same.
			back, err := decodeSession(keep, id)
			if err != nil {
				return nil, err
			}
			*tx.Session = *back
			tx.turns, tx.recs, w.write = tx.turns[:turns], tx.recs[:recs], true
		}
		return w, nil
	}
	if tx.Session == nil || tx.Session.ID != id {
		return nil, errors.New("the callback replaced the session or its id")
	}
	w.write = true
	return w, nil
}

// maxGroup bounds the sessions MutateEach holds locked and writes at once.
const maxGroup = 128

// MutateEach is MutateTx for many sessions at once, with the same
// promises for each, and the writes of up to maxGroup sessions grouped:
// their state files are written and fsynced together, and each directory
// they change is fsynced once, not once per session. The locks are taken
// in ID order, so two MutateEach calls never wait on each other in a
// cycle. It returns, in the order of ids, each session as stored (nil
// where it failed) and each one's error; a session that fails does not
// stop the others.
func (s *Store) MutateEach(ids []string, fn func(*Tx) error) ([]*Session, []error) {
	return s.MutateEachThen(ids, fn, nil)
}

// MutateEachThen is MutateEach with one more step in each group: once fn
// has run for each of its sessions, then (if not nil) runs with the
// transactions that will write, their locks still held, and may change
// them further before their one grouped write. The sweep uses it to
// condense the sessions it ends into the write that ends them. Whatever
// locks then takes must come before session locks in the caller's order
// (the checkpoints lock does: its holder takes session locks inside it).
func (s *Store) MutateEachThen(ids []string, fn func(*Tx) error, then func([]*Tx)) ([]*Session, []error) {
	out, errs := make([]*Session, len(ids)), make([]error, len(ids))
	fail := func(i int, err error) { errs[i] = fmt.Errorf("mutate session %s: %w", ids[i], err) }
	root, err := s.openRoot(true)
	if err != nil {
		for i := range ids {
			fail(i, err)
		}
		return out, errs
	}
	order := make([]int, 0, len(ids))
	seen := map[string]bool{}
	for i, id := range ids {
		switch err := ValidateID(id); {
		case err != nil:
			errs[i] = err
		case seen[id]:
			fail(i, errors.New("listed twice"))
		default:
			seen[id] = true
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(ids[a], ids[b]) })
	for len(order) > 0 {
		group := order[:min(len(order), maxGroup)]
		order = order[len(group):]
		var locks []*heldLock
		var ws []*txWrite
		at := map[*txWrite]int{}
		for _, i := range group {
			lk, err := s.acquire(root, sessionLockPath(ids[i]), ids[i])
			if err != nil {
				fail(i, err)
				continue
			}
			locks = append(locks, lk)
			w, err := s.begin(root, ids[i], fn)
			if err != nil {
				fail(i, err)
				continue
			}
			at[w] = i
			if w.write {
				ws = append(ws, w)
			} else if err := s.finish(root, w); err != nil {
				fail(i, err)
			} else {
				out[i] = w.tx.Session
			}
		}
		if then != nil && len(ws) > 0 {
			txs := make([]*Tx, len(ws))
			for k, w := range ws {
				txs[k] = w.tx
			}
			then(txs)
		}
		s.commit(root, ws)
		for _, w := range ws {
			if w.err == nil {
				w.err = s.finish(root, w)
			}
			if i := at[w]; w.err != nil {
				fail(i, w.err)
			} else {
				out[i] = w.tx.Session
			}
		}
		for _, lk := range locks {
			lk.release()
		}
	}
	return out, errs
}

// replayTurns folds into a session the turn records past its
// turn_log_size, and returns them. Turn events append to the log without
// rewriting the state (see commit), so this is how every reader sees the
// session as it is; it also counts the records of a writer that died
// between its append and its state. It costs one stat when the state is
// up to date. A session of a newer schema is left as written: its records
// may mean more than this build knows.
func (s *Store) replayTurns(root *tree, sess *Session, homes ...where) []TurnRecord {
	if sess.Version > SchemaVersion {
		return nil
	}
	size := int64(-1)
	for _, w := range homes {
		if fi, err := root.Stat(logPath(w, sess.ID)); err == nil {
			size = fi.Size()
			break
		}
	}
	if size <= sess.TurnLogSize {
		return nil
	}
	recs, next, err := s.ReadTurns(sess.ID, sess.TurnLogSize)
	if err != nil {
		return nil // an unreadable log is the reader's problem, not the writer's
	}
	for _, r := range recs {
		applyTurn(sess, r)
	}
	sess.TurnLogSize = next
	return recs
}

// maxTurnTail bounds how far a session's turn log runs past its state
// file before a turn event rewrites the state, so readers replay little.
const maxTurnTail = 4 << 10

// appendOnly reports whether appending a transaction's turn records is
// the whole write: the session stays in sessions/ with its log, the log
// stays within maxTurnTail of the state file, and the transaction changed
// nothing but what its records say. For the last, it rebuilds the session
// from the state file as read plus every record past it, and compares.
func appendOnly(id string, l loaded, tx *Tx, logAt where) bool {
	if !tx.Exists || len(tx.recs) == 0 || l.from != locLive || l.has[locEnded] || logAt != locLive ||
		homeOf(tx.Session.Phase) != locLive || tx.Session.TurnLogSize+int64(len(tx.turns))-l.disk > maxTurnTail {
		return false
	}
	want, err := decodeSession(l.raw, id)
	if err != nil {
		return false
	}
	for _, r := range append(slices.Clip(l.tail), tx.recs...) {
		applyTurn(want, r)
	}
	want.UpdatedAt, want.TurnLogSize = tx.Session.UpdatedAt, tx.Session.TurnLogSize
	a, err := encodeSession(want)
	if err != nil {
		return false
	}
	b, err := encodeSession(tx.Session.stored())
	return err == nil && bytes.Equal(a, b)
}

// waitOnly reports whether a transaction changed the session's wait
// (waitfile.go) and nothing else: its state file, the records after it and
// its spooled events say all the rest already, so the wait file is the
// whole write. A state file an older build wrote a wait into is rewritten.
func waitOnly(id string, l loaded, w *txWrite) bool {
	tx := w.tx
	if sameWait(waitOf(tx.Session), l.wait) {
		return false // the wait is as it was: whatever changed is in the state
	}
	if !tx.Exists || len(tx.recs) > 0 || len(w.spool.applied)+len(w.spool.bad) > 0 || l.from != locLive || l.has[locEnded] ||
		homeOf(tx.Session.Phase) != locLive {
		return false
	}
	want, err := decodeSession(l.raw, id)
	if err != nil || want.Phase == PhaseWaiting {
		return false
	}
	for _, r := range l.tail {
		applyTurn(want, r)
	}
	want.UpdatedAt, want.TurnLogSize = tx.Session.UpdatedAt, tx.Session.TurnLogSize
	a, err := encodeSession(want)
	if err != nil {
		return false
	}
	b, err := encodeSession(tx.Session.stored())
	return err == nil && bytes.Equal(a, b)
}

// commit writes transactions, their locks held. A turn event that
// changed nothing but what its records say is one fsynced append to the
// turn log: readers replay the records past the state's turn_log_size
// (replayTurns), and the state file is rewritten once the log runs
// maxTurnTail past it. Any other write goes, for every session in step:
// the to-condense mark of a session that ends, then its turn records, then
// its state in its home (the turn log moving along), then the state in the
// other home goes. Each step is durable before the next (each directory
// fsynced once for all the sessions that changed it), so a crash leaves
// each session with either the old state, or both with the new one newer
// (load picks it, the next commit finishes the move); the turn log is
// found in either home. A failure stops that session's write
// at the step that failed, and is recorded in its w.err.
func (s *Store) commit(root *tree, ws []*txWrite) {
	var grouped []*txWrite
	for _, w := range ws {
		sess := w.tx.Session
		sess.Version = SchemaVersion
		if w.logAt, w.err = s.findLog(root, w.id, w.l.from); w.err != nil {
			continue
		}
		w.target = homeOf(sess.Phase)
		if waitOnly(w.id, w.l, w) {
			w.err = s.putWait(root, w.id, waitOf(sess), w.l.wait, w.l.waitFile, true)
			continue
		}
		if appendOnly(w.id, w.l, w.tx, w.logAt) {
			size, wait, err := s.appendLog(root, logPath(w.logAt, w.id), w.tx.turns, false)
			if err == nil {
				err = wait()
			}
			if w.err = err; err == nil {
				sess.TurnLogSize = size
				w.err = s.putWait(root, w.id, waitOf(sess), w.l.wait, w.l.waitFile, true)
			}
			continue
		}
		now := s.opts.Now().UTC().Round(0)
		// Strictly newer than any file on disk, whatever the clock does, so a
		// half-finished move always resolves to this write.
		if !now.After(w.l.newest) {
			now = w.l.newest.Add(time.Nanosecond)
		}
		sess.UpdatedAt = now
		grouped = append(grouped, w)
	}
	// Ending: the to-do to condense is durable before the state that
	// ends, so a crash after finalizing never strands the turns. A write
	// that records the session condensed as it ends it leaves nothing to
	// do: no mark. Nor does one that leaves an ended session ended, unless
	// it appends records (spooled events revived it, and it ended again).
	s.eachThenSync(root, grouped, func(w *txWrite) (string, error) {
		if w.target != locEnded || !endsAnew(w) || slices.Contains(w.tx.clear, MarkCondense) {
			return "", nil
		}
		return string(MarkCondense), s.createMark(root, MarkCondense, w.id)
	})
	// The turn records are fsynced while the state is written (the temp
	// file is invisible until its rename), and durable before the rename
	// makes the state that counts them visible.
	for _, w := range grouped {
		w.logSynced = func() error { return nil }
		if w.err != nil || len(w.tx.turns) == 0 {
			continue
		}
		if w.logAt == locNone {
			w.logAt = w.target
		}
		size, wait, err := s.appendLog(root, logPath(w.logAt, w.id), w.tx.turns, true)
		if err != nil {
			w.err = err
			continue
		}
		w.logSynced, w.tx.Session.TurnLogSize = wait, size
	}
	s.writeTemps(root, grouped)
	// The turn log moves with the state, in the same directory fsync:
	// whichever of the two renames a crash keeps, the log is found in
	// either home, beside the old state or the new.
	s.eachThenSync(root, grouped, func(w *txWrite) (string, error) {
		if err := w.logSynced(); err != nil {
			return "", err
		}
		if w.logAt != locNone && w.logAt != w.target {
			if err := root.Rename(logPath(w.logAt, w.id), logPath(w.target, w.id)); err != nil {
				return "", fmt.Errorf("move turn log: %w", err)
			}
		}
		if err := root.Rename(tempPath(w.target, w.id), statePath(w.target, w.id)); err != nil {
			return "", fmt.Errorf("write state: %w", err)
		}
		return w.target.dir(), nil
	})
	s.eachThenSync(root, grouped, func(w *txWrite) (string, error) {
		other := w.target.other()
		if !w.l.has[other] {
			return "", nil
		}
		if err := root.Remove(statePath(other, w.id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("remove old state: %w", err)
		}
		return other.dir(), nil
	})
	// The wait goes with the state that holds it (an ended session's is
	// gone): no fsync, as every wait file.
	for _, w := range grouped {
		if w.err == nil {
			w.err = s.putWait(root, w.id, waitOf(w.tx.Session), w.l.wait, w.l.waitFile, w.target == locLive)
		}
	}
	// A live session, or a session ended just now (it is marked for
	// condensing), is work for a sweep. The flag goes after the write: a
	// sweep that cleared it before either saw this write or sees the flag.
	var flagged []*txWrite
	for _, w := range ws {
		if w.err == nil && (w.target == locLive || endsAnew(w)) {
			flagged = append(flagged, w)
		}
	}
	if len(flagged) > 0 {
		s.callPause("before-flag")
		if err := s.ensureActive(root); err != nil {
			for _, w := range flagged {
				w.err = err
			}
		}
	}
}

// endsAnew reports whether a write that ends its session leaves it with
// turns to condense that no mark stands for yet: it was not in ended/, or
// the write appends records to it.
func endsAnew(w *txWrite) bool { return !w.l.has[locEnded] || w.tx.Appends() }

// eachThenSync runs step for every write not failed yet, then fsyncs once
// each directory the steps named ("" for none): the step's changes are
// durable when it returns. A failed fsync fails the writes that needed it.
func (s *Store) eachThenSync(root *tree, ws []*txWrite, step func(*txWrite) (dir string, err error)) {
	needs := map[string][]*txWrite{}
	for _, w := range ws {
		if w.err != nil {
			continue
		}
		dir, err := step(w)
		if err != nil {
			w.err = err
			continue
		}
		if dir != "" {
			needs[dir] = append(needs[dir], w)
		}
	}
	for dir, waiting := range needs {
		if err := syncDir(root, dir); err != nil {
			for _, w := range waiting {
				w.err = err
			}
		}
	}
}

// maxParallelSync bounds the state files written and fsynced at once: the
// file system commits concurrent fsyncs together, in one journal commit.
const maxParallelSync = 16

// writeTemps writes the new state of each write into its temporary file
// and fsyncs it, several at once; one write needs no goroutine.
func (s *Store) writeTemps(root *tree, ws []*txWrite) {
	var todo []*txWrite
	for _, w := range ws {
		if w.err == nil {
			todo = append(todo, w)
		}
	}
	if len(todo) == 1 {
		s.writeTemp(root, todo[0])
		return
	}
	sem := make(chan struct{}, maxParallelSync)
	var wg sync.WaitGroup
	for _, w := range todo {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			s.writeTemp(root, w)
		})
	}
	wg.Wait()
}

// writeTemp writes and fsyncs the temporary file of one write's state.
// Even when it fails the turn records' wait is kept: it closes their file.
func (s *Store) writeTemp(root *tree, w *txWrite) {
	data, err := encodeSession(w.tx.Session.stored())
	if err != nil {
		w.err = errors.Join(fmt.Errorf("encode: %w", err), w.logSynced())
		return
	}
	tmp := tempPath(w.target, w.id)
	f, err := s.openFile(root, tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err == nil {
		_, err = f.Write(append(data, '\n'))
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		w.err = errors.Join(fmt.Errorf("write state %s: %w", tmp, err), w.logSynced())
	}
}

// findLog says where the turn log is. Normally beside the state; after a
// crash mid-move it may be in the other home. Should both exist (only by
// outside meddling), the one beside the current state wins and the other is
// quarantined rather than overwritten.
func (s *Store) findLog(root *tree, id string, prefer where) (where, error) {
	var found [3]bool
	for _, w := range []where{locLive, locEnded} {
		_, err := root.Stat(logPath(w, id))
		switch {
		case err == nil:
			found[w] = true
		case !errors.Is(err, fs.ErrNotExist):
			return locNone, fmt.Errorf("find turn log: %w", err)
		}
	}
	switch {
	case found[locLive] && found[locEnded]:
		if prefer == locNone {
			prefer = locLive
		}
		qerr := errors.New("a second turn log for the session")
		if err := s.quarantine(root, logPath(prefer.other(), id), id, qerr); err != nil {
			return locNone, err
		}
		return prefer, nil
	case found[locLive]:
		return locLive, nil
	case found[locEnded]:
		return locEnded, nil
	}
	return locNone, nil
}

// openFile opens a file in the store, creating its directory on ENOENT:
// directories cost nothing on the hot path once they exist.
func (s *Store) openFile(root *tree, name string, flag int) (*os.File, error) {
	f, err := root.OpenFile(name, flag, 0o600)
	if err != nil && flag&os.O_CREATE != 0 && errors.Is(err, fs.ErrNotExist) {
		if err := ensureDir(root, filepath.Dir(name)); err != nil {
			return nil, err
		}
		f, err = root.OpenFile(name, flag, 0o600)
	}
	return f, err
}

// ensureDir creates a directory of the store and any missing parent,
// durably.
func ensureDir(root *tree, dir string) error {
	err := root.Mkdir(dir, 0o700)
	if parent := filepath.Dir(dir); errors.Is(err, fs.ErrNotExist) && parent != "." {
		if err := ensureDir(root, parent); err != nil {
			return err
		}
		err = root.Mkdir(dir, 0o700)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return syncDir(root, filepath.Dir(dir))
}

// Warning is something a person should see in `status`: a quarantined
// file, or a WARN/ERROR line of the log.
type Warning struct {
	Time    time.Time
	Msg     string
	Session string // the session concerned, if any
}

// List returns the live sessions, sorted by ID. It reads sessions/ only,
// never ended/, so its cost does not grow with history. A corrupt file is
// quarantined and reported as a warning; the listing goes on.
func (s *Store) List() ([]*Session, []Warning, error) { return s.list(locLive, 0) }

// ListUpTo is List for a caller that must not pay for a large store (the
// hook): when sessions/ holds more than max files (a session has its state
// file and its turn log) it reads none of them and reports over. Its cost
// is bounded by max, whatever the number of sessions.
func (s *Store) ListUpTo(max int) (sessions []*Session, over bool, err error) {
	sessions, _, err = s.list(locLive, max)
	if errors.Is(err, errOverLimit) {
		return nil, true, nil
	}
	return sessions, false, err
}

// errOverLimit: a directory holds more files than a bounded list reads.
var errOverLimit = errors.New("more files than the limit")

// ListEnded returns the ended sessions, sorted by ID.
func (s *Store) ListEnded() ([]*Session, []Warning, error) { return s.list(locEnded, 0) }

// AnyEnded reports whether the store keeps any ended session, reading no
// more of ended/ than it takes to find one: status's empty table points to
// them without listing them all.
func (s *Store) AnyEnded() (bool, error) {
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look for ended sessions: %w", err)
	}
	d, err := root.Open(locEnded.dir())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look for ended sessions: %w", err)
	}
	defer d.Close()
	for {
		names, err := d.Readdirnames(64)
		for _, name := range names {
			if strings.HasSuffix(name, ".json") {
				return true, nil
			}
		}
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("look for ended sessions: %w", err)
		}
	}
}

// IDs lists the IDs of every session of the store, live and ended, from
// the names in sessions/ and ended/ alone (no file is read): what a listing
// abbreviates its IDs against, so that every abbreviation it shows names
// one session of the store.
func (s *Store) IDs() ([]string, error) {
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list session IDs: %w", err)
	}
	var ids []string
	for _, w := range []where{locLive, locEnded} {
		d, err := root.Open(w.dir())
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list session IDs: %w", err)
		}
		names, err := d.Readdirnames(-1)
		d.Close()
		if err != nil {
			return nil, fmt.Errorf("list session IDs: %w", err)
		}
		for _, name := range names {
			if id, ok := strings.CutSuffix(name, ".json"); ok && ValidateID(id) == nil {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// list lists the sessions of home w; with limit > 0, only if w holds at
// most limit files (else errOverLimit).
func (s *Store) list(w where, limit int) ([]*Session, []Warning, error) {
	root, err := s.openRoot(false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("list %s: %w", w.dir(), err)
	}
	n := -1
	if limit > 0 {
		n = limit + 1
	}
	var names []string
	d, err := root.Open(w.dir())
	switch {
	case err == nil:
		names, err = d.Readdirnames(n)
		d.Close()
		if err != nil && !(n > 0 && errors.Is(err, io.EOF)) {
			return nil, nil, fmt.Errorf("list %s: %w", w.dir(), err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, nil, fmt.Errorf("list %s: %w", w.dir(), err)
	}
	if limit > 0 && len(names) > limit {
		return nil, nil, errOverLimit
	}
	slices.Sort(names)
	// Sessions with spooled events are seen as they will be once applied:
	// they may even have moved to this home, or out of it.
	withSpool, err := spoolIDs(root)
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", w.dir(), err)
	}
	if limit > 0 && len(names)+len(withSpool) > limit {
		return nil, nil, errOverLimit
	}
	spool := map[string]bool{}
	for _, id := range withSpool {
		spool[id] = true
	}
	var (
		out   []*Session
		warns []Warning
	)
	for _, id := range withSpool {
		if slices.Contains(names, id+".json") {
			continue // listed below
		}
		if l, err := s.load(root, id, false); err == nil {
			if sess := s.folded(root, l, id); sess != nil && homeOf(sess.Phase) == w {
				out = append(out, sess)
			}
		}
	}
	for _, name := range names {
		id, ok := strings.CutSuffix(name, ".json")
		if !ok {
			continue // turn logs, temp files
		}
		rel := filepath.Join(w.dir(), name)
		if err := ValidateID(id); err != nil {
			// No session can own this name, so no lock is needed to move it.
			msg := fmt.Sprintf("quarantined %s: %v", rel, err)
			if qerr := s.quarantine(root, rel, "", err); qerr != nil {
				msg = fmt.Sprintf("%s: bad name, could not be quarantined: %v", rel, qerr)
			}
			warns = append(warns, Warning{Time: s.opts.Now(), Msg: msg})
			continue
		}
		sess, _, err := s.readState(root, w, id)
		if err == nil && sess != nil && spool[id] {
			// Read as Load reads it, spooled events and all.
			l, lerr := s.load(root, id, false)
			if sess = nil; lerr == nil {
				sess = s.folded(root, l, id)
			}
			if sess != nil && homeOf(sess.Phase) == w {
				out = append(out, sess)
			}
			continue
		}
		if err == nil && sess != nil {
			if s.inOtherHome(root, w, sess) {
				continue
			}
			if w == locLive {
				s.replayTurns(root, sess, locLive) // a live session's log is beside it: List reads none in ended/
				rec, _ := readWait(root, id)
				overlayWait(sess, rec)
			}
			out = append(out, sess)
			continue
		}
		if err == nil {
			continue // gone since the directory was read (moved or removed)
		}
		if !errors.Is(err, ErrCorrupt) {
			return nil, nil, fmt.Errorf("list %s: %w", w.dir(), err)
		}
		sess, warn := s.quarantineListed(root, w, id, err)
		if sess != nil {
			out = append(out, sess)
		}
		if warn != nil {
			warns = append(warns, *warn)
		}
	}
	slices.SortFunc(out, func(a, b *Session) int { return strings.Compare(a.ID, b.ID) })
	return out, warns, nil
}

// inOtherHome reports whether a listed session really lives in the other
// home: a writer moving it between sessions/ and ended/ crashed after the
// new copy and before removing the old. The newer copy is the truth; the
// move is finished here, under the lock, so the leftover goes away. It costs
// List one stat per session.
func (s *Store) inOtherHome(root *tree, w where, sess *Session) bool {
	if _, err := root.Lstat(statePath(w.other(), sess.ID)); err != nil {
		return false
	}
	other, _, err := s.readState(root, w.other(), sess.ID)
	if err != nil || other == nil {
		return false
	}
	_, _ = s.MutateTx(sess.ID, func(tx *Tx) error {
		if !tx.Exists {
			return ErrNoChange
		}
		return nil // rewriting the newer copy in its home removes the other
	})
	return other.UpdatedAt.After(sess.UpdatedAt)
}

// quarantineListed deals with a corrupt file met by List. Under the lock it
// reads the file again (a writer may have just replaced it) and quarantines
// it if it is still corrupt.
func (s *Store) quarantineListed(root *tree, w where, id string, cause error) (*Session, *Warning) {
	rel := statePath(w, id)
	lk, err := s.acquire(root, sessionLockPath(id), id)
	if err != nil {
		wr := s.warn(id, fmt.Sprintf("corrupt %s left in place: %v (%v)", rel, cause, err))
		return nil, &wr
	}
	defer lk.release()
	sess, _, err := s.readState(root, w, id)
	switch {
	case err == nil:
		return sess, nil
	case !errors.Is(err, ErrCorrupt):
		wr := s.warn(id, fmt.Sprintf("%s unreadable: %v", rel, err))
		return nil, &wr
	}
	if qerr := s.quarantine(root, rel, id, err); qerr != nil {
		wr := s.warn(id, fmt.Sprintf("corrupt %s could not be quarantined: %v", rel, qerr))
		return nil, &wr
	}
	if qerr := s.quarantineOrphanedLogs(root, id, fmt.Errorf("turn log of the quarantined state file (%w)", err)); qerr != nil {
		wr := s.warn(id, fmt.Sprintf("quarantined %s, but not its turn log: %v", rel, qerr))
		return nil, &wr
	}
	wr := Warning{Time: s.opts.Now(), Session: id, Msg: fmt.Sprintf("quarantined %s: %v", rel, err)}
	return nil, &wr
}

// quarantineOrphanedLogs moves the session's turn logs to quarantine, with
// cause as the reason, once no state file is left to own them: replayed
// into a record created afresh for the same ID, they would show turns that
// never happened in it. Under the session lock.
func (s *Store) quarantineOrphanedLogs(root *tree, id string, cause error) error {
	for _, w := range []where{locLive, locEnded} {
		if _, err := root.Lstat(statePath(w, id)); err == nil {
			return nil // the other home still holds the session
		}
	}
	for _, w := range []where{locLive, locEnded} {
		p := logPath(w, id)
		if _, err := root.Lstat(p); err != nil {
			continue
		}
		if err := s.quarantine(root, p, id, cause); err != nil {
			return err
		}
	}
	// A wait is worth nothing without its state: it goes.
	if err := root.Remove(waitPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// warn records a warning in the log and returns it.
func (s *Store) warn(id, msg string) Warning {
	s.Logger().Warn(msg, LogKeySession, id)
	return Warning{Time: s.opts.Now(), Msg: msg, Session: id}
}

// quarantine moves a bad file to quarantine/ with a .reason file beside it
// (time, original path, error). Nothing is ever deleted.
func (s *Store) quarantine(root *tree, rel, id string, cause error) error {
	now := s.opts.Now()
	name := strings.ReplaceAll(filepath.ToSlash(rel), "/", "-") + "." + now.UTC().Format("20060102T150405.000000000Z")
	dst := filepath.Join("quarantine", name)
	if err := ensureDirOnce(root, "quarantine"); err != nil {
		return fmt.Errorf("quarantine %s: %w", rel, err)
	}
	if err := root.Rename(rel, dst); err != nil {
		return fmt.Errorf("quarantine %s: %w", rel, err)
	}
	reason := fmt.Sprintf("time: %s\nfile: %s\nerror: %v\n", now.Format(time.RFC3339Nano), filepath.ToSlash(rel), cause)
	if err := root.WriteFile(dst+".reason", []byte(reason), 0o600); err != nil {
		return fmt.Errorf("quarantine %s: %w", rel, err)
	}
	if err := syncDir(root, "quarantine"); err != nil {
		return err
	}
	if err := syncDir(root, filepath.Dir(rel)); err != nil {
		return err
	}
	s.Logger().Warn("quarantined corrupt file", LogKeySession, id, "file", filepath.ToSlash(rel), "to", filepath.ToSlash(dst), LogKeyError, cause.Error())
	return nil
}

// ensureDirOnce creates dir if it is missing (a Stat first: quarantine and
// log are rare, so the extra call costs nothing).
func ensureDirOnce(root *tree, dir string) error {
	if _, err := root.Stat(dir); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return ensureDir(root, dir)
}

// Remove deletes an ended session: its turn log, its state, and its lock
// file (for `clean`). A session that has not ended is refused.
func (s *Store) Remove(id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	root, err := s.openRoot(false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove session %s: %w", id, ErrNotFound)
		}
		return fmt.Errorf("remove session %s: %w", id, err)
	}
	lk, err := s.acquire(root, sessionLockPath(id), id)
	if err != nil {
		return fmt.Errorf("remove session %s: %w", id, err)
	}
	defer lk.release()
	l, err := s.load(root, id, true)
	if err != nil {
		return fmt.Errorf("remove session %s: %w", id, err)
	}
	if l.sess == nil {
		return fmt.Errorf("remove session %s: %w", id, ErrNotFound)
	}
	if l.sess.Phase != PhaseEnded {
		return fmt.Errorf("remove session %s: it has not ended (phase %q)", id, l.sess.Phase)
	}
	if pending := pendingSpool(l); len(pending) > 0 {
		return fmt.Errorf("remove session %s: %d event(s) of it wait in the spool, for its next write", id, len(pending))
	}
	// What is left of the spool is applied: its files go first.
	if err := s.finishSpool(root, id, spoolRun{done: l.spool}); err != nil {
		return fmt.Errorf("remove session %s: %w", id, err)
	}
	// The log first: a crash part-way leaves an ended state without a log,
	// which reads as a session with no turns, never a log without owner.
	if err := root.Remove(waitPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove session %s: %w", id, err)
	}
	for _, w := range []where{locLive, locEnded} {
		for _, p := range []string{logPath(w, id), tempPath(w, id), statePath(w, id)} {
			if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove session %s: %w", id, err)
			}
		}
		if err := syncDir(root, w.dir()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove session %s: %w", id, err)
		}
	}
	lk.remove()
	return nil
}
