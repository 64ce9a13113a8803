package state

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestTighten(t *testing.T) {
	for _, c := range []struct {
		perm  fs.FileMode
		want  fs.FileMode
		loose bool
	}{
		{0o600, 0o600, false},
		{0o700, 0o700, false},
		{0o400, 0o400, false}, // tighter than the store's: left alone
		{0o500, 0o500, false},
		{0o644, 0o600, true},
		{0o666, 0o600, true},
		{0o755, 0o700, true}, // the owner's bits are not ours to take
		{0o777, 0o700, true},
		{0o711, 0o700, true},
		{0o060, 0o000, true},
		{0o001, 0o000, true},
		{fs.ModeDir | 0o750, 0o700, true}, // type bits are ignored
	} {
		got, loose := tighten(c.perm)
		if got != c.want || loose != c.loose {
			t.Errorf("tighten(%o) = %o, %v; want %o, %v", c.perm, got, loose, c.want, c.loose)
		}
	}
}

func TestLooseModesAndFix(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("mode bits do not govern access on Windows")
	}
	s, dir := newStore(t, Options{})
	if got, err := s.LooseModes(); err != nil || len(got) != 0 {
		t.Fatalf("LooseModes of a store never written = %v, %v", got, err)
	}
	mustMutate(t, s, "s1", func(tx *Tx) error {
		tx.Session.Phase = PhaseIdle
		return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 1, At: time.Now()})
	})
	// A capture's git writes its index and the index's lock as the umask
	// says while it runs (the capture then makes the index private): not a
	// finding, in the private snapshots directory.
	if err := os.MkdirAll(filepath.Join(dir, "snapshots"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"snapshot-0123.index", "snapshot-0123.index.lock"} {
		writeRaw(t, filepath.Join(dir, "snapshots", name), "DIRC")
		if err := os.Chmod(filepath.Join(dir, "snapshots", name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.LooseModes(); err != nil || len(got) != 0 {
		t.Fatalf("LooseModes of a store as written = %v, %v", got, err)
	}
	chmod := func(rel string, mode fs.FileMode) {
		t.Helper()
		if err := os.Chmod(filepath.Join(dir, rel), mode); err != nil {
			t.Fatal(err)
		}
	}
	chmod(".", 0o755)
	chmod("sessions", 0o770)
	chmod("sessions/s1.json", 0o644)
	// A symlink is never followed nor changed.
	outside := filepath.Join(t.TempDir(), "outside")
	writeRaw(t, outside, "x")
	if err := os.Chmod(outside, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "sessions", "link")); err != nil {
		t.Fatal(err)
	}

	got, err := s.LooseModes()
	if err != nil {
		t.Fatal(err)
	}
	want := []LooseMode{
		{Path: ".", Dir: true, Mode: 0o755, Want: 0o700},
		{Path: "sessions", Dir: true, Mode: 0o770, Want: 0o700},
		{Path: "sessions/s1.json", Mode: 0o644, Want: 0o600},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("LooseModes = %+v\nwant %+v", got, want)
	}
	for _, m := range got {
		if err := s.FixMode(m); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.LooseModes(); err != nil || len(got) != 0 {
		t.Fatalf("LooseModes after FixMode = %v, %v", got, err)
	}
	for rel, mode := range map[string]fs.FileMode{".": 0o700, "sessions": 0o700, "sessions/s1.json": 0o600} {
		if fi, err := os.Stat(filepath.Join(dir, rel)); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, %v; want %o", rel, fi.Mode().Perm(), err, mode)
		}
	}
	if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the symlink's target changed: %v, %v", fi.Mode().Perm(), err)
	}

	// An entry that changed kind since it was found is refused.
	if err := s.FixMode(LooseMode{Path: "sessions/link", Mode: 0o644, Want: 0o600}); err == nil {
		t.Error("FixMode through a symlink succeeded")
	}
}

func TestQuarantined(t *testing.T) {
	c := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s, dir := newStore(t, Options{Now: c.now})
	if got, err := s.Quarantined(); err != nil || len(got) != 0 {
		t.Fatalf("Quarantined of an empty store = %v, %v", got, err)
	}
	mustMutate(t, s, "good", func(tx *Tx) error { tx.Session.Phase = PhaseIdle; return nil })
	writeRaw(t, filepath.Join(dir, "sessions", "bad.json"), "{not json")
	if _, _, err := s.List(); err != nil {
		t.Fatal(err)
	}
	// A crash between the move and its note leaves a file without reason.
	writeRaw(t, filepath.Join(dir, "quarantine", "sessions-lost.json.20260101T000000.000000000Z"), "?")

	got, err := s.Quarantined()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("Quarantined = %+v; want 2 files", got)
	}
	bad, lost := got[0], got[1]
	if !strings.HasPrefix(bad.Name, "sessions-bad.json.") || bad.File != "sessions/bad.json" ||
		!bad.At.Equal(c.t) || bad.Reason == "" {
		t.Errorf("quarantined bad.json = %+v", bad)
	}
	if lost.Name != "sessions-lost.json.20260101T000000.000000000Z" || lost.File != "" || !lost.At.IsZero() || lost.Reason != "" {
		t.Errorf("quarantined file without reason = %+v", lost)
	}
	if s.QuarantineDir() != filepath.Join(dir, "quarantine") {
		t.Errorf("QuarantineDir = %s", s.QuarantineDir())
	}
	// Listing deletes nothing.
	if names, _ := os.ReadDir(s.QuarantineDir()); len(names) != 3 {
		t.Errorf("quarantine holds %d files after listing; want 3", len(names))
	}
}

