package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/term"

	"github.com/tetherdev/tether/agent"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
	"github.com/tetherdev/tether/sweep"
)

// settle is how long status --watch lets a burst of file events settle
// before it looks: a state write is a temporary file, its rename and the
// turn log's append, and one look for them all is enough.
const settle = 25 * time.Millisecond

// livenessEvery is how often status --watch checks the owners of the
// sessions it shows: an agent killed with -9 changes no file, so the
// watch asks the kernel, as the sweep does, and sweeps when one is gone.
const livenessEvery = time.Second

// watching is one run of status --watch.
type watching struct {
	a   *app
	o   statusOpts
	fw  *fsnotify.Watcher
	ws  []*workspace
	out watchOutput

	dirs        map[string]bool   // watched: stores and their session homes, the registry
	transcripts map[string]string // watched transcript → its session, while a turn runs
	rows        map[string]sweep.Row
	last        listing
	notes       []string // stores dropped from the registry, shown once
	width       int
}

// watchStatus is status --watch: the listing, then what changes, as files
// change (file-system notifications: fsnotify), until q, Ctrl-C or a
// signal. Unless --no-sweep it sweeps at its start, when an owner is seen
// gone (checked each livenessEvery) and when a running turn's transcript
// says it was cancelled.
func (a *app) watchStatus(o statusOpts) error {
	ws, notes, err := a.statusWorkspaces(o.allRepos)
	if err != nil {
		return err
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch the store: %w", err)
	}
	defer fw.Close()
	w := &watching{a: a, o: o, fw: fw, ws: ws, notes: notes,
		dirs: map[string]bool{}, transcripts: map[string]string{}, rows: map[string]sweep.Row{}}
	w.out, err = a.newWatchOutput(o)
	if err != nil {
		return err
	}
	defer w.out.close()
	quit := w.out.quit()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)

	w.watchStores()
	if err := w.look(!o.noSweep); err != nil {
		return err
	}
	tick := time.NewTicker(livenessEvery)
	defer tick.Stop()
	var pending <-chan time.Time // a look, once the events settle
	for {
		select {
		case <-quit:
			return nil
		case <-signals:
			return nil
		case err := <-fw.Errors:
			return fmt.Errorf("watch the store: %w", err)
		case ev := <-fw.Events:
			if id, ok := w.transcripts[ev.Name]; ok {
				if err := w.transcriptChanged(id); err != nil {
					return err
				}
				continue
			}
			if pending == nil {
				pending = time.After(settle)
			}
		case <-pending:
			pending = nil
			if err := w.look(false); err != nil {
				return err
			}
		case <-tick.C:
			if err := w.checkOwners(); err != nil {
				return err
			}
		}
	}
}

// watchStores watches what holds the listing: each store's session homes
// and the store itself (where they are created), the git dir of a
// repository without a store yet, and with --all-repos the registry.
// What does not exist yet is watched from its parent.
func (w *watching) watchStores() {
	var dirs []string
	for _, ws := range w.ws {
		store := ws.store.Dir()
		dirs = append(dirs, filepath.Dir(store), store, filepath.Join(store, "sessions"), filepath.Join(store, "ended"))
	}
	if reg := w.a.registry(); w.o.allRepos && reg != "" {
		dirs = append(dirs, filepath.Dir(reg), reg)
	}
	for _, d := range dirs {
		if w.dirs[d] {
			continue
		}
		if err := w.fw.Add(d); err == nil {
			w.dirs[d] = true
		}
	}
}

// look lists the sessions again (sweeping first with sweep) and shows
// what changed since the last look.
func (w *watching) look(sweepFirst bool) error {
	if w.o.allRepos {
		// A store registered since, or a repository gone.
		ws, dropped := w.a.registeredStores(nil)
		if cur, err := w.a.open(); err == nil {
			if _, serr := os.Stat(cur.store.Dir()); serr == nil && !containsStore(ws, cur) {
				ws = append([]*workspace{cur}, ws...)
			}
		}
		w.ws, w.notes = ws, append(w.notes, dropped...)
	}
	w.watchStores() // what appeared since: a store, its session homes
	o := w.o
	o.noSweep = !sweepFirst
	l, err := w.a.gather(w.ws, o)
	if err != nil {
		return err
	}
	l.Warnings = append(w.notes, l.Warnings...)
	w.notes = nil
	changes := rowChanges(w.rows, l.Sessions, w.final)
	w.rows = map[string]sweep.Row{}
	for _, r := range l.Sessions {
		w.rows[r.ID] = r
	}
	w.last = l
	w.watchTranscripts()
	return w.out.show(w, l, changes)
}

// final is how a session no longer listed is stored now, as a row.
func (w *watching) final(id string) (sweep.Row, bool) {
	ls, ok := w.last.live[id]
	if !ok {
		return sweep.Row{}, false
	}
	s, err := ls.w.store.Load(id)
	if err != nil {
		return sweep.Row{}, false
	}
	r := sweep.MakeRow(s, state.OwnerVerdict(s))
	if w.o.allRepos {
		r.Repo = repoPath(ls.w.repo.CommonDir)
	}
	return r, true
}

// watchTranscripts watches the transcripts of the sessions whose turn
// runs: an agent that fires no hook when its user cancels a turn or
// denies a tool (Claude Code, Gemini CLI, Copilot CLI) writes it there.
func (w *watching) watchTranscripts() {
	want := map[string]string{}
	for id, ls := range w.last.live {
		if !ls.TurnRunning() || ls.TranscriptPath == "" {
			continue
		}
		if _, ok := agent.TranscriptInRoot(ls.TranscriptRoot, ls.TranscriptPath); ok {
			want[ls.TranscriptPath] = id
		}
	}
	for path := range w.transcripts {
		if _, ok := want[path]; !ok {
			_ = w.fw.Remove(path)
			delete(w.transcripts, path)
		}
	}
	for path, id := range want {
		if _, ok := w.transcripts[path]; ok {
			continue
		}
		if err := w.fw.Add(path); err == nil {
			w.transcripts[path] = id
		}
	}
}

