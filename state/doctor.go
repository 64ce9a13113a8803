package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tetherdev/tether/proclive"
)

// The store's health, for `tether-sweep doctor`: modes looser than the
// store's own, quarantined files, and files that crashed or finished
// processes left behind. Nothing here deletes a record: only temp files and
// lock files that guard nothing can be removed, and only after re-checking
// under the lock that makes it safe.

// LooseMode is a file or directory of the store that grants its group or
// others any access. The store creates directories 0700 and files 0600:
// session records hold prompts, so only their owner may read them.
type LooseMode struct {
	Path string      // relative to Dir, slash-separated; "." is the store itself
	Dir  bool        // a directory rather than a regular file
	Mode fs.FileMode // permission bits found
	Want fs.FileMode // what FixMode sets: Mode without the group and other bits
}

// tighten returns perm without its group and other bits, and whether it
// had any. The owner's bits are left as they are: tightening never
// loosens.
func tighten(perm fs.FileMode) (fs.FileMode, bool) {
	perm &= fs.ModePerm
	return perm &^ 0o077, perm&0o077 != 0
}

// LooseModes lists the store's files and directories whose modes grant
// group or other access. Symbolic links are not followed. On Windows, where
// mode bits say nothing about access, it reports nothing.
func (s *Store) LooseModes() ([]LooseMode, error) {
	if runtime.GOOS == "windows" {
		return nil, nil
	}
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("check store modes: %w", err)
	}
	var out []LooseMode
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 || (!d.IsDir() && !d.Type().IsRegular()) || captureIndex(p) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed since the directory was read
			}
			return err
		}
		if want, loose := tighten(fi.Mode().Perm()); loose {
			out = append(out, LooseMode{Path: p, Dir: d.IsDir(), Mode: fi.Mode().Perm(), Want: want})
		}
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("check store modes: %w", err)
	}
	return out, nil
}

// captureIndex reports whether p is a capture's private index or git's
// lock of it (snapshots/<key>.index, .index.lock): git writes both as the
// umask says, and the capture makes the index private as it ends; the
// directory they lie in is private all along.
func captureIndex(p string) bool {
	return strings.HasPrefix(p, "snapshots/") && (strings.HasSuffix(p, ".index") || strings.HasSuffix(p, ".index.lock"))
}

// FixMode gives one entry found by LooseModes its tightened mode. It
// refuses an entry that has since become a symbolic link or changed kind.
func (s *Store) FixMode(m LooseMode) error {
	root, err := s.openRoot(false)
	if err != nil {
		return fmt.Errorf("fix mode of %s: %w", m.Path, err)
	}
	rel := filepath.FromSlash(m.Path)
	fi, err := root.Lstat(rel)
	if err != nil {
		return fmt.Errorf("fix mode of %s: %w", m.Path, err)
	}
	if fi.IsDir() != m.Dir || (!fi.IsDir() && !fi.Mode().IsRegular()) {
		return fmt.Errorf("fix mode of %s: no longer the %s it was", m.Path, kindName(m.Dir))
	}
	want, loose := tighten(fi.Mode().Perm())
	if !loose {
		return nil
	}
	if err := root.Chmod(rel, want); err != nil {
		return fmt.Errorf("fix mode of %s: %w", m.Path, err)
	}
	return nil
}

func kindName(dir bool) string {
	if dir {
		return "directory"
	}
	return "file"
}

// quarantineDir holds the files moved aside by quarantine.
const quarantineDir = "quarantine"

// reasonSuffix names the note quarantine writes beside each file.
const reasonSuffix = ".reason"

// Quarantined is a file quarantine moved aside.
type Quarantined struct {
	Name   string    // file name in quarantine/
	File   string    // where it was in the store, slash-separated ("" if unrecorded)
	At     time.Time // when it was moved (zero if unrecorded)
	Reason string    // why ("" if no reason was recorded)
}

// QuarantineDir is where quarantined files are kept, beside their reasons.
func (s *Store) QuarantineDir() string { return filepath.Join(s.dir, quarantineDir) }