func TestParseReason(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 5, time.UTC)
	for _, c := range []struct {
		in     string
		file   string
		at     time.Time
		reason string
	}{
		{"time: 2026-03-01T12:00:00.000000005Z\nfile: sessions/x.json\nerror: bad json\n", "sessions/x.json", at, "bad json"},
		{"time: 2026-03-01T12:00:00.000000005Z\nfile: a\nerror: line one\nline two: more\n", "a", at, "line one\nline two: more"},
		{"file: a\n", "a", time.Time{}, ""},
		{"time: yesterday\nerror: x", "", time.Time{}, "x"},
		{"garbage\nfile: b\nother: y\nerror: z\n", "b", time.Time{}, "z"},
		{"", "", time.Time{}, ""},
	} {
		file, gotAt, reason := parseReason([]byte(c.in))
		if file != c.file || !gotAt.Equal(c.at) || reason != c.reason {
			t.Errorf("parseReason(%q) = %q, %v, %q; want %q, %v, %q", c.in, file, gotAt, reason, c.file, c.at, c.reason)
		}
	}
}

// FuzzParseReason: any note parses without failing, and a note in the
// format quarantine writes gives back its file and error.
func FuzzParseReason(f *testing.F) {
	f.Add([]byte("time: 2026-03-01T12:00:00Z\nfile: sessions/x.json\nerror: bad\n"), "ended/y.json", "unexpected end of JSON input")
	f.Add([]byte("error: \n\n"), "", "a\nb")
	f.Add([]byte{0xff, ':', ' ', '\n'}, "f: g", "error: x")
	f.Fuzz(func(t *testing.T, note []byte, file, cause string) {
		parseReason(note)
		if strings.ContainsAny(file, "\n") || strings.HasPrefix(file, " ") {
			return
		}
		written := "time: 2026-03-01T12:00:00.5Z\nfile: " + file + "\nerror: " + cause + "\n"
		gotFile, at, reason := parseReason([]byte(written))
		if gotFile != file || reason != strings.TrimSpace(cause) || at.IsZero() {
			t.Fatalf("parseReason(%q) = %q, %v, %q", written, gotFile, at, reason)
		}
	})
}

// deadPID is the pid of a real process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// holdLock starts a child process holding a lock ("hold": the named lock;
// "hold-session": the session's) until stop is called or it is killed.
func holdLock(t *testing.T, mode, common, name string) (*exec.Cmd, io.Closer) {
	t.Helper()
	holder := child(t, mode, common, name)
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); holder.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("holder said %q, %v", line, err)
	}
	return holder, stdin
}

