package capture

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/state"
)

// Boundaries of a turn a capture is recorded for.
const (
	Start  = "start"  // the hook, as the turn started
	End    = "end"    // the hook, as the turn ended
	Swept  = "swept"  // the sweep, finding the turn interrupted
	Rewind = "rewind" // rewind, keeping what it was about to overwrite
	Undo   = "undo"   // rewind --undo, keeping what it was about to overwrite
)

// RefPrefix is where the captures of every session are kept.
const RefPrefix = "refs/tether/snapshots/"

// Worktree captures and records the worktree of one repository.
type Worktree struct {
	repo gitdir.Repo
	st   *state.Store
	// env is added to the environment of the git commands (tests isolate
	// them from the machine's configuration).
	env []string
}

// New returns the captures of repo's worktree, kept in st.
func New(repo gitdir.Repo, st *state.Store) *Worktree {
	return &Worktree{repo: repo, st: st}
}

// WithEnv adds environment variables to the git commands it runs.
func (w *Worktree) WithEnv(env ...string) *Worktree {
	c := *w
	c.env = append(append([]string(nil), w.env...), env...)
	return &c
}

// Ref is the ref holding a session's captures. A session ID that is not a
// valid ref name component as it is (git refuses a leading dot, "..",
// ".lock" at the end) is named by its hash instead.
func Ref(session string) string {
	if strings.HasPrefix(session, ".") || strings.HasSuffix(session, ".") ||
		strings.Contains(session, "..") || strings.HasSuffix(session, ".lock") || session == "" {
		sum := sha256.Sum256([]byte(session))
		return RefPrefix + "x-" + hex.EncodeToString(sum[:8])
	}
	return RefPrefix + session
}

// key names the worktree's private index and lock: one per worktree, as
// every worktree of a clone shares the store.
func (w *Worktree) key() string {
	sum := sha256.Sum256([]byte(w.repo.WorkTree))
	return "snapshot-" + hex.EncodeToString(sum[:6])
}

// IndexFile is the private index of the worktree's captures.
func (w *Worktree) IndexFile() string {
	return filepath.Join(w.st.Dir(), "snapshots", w.key()+".index")
}

// captureWait bounds the wait for another capture of the worktree: one in
// a big worktree takes a while, and the next simply follows it.
const captureWait = 30 * time.Second

// Capture writes the worktree's content as a tree, through the private
// index, and returns its hash. The blobs go into the repository's object
// store, as `git add` would put them.
func (w *Worktree) Capture() (string, error) {
	if w.repo.WorkTree == "" {
		return "", errors.New("capture: the repository has no worktree")
	}
	unlock, err := w.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	index := w.IndexFile()
	excludes, secrets, err := w.excludes()
	if err != nil {
		return "", err
	}
	seeded, err := w.seed(index)
	if err != nil {
		return "", err
	}
	defer os.Chmod(index, 0o600) // git writes it as the umask says; the store keeps its files private
	err = w.purgeSecrets(index, secrets)
	tree := ""
	if err == nil {
		tree, err = w.writeTree(index, excludes)
	}
	if err != nil && seeded {
		// A copy of the user's index git cannot use on its own (a split
		// index, whose shared part lives beside the original): start
		// from nothing instead, which costs a full hash once and holds
		// nothing to purge.
		if rerr := os.Remove(index); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			return "", fmt.Errorf("capture: %w", rerr)
		}
		tree, err = w.writeTree(index, excludes)
	}
	return tree, err
}

// lock takes the worktree's capture lock, waiting up to captureWait.
func (w *Worktree) lock() (func() error, error) {
	deadline := time.Now().Add(captureWait)
	for {
		unlock, err := w.st.Lock(w.key())
		if err == nil || time.Now().After(deadline) {
			if err != nil {
				return nil, fmt.Errorf("capture: %w", err)
			}
			return unlock, nil
		}
	}
}

// seed copies the user's index to the private one when there is none yet,
// so the first capture reuses what git already knows of the files. It
// reports whether it did.
func (w *Worktree) seed(index string) (bool, error) {
	if _, err := os.Stat(index); err == nil {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(index), 0o700); err != nil {
		return false, fmt.Errorf("capture: %w", err)
	}
	// A new index has not been purged of secret files yet.
	if err := os.Remove(index + ".secrets"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("capture: %w", err)
	}
	src, err := os.Open(filepath.Join(w.repo.GitDir, "index"))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil // no index yet: a new repository
	}
	if err != nil {
		return false, fmt.Errorf("capture: read the index: %w", err)
	}
	defer src.Close()
	if err := replaceFile(index, src); err != nil {
		return false, fmt.Errorf("capture: seed the index: %w", err)
	}
	return true, nil
}

// writeTree is `git add -A && git write-tree` on the private index, with
// excludes as git's core.excludesFile: git hashes no file it excludes, so
// none reaches the object store, not even as a loose object nothing
// refers to.
func (w *Worktree) writeTree(index, excludes string) (string, error) {
	if _, err := w.git(index, nil, "-c", "core.excludesFile="+excludes, "add", "-A"); err != nil {
		return "", fmt.Errorf("capture: %w", err)
	}
	out, err := w.git(index, nil, "write-tree")
	if err != nil {
		return "", fmt.Errorf("capture: %w", err)
	}
	return out, nil
}