// transcriptChanged sweeps the store of session id when its running turn
// is over by what its agent wrote (and the sweep records that).
func (w *watching) transcriptChanged(id string) error {
	ls, ok := w.last.live[id]
	if !ok || w.o.noSweep || !agent.TurnCancelled(ls.Agent, ls.TranscriptRoot, ls.TranscriptPath, ls.TurnTranscriptFrom) {
		return nil
	}
	return w.look(true)
}

// checkOwners looks at the owners of the sessions shown: one gone is a
// sweep (with --no-sweep, only a look, for its liveness). A terminal
// resized is a redraw.
func (w *watching) checkOwners() error {
	for _, ls := range w.last.live {
		if ls.Owner != nil && proclive.Check(*ls.Owner).Liveness == proclive.Dead {
			return w.look(!w.o.noSweep)
		}
	}
	if width := w.a.terminal().width; width != w.width {
		w.width = width
		return w.out.show(w, w.last, nil)
	}
	return nil
}

func containsStore(ws []*workspace, w *workspace) bool {
	for _, o := range ws {
		if sameDir(o.repo.CommonDir, w.repo.CommonDir) {
			return true
		}
	}
	return false
}

// watchOutput is where status --watch shows what it sees.
type watchOutput interface {
	// show shows a look: the listing, and what changed since the last.
	show(w *watching, l listing, changes []watchChange) error
	// quit is closed when the person watching asks to stop (q, Ctrl-C).
	quit() <-chan struct{}
	close()
}

// newWatchOutput: JSON lines with --json; on a terminal the table redrawn
// in place on the alternate screen, keys read raw; else the table again
// after each change.
func (a *app) newWatchOutput(o statusOpts) (watchOutput, error) {
	if o.asJSON {
		return &jsonWatch{out: a.stdout}, nil
	}
	f, isFile := a.stdout.(*os.File)
	in, inFile := a.stdin.(*os.File)
	if !isFile || !term.IsTerminal(int(f.Fd())) || !inFile || !term.IsTerminal(int(in.Fd())) {
		return &plainWatch{out: a.stdout}, nil
	}
	old, err := term.MakeRaw(int(in.Fd()))
	if err != nil {
		return nil, fmt.Errorf("watch: put the terminal in raw mode: %w", err)
	}
	t := &ttyWatch{out: f, in: in, old: old, keys: make(chan struct{})}
	fmt.Fprint(f, "\x1b[?1049h\x1b[?25l") // the alternate screen, no cursor
	go t.readKeys()
	return t, nil
}

// jsonWatch prints one JSON object per change and line: at the start one
// per session listed ("new"), then one per change.
type jsonWatch struct{ out io.Writer }

func (j *jsonWatch) show(_ *watching, _ listing, changes []watchChange) error {
	for _, c := range changes {
		if err := writeJSONLine(j.out, c); err != nil {
			return err
		}
	}
	return nil
}

// writeJSONLine writes v as one line of JSON, & and < as they are.
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func (j *jsonWatch) quit() <-chan struct{} { return nil }
func (j *jsonWatch) close()                {}

// plainWatch prints the table at the start, then again whenever a
// session changed, under a line with the time: for a pipe or a log.
type plainWatch struct {
	out     io.Writer
	printed bool
}

func (p *plainWatch) show(w *watching, l listing, changes []watchChange) error {
	if p.printed && len(changes) == 0 {
		return nil
	}
	p.printed = true
	fmt.Fprintf(p.out, "-- %s\n", time.Now().Format("15:04:05"))
	return w.a.printListing(p.out, w.ws, l, w.o, time.Now())
}

func (p *plainWatch) quit() <-chan struct{} { return nil }
func (p *plainWatch) close()                {}

// ttyWatch redraws the table in place on the terminal's alternate screen,
// and reads keys raw: q or Ctrl-C quits. close puts the terminal back.
type ttyWatch struct {
	out  *os.File
	in   *os.File
	old  *term.State
	keys chan struct{}
}

func (t *ttyWatch) show(w *watching, l listing, _ []watchChange) error {
	var b bytes.Buffer
	if err := w.a.printListing(&b, w.ws, l, w.o, time.Now()); err != nil {
		return err
	}
	what := "this repository"
	if w.o.allRepos {
		what = count(len(w.ws), "repository", "repositories")
	}
	fmt.Fprintf(&b, "\nwatching %s · q quits", what)
	// Raw mode: a newline moves down only; each line starts at the left.
	text := strings.ReplaceAll(b.String(), "\n", "\x1b[K\r\n")
	_, err := fmt.Fprint(t.out, "\x1b[H"+text+"\x1b[K\x1b[J")
	return err
}

func (t *ttyWatch) quit() <-chan struct{} { return t.keys }

// readKeys closes keys at q, Q, Ctrl-C or Ctrl-D (raw mode turns Ctrl-C
// into a byte, not a signal), or when the terminal is gone.
func (t *ttyWatch) readKeys() {
	buf := make([]byte, 16)
	for {
		n, err := t.in.Read(buf)
		if bytes.ContainsAny(buf[:n], "qQ\x03\x04") || err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			close(t.keys)
			return
		}
	}
}

func (t *ttyWatch) close() {
	fmt.Fprint(t.out, "\x1b[?25h\x1b[?1049l") // the cursor and the screen as they were
	_ = term.Restore(int(t.in.Fd()), t.old)
}