func TestLeftovers(t *testing.T) {
	s, dir := newStore(t, Options{LockWait: time.Second})
	common := filepath.Dir(dir)
	now := time.Now()
	const minAge = 10 * time.Minute
	old := now.Add(-time.Hour)
	plant := func(rel, content string, mtime time.Time) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		writeRaw(t, p, content)
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.Leftovers(now, minAge); err != nil || len(got) != 0 {
		t.Fatalf("Leftovers of a store never written = %v, %v", got, err)
	}
	mustMutate(t, s, "live", func(tx *Tx) error { tx.Session.Phase = PhaseIdle; return nil })
	mustMutate(t, s, "done", func(tx *Tx) error { tx.Session.Phase = PhaseEnded; return nil })
	dead := strconv.Itoa(deadPID(t)) + " 2026-01-01T00:00:00Z tether-hook\n"

	plant("sessions/live.json.tmp", "{", old)                         // crashed write: leftover
	plant("ended/done.json.tmp", "{", old)                            // crashed write: leftover
	plant("sessions/fresh.json.tmp", "{", now)                        // may be mid-write: not yet
	plant("tmp/redacted-slice-123", "secret", old)                    // crashed staging: leftover
	plant("locks/gone.lock", dead, old)                               // no session, holder dead: leftover
	plant("locks/anon.lock", "", old)                                 // no holder recorded: leftover
	plant("locks/live.lock", dead, old)                               // its session lives: kept
	plant("locks/done.lock", dead, old)                               // its session ended but exists: kept
	plant("locks/checkpoints.lock", dead, old)                        // no session: leftover
	plant("locks/store/checkpoints.lock", dead, old)                  // a named lock: kept
	plant("locks/mine.lock", strconv.Itoa(os.Getpid())+" x y\n", old) // holder still runs: kept
	plant("locks/new.lock", dead, now)                                // too recent: kept
	plant("sessions/live.turns.jsonl", "", old)                       // a record, never a leftover
	_, stopHeld := holdLock(t, "hold-session", common, "held")        // held right now: kept
	held := filepath.Join(dir, "locks", "held.lock")
	if err := os.Chtimes(held, old, old); err != nil {
		t.Fatal(err)
	}

	got, err := s.Leftovers(now, minAge)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, l := range got {
		paths = append(paths, l.Path+" "+string(l.Kind))
		if l.Why == "" || !l.ModTime.Equal(old) {
			t.Errorf("leftover %+v: want a reason and mtime %v", l, old)
		}
	}
	want := []string{
		"sessions/live.json.tmp temp",
		"ended/done.json.tmp temp",
		"tmp/redacted-slice-123 temp",
		"locks/anon.lock lock",
		"locks/checkpoints.lock lock",
		"locks/gone.lock lock",
	}
	if !slices.Equal(paths, want) {
		t.Fatalf("Leftovers = %q\nwant %q", paths, want)
	}

	// A lock taken again between the listing and the removal stays.
	var gone Leftover
	for _, l := range got {
		if l.Path == "locks/gone.lock" {
			gone = l
		}
	}
	holder, _ := holdLock(t, "hold-session", common, "gone")
	if err := s.RemoveLeftover(gone, now, 0); err == nil || !exists(t, filepath.Join(dir, "locks", "gone.lock")) {
		t.Fatalf("RemoveLeftover of a held lock = %v", err)
	}
	// kill -9 frees it, and its holder is dead: a leftover again.
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	holder.Wait()

	for _, l := range got {
		if err := s.RemoveLeftover(l, now, minAge-time.Hour); err != nil {
			t.Errorf("RemoveLeftover(%s): %v", l.Path, err)
		}
		if exists(t, filepath.Join(dir, filepath.FromSlash(l.Path))) {
			t.Errorf("%s still exists", l.Path)
		}
	}
	if got, err := s.Leftovers(now, minAge); err != nil || len(got) != 0 {
		t.Errorf("Leftovers after removal = %+v, %v", got, err)
	}
	for _, rel := range []string{"sessions/live.json", "ended/done.json", "sessions/live.turns.jsonl", "sessions/fresh.json.tmp", "locks/live.lock", "locks/store/checkpoints.lock", "locks/mine.lock", "locks/new.lock"} {
		if !exists(t, filepath.Join(dir, filepath.FromSlash(rel))) {
			t.Errorf("%s was removed", rel)
		}
	}
	if _, err := s.Load("live"); err != nil {
		t.Errorf("the live session after cleaning: %v", err)
	}

	// Once its holder lets go and exits, the held lock is a leftover too.
	stopHeld.Close()
	waitGone := func() bool {
		for range 200 {
			l, err := s.Leftovers(time.Now(), 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range l {
				if x.Path == "locks/held.lock" {
					return true
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		return false
	}
	if !waitGone() {
		t.Error("locks/held.lock is not a leftover after its holder exited")
	}
}