// Entry is one recorded capture.
type Entry struct {
	Turn   int       `json:"turn"`
	At     string    `json:"at"` // Start, End, Swept, Rewind or Undo
	Tree   string    `json:"tree"`
	Commit string    `json:"commit,omitempty"`
	Time   time.Time `json:"time,omitzero"`
	// Restored, for a Rewind or an Undo, is the tree it put the turn's
	// paths back to: Tree holds what they were before.
	Restored string `json:"restored,omitempty"`
	// Late are the paths the capture found written after its boundary:
	// Tree holds them as they were when the capture looked, not as the
	// turn left them (CaptureTurn).
	Late []string `json:"late,omitempty"`
}

// Trailers of the commit message of a recorded capture.
const (
	trailerTurn     = "Tether-Turn: "
	trailerAt       = "Tether-At: "
	trailerRestored = "Tether-Restored: "
	trailerLate     = "Tether-Late: " // a Go-quoted path, one per trailer
)

// message is a recorded capture's commit message.
func message(session string, e Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tether: turn %d %s\n\nTether-Session: %s\n%s%d\n%s%s\n", e.Turn, e.At, session, trailerTurn, e.Turn, trailerAt, e.At)
	if e.Restored != "" {
		fmt.Fprintf(&b, "%s%s\n", trailerRestored, e.Restored)
	}
	for _, p := range e.Late {
		fmt.Fprintf(&b, "%s%s\n", trailerLate, strconv.Quote(p))
	}
	return b.String()
}

// ParseMessage reads an entry's fields back from its commit message; false
// for a message that is not a capture's.
func ParseMessage(msg string) (Entry, bool) {
	var e Entry
	for _, line := range strings.Split(msg, "\n") {
		switch {
		case strings.HasPrefix(line, trailerTurn):
			n, err := strconv.Atoi(strings.TrimPrefix(line, trailerTurn))
			if err != nil {
				return Entry{}, false
			}
			e.Turn = n
		case strings.HasPrefix(line, trailerAt):
			e.At = strings.TrimPrefix(line, trailerAt)
		case strings.HasPrefix(line, trailerRestored):
			e.Restored = strings.TrimPrefix(line, trailerRestored)
		case strings.HasPrefix(line, trailerLate):
			p, err := strconv.Unquote(strings.TrimPrefix(line, trailerLate))
			if err != nil {
				return Entry{}, false
			}
			e.Late = append(e.Late, p)
		}
	}
	return e, e.At != ""
}

// casWait bounds the retries of a ref update lost to other writers: the
// captures of one session rarely meet, but a burst of them all lands.
const casWait = 5 * time.Second

// Record keeps a capture on the session's ref: a commit of e.Tree on top
// of the ref's tip, by tether (the captures are the tool's, not the
// person's), the ref moved by compare-and-swap. It returns e with its
// commit. The commit is a loose object written here, the ref read and
// moved as git's own files (see moveRef): the capture runs at every turn
// boundary and should cost little more than git add and git write-tree,
// and each git process spared is 5–7 ms of it.
func (w *Worktree) Record(session string, e Entry) (Entry, error) {
	if !sha1Hex(e.Tree) {
		return e, fmt.Errorf("record capture of %s: tree %q: only SHA-1 repositories are supported", session, e.Tree)
	}
	ref := Ref(session)
	for deadline := time.Now().Add(casWait); time.Now().Before(deadline); {
		old, err := w.tip(ref)
		if err != nil {
			return e, fmt.Errorf("record capture of %s: %w", session, err)
		}
		c, err := writeLoose(filepath.Join(w.repo.CommonDir, "objects"), "commit", commitObject(e.Tree, old, message(session, e), time.Now()))
		if err != nil {
			return e, fmt.Errorf("record capture of %s: %w", session, err)
		}
		err = w.moveRef(ref, old, c)
		if errors.Is(err, errMoved) {
			// Another capture of this session moved it first, or holds
			// it: try again when it is likely done, at a random moment so
			// that writers who met do not meet again.
			time.Sleep(time.Millisecond + rand.N(5*time.Millisecond))
			continue
		}
		if err != nil {
			return e, fmt.Errorf("record capture of %s: %w", session, err)
		}
		e.Commit = c
		return e, nil
	}
	return e, fmt.Errorf("record capture of %s: %s kept moving", session, ref)
}

// sha1Hex reports whether s is a SHA-1 object name.
func sha1Hex(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Dir is the worktree's top directory.
func (w *Worktree) Dir() string { return w.repo.WorkTree }

// Checkout writes the content (and mode) paths have in tree into the
// worktree, through a temporary index (git read-tree, git
// checkout-index), never the user's.
func (w *Worktree) Checkout(tree string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	dir := filepath.Dir(w.IndexFile())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".checkout-index-")
	if err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	tmp.Close()
	index := tmp.Name()
	os.Remove(index) // git wants to create it
	defer os.Remove(index)
	if _, err := w.git(index, nil, "read-tree", tree); err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	list := strings.Join(paths, "\x00") + "\x00"
	if _, err := w.git(index, strings.NewReader(list), "checkout-index", "-f", "-z", "--stdin"); err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	return nil
}