// Quarantined lists the quarantined files, sorted by name. It only
// reads: quarantined files are for a person to look at and delete.
func (s *Store) Quarantined() ([]Quarantined, error) {
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list quarantine: %w", err)
	}
	names, err := readDirNames(root, quarantineDir)
	if err != nil {
		return nil, fmt.Errorf("list quarantine: %w", err)
	}
	var out []Quarantined
	for _, name := range names {
		if strings.HasSuffix(name, reasonSuffix) {
			continue
		}
		q := Quarantined{Name: name}
		// A crash between the move and the note leaves no reason: the file
		// is still listed.
		if data, err := root.ReadFile(path.Join(quarantineDir, name+reasonSuffix)); err == nil {
			q.File, q.At, q.Reason = parseReason(data)
		}
		out = append(out, q)
	}
	return out, nil
}

// parseReason reads the note quarantine writes: "time: ...", "file: ..."
// and "error: ..." lines, the error running to the end of the note since
// an error's text may span lines. Unknown lines are ignored; anything
// missing is left empty.
func parseReason(data []byte) (file string, at time.Time, reason string) {
	rest := string(data)
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		key, val, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch key {
		case "time":
			if t, err := time.Parse(time.RFC3339Nano, val); err == nil {
				at = t
			}
		case "file":
			file = val
		case "error":
			return file, at, strings.TrimSpace(val + "\n" + rest)
		}
	}
	return file, at, ""
}