// CaptureTurn captures the worktree and records it for a turn boundary
// the turn reached at boundary. The capture runs after the boundary (the
// hook starts it in the background), and the worktree may change in
// between: the paths it finds written after boundary are listed as Late
// (see late). A zero boundary is now, for a capture taken where it is
// wanted (Swept, Rewind).
func (w *Worktree) CaptureTurn(session string, turn int, at string, boundary time.Time) (Entry, error) {
	base := ""
	if !boundary.IsZero() {
		var err error
		if base, err = w.lateBase(session); err != nil {
			return Entry{}, err
		}
	}
	tree, err := w.Capture()
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Turn: turn, At: at, Tree: tree}
	if base != "" {
		if e.Late, err = w.late(base, tree, boundary); err != nil {
			return Entry{}, err
		}
	}
	return w.Record(session, e)
}

// lateBase is what a capture of the session is compared with to find the
// paths it may have caught late: the session's last capture, else HEAD;
// "" when there is neither (an unborn branch).
func (w *Worktree) lateBase(session string) (string, error) {
	tip, err := w.tip(Ref(session))
	if err != nil || tip != "" {
		return tip, err
	}
	head, _, err := gitdir.Head(w.repo.GitDir, w.repo.CommonDir)
	if err != nil {
		return "", nil // unborn: nothing to compare with
	}
	return head, nil
}

// late lists the paths that differ between base and tree and were written
// after boundary, by their modification time: what the capture holds of
// them is not what the worktree held at the boundary. A path gone from the
// worktree counts by its nearest directory's time (a deletion leaves no
// file to look at). A file's time is never later than its write, so a path
// written before the boundary is never listed; one written in the same
// tick of the file system's clock may be missed, and one rewritten after
// git read it, before this look, is listed needlessly: a path left out of
// the turn, never one put in.
func (w *Worktree) late(base, tree string, boundary time.Time) ([]string, error) {
	out, err := w.gitRaw("", nil, "diff-tree", "-r", "-z", "--name-only", "--no-renames", base, tree)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	var late []string
	for _, p := range strings.Split(out, "\x00") {
		if p == "" {
			continue
		}
		if writtenAfter(w.repo.WorkTree, p, boundary) {
			late = append(late, p)
		}
	}
	return late, nil
}

// writtenAfter reports whether the worktree's path (slash-separated),
// or, where it is gone, its nearest directory, was modified after t.
func writtenAfter(worktree, path string, t time.Time) bool {
	for p := filepath.FromSlash(path); ; p = filepath.Dir(p) {
		fi, err := os.Lstat(filepath.Join(worktree, p))
		if err == nil {
			return fi.ModTime().After(t)
		}
		if p == "." || p == string(filepath.Separator) {
			return false
		}
	}
}

// Remove drops a session's captures; their objects go with the next gc.
func (w *Worktree) Remove(session string) error {
	ref := Ref(session)
	old, err := w.tip(ref)
	if err != nil {
		return fmt.Errorf("remove captures of %s: %w", session, err)
	}
	if old == "" {
		return nil // nothing recorded
	}
	if _, err := w.git("", nil, "update-ref", "-d", ref, old); err != nil {
		return fmt.Errorf("remove captures of %s: %w", session, err)
	}
	return nil
}

// git runs git on the repository with, when index is set, that index;
// it returns the trimmed output and an error carrying git's own words.
func (w *Worktree) git(index string, stdin io.Reader, args ...string) (string, error) {
	out, err := w.gitRaw(index, stdin, args...)
	return strings.TrimSpace(out), err
}

// gitRaw is git with the output as git wrote it (NUL-separated names may
// begin or end with spaces).
func (w *Worktree) gitRaw(index string, stdin io.Reader, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = w.repo.WorkTree
	if cmd.Dir == "" {
		cmd.Dir = w.repo.CommonDir
	}
	env := cleanEnv(os.Environ())
	env = append(env, "GIT_DIR="+w.repo.GitDir)
	if w.repo.WorkTree != "" {
		env = append(env, "GIT_WORK_TREE="+w.repo.WorkTree)
	}
	if index != "" {
		env = append(env, "GIT_INDEX_FILE="+index)
	}
	cmd.Env = append(env, w.env...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		command := args[0]
		if command == "-c" && len(args) > 2 {
			command = args[2]
		}
		return stdout.String(), &gitError{command: command, msg: msg, err: err}
	}
	return stdout.String(), nil
}

// gitError is a git command that failed: git's first line, and how it
// ended (an *exec.ExitError, for its status).
type gitError struct {
	command, msg string
	err          error
}

func (e *gitError) Error() string { return "git " + e.command + ": " + e.msg }
func (e *gitError) Unwrap() error { return e.err }

// cleanEnv drops what would point git at another repository, index or
// object store than the one named explicitly: the hook inherits the
// agent's environment, which may run inside another git command.
func cleanEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
			"GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX":
			continue
		}
		out = append(out, kv)
	}
	return out
}