// readDirNames lists a directory of the store, sorted; a missing directory
// is empty.
func readDirNames(root *tree, dir string) ([]string, error) {
	d, err := root.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// LeftoverKind tells temp files from lock files.
type LeftoverKind string

const (
	LeftoverTemp LeftoverKind = "temp"
	LeftoverLock LeftoverKind = "lock"
)

// Leftover is a file no running process needs: the temp file of a write
// that never finished, or a lock file that guards nothing.
type Leftover struct {
	Path    string // relative to Dir, slash-separated
	Kind    LeftoverKind
	ModTime time.Time
	Why     string // for a person: what it is and why it is safe to remove
}

// stagingDir is where writers outside this package (checkpoint's redacted
// transcript slices) stage files they unlink at once: anything visible
// there for long is a crash leftover.
const stagingDir = "tmp"

// Leftovers lists temp files and lock files older than minAge that no one
// needs:
//   - temp files: sessions/ and ended/ "<id>.json.tmp" (state writes are
//     over in milliseconds, under the session lock) and files in tmp/;
//   - lock files in locks/ that no one holds, whose recorded holder has
//     exited, and that belong to no session, live or ended. The locks taken
//     with Lock live in a directory of their own and are never leftovers.
//
// A lock file of a session is not a leftover: it is reused by the
// session's next write, and Remove deletes it with the session.
func (s *Store) Leftovers(now time.Time, minAge time.Duration) ([]Leftover, error) {
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find leftovers: %w", err)
	}
	var out []Leftover
	for _, dir := range []string{locLive.dir(), locEnded.dir(), stagingDir, "locks"} {
		names, err := readDirNames(root, dir)
		if err != nil {
			return out, fmt.Errorf("find leftovers: %w", err)
		}
		for _, name := range names {
			l, ok, err := s.examine(root, path.Join(dir, name), now, minAge, false)
			if err != nil {
				return out, fmt.Errorf("find leftovers: %w", err)
			}
			if ok {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

// RemoveLeftover removes a file Leftovers found, after checking again,
// under the lock that guards it, that it still is one.
func (s *Store) RemoveLeftover(l Leftover, now time.Time, minAge time.Duration) error {
	root, err := s.openRoot(false)
	if err != nil {
		return fmt.Errorf("remove %s: %w", l.Path, err)
	}
	_, ok, err := s.examine(root, l.Path, now, minAge, true)
	if err != nil {
		return fmt.Errorf("remove %s: %w", l.Path, err)
	}
	if !ok {
		return fmt.Errorf("remove %s: in use again, left in place", l.Path)
	}
	return nil
}

// examine decides whether the store file rel is a leftover and, with
// remove, deletes it while holding whatever lock makes that safe.
func (s *Store) examine(root *tree, rel string, now time.Time, minAge time.Duration, remove bool) (Leftover, bool, error) {
	dir, name := path.Split(rel)
	dir = strings.TrimSuffix(dir, "/")
	fi, err := root.Lstat(filepath.FromSlash(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return Leftover{}, false, nil
	}
	if err != nil {
		return Leftover{}, false, err
	}
	if !fi.Mode().IsRegular() || now.Sub(fi.ModTime()) < minAge {
		return Leftover{}, false, nil
	}
	l := Leftover{Path: rel, Kind: LeftoverTemp, ModTime: fi.ModTime()}
	switch dir {
	case locLive.dir(), locEnded.dir():
		id, ok := strings.CutSuffix(name, ".json.tmp")
		if !ok {
			return Leftover{}, false, nil
		}
		l.Why = "temp file of a session write that never finished"
		if !remove {
			return l, true, nil
		}
		if ValidateID(id) != nil {
			// No session has this name, so no writer can be using it.
			return l, true, removeSynced(root, rel)
		}
		// Writers make this file under the session lock: holding it, the
		// file is nobody's.
		lk, err := s.acquire(root, sessionLockPath(id), id)
		if err != nil {
			return Leftover{}, false, err
		}
		defer lk.release()
		if fi, err := root.Lstat(filepath.FromSlash(rel)); err != nil || now.Sub(fi.ModTime()) < minAge {
			return Leftover{}, false, nil
		}
		return l, true, removeSynced(root, rel)
	case stagingDir:
		l.Why = "staging file of a checkpoint write that never finished"
		if remove {
			return l, true, removeSynced(root, rel)
		}
		return l, true, nil
	case "locks":
		return s.examineLock(root, rel, name, l, remove)
	}
	return Leftover{}, false, nil
}

// examineLock decides about a lock file. Taking the lock without waiting
// proves no one holds it; deleting it while held is what Remove does, and
// acquire notices and starts over on a fresh file.
func (s *Store) examineLock(root *tree, rel, name string, l Leftover, remove bool) (Leftover, bool, error) {
	lockName, ok := strings.CutSuffix(name, ".lock")
	if !ok {
		return Leftover{}, false, nil
	}
	if ValidateID(lockName) == nil {
		used, err := hasSessionFiles(root, lockName)
		if err != nil || used {
			return Leftover{}, false, err
		}
	}
	f, err := root.OpenFile(filepath.FromSlash(rel), os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return Leftover{}, false, nil
	}
	if err != nil {
		return Leftover{}, false, err
	}
	defer f.Close() // releases the lock, if taken
	if ok, err := tryLock(f); err != nil || !ok {
		return Leftover{}, false, err
	}
	if same, err := stillAt(root, filepath.FromSlash(rel), f); err != nil || !same {
		return Leftover{}, false, err
	}
	pid := holderPID(f)
	if pid > 0 {
		if _, err := proclive.Capture(pid); err == nil {
			// Its last holder still runs and may come back for it.
			return Leftover{}, false, nil
		}
	}
	l.Kind = LeftoverLock
	l.Why = "lock of no session, held by no one"
	if pid > 0 {
		l.Why += fmt.Sprintf("; pid %d that last held it has exited", pid)
	}
	if !remove {
		return l, true, nil
	}
	// Checked again under the lock: a session created since holds its own
	// lock file only while it writes.
	if ValidateID(lockName) == nil {
		if used, err := hasSessionFiles(root, lockName); err != nil || used {
			return Leftover{}, false, err
		}
	}
	return l, true, removeSynced(root, rel)
}

// hasSessionFiles tells whether any file of session id exists.
func hasSessionFiles(root *tree, id string) (bool, error) {
	for _, w := range []where{locLive, locEnded} {
		for _, p := range []string{statePath(w, id), logPath(w, id), tempPath(w, id)} {
			_, err := root.Lstat(p)
			if err == nil {
				return true, nil
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return false, err
			}
		}
	}
	return false, nil
}

// holderPID reads the pid writeHolder recorded, or 0.
func holderPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	field, _, _ := strings.Cut(string(b[:n]), " ")
	pid, err := strconv.Atoi(field)
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// removeSynced deletes a store file durably.
func removeSynced(root *tree, rel string) error {
	rel = filepath.FromSlash(rel)
	if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return syncDir(root, filepath.Dir(rel))
}
