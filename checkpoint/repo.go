package checkpoint

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/tetherdev/tether/internal/gitstore"
	"github.com/tetherdev/tether/redact"
	"github.com/tetherdev/tether/state"
)

// DefaultChunkSize is the largest transcript file written into one
// checkpoint; a bigger slice is split into several files.
const DefaultChunkSize = 50 << 20

// Repo writes checkpoints and notes into one repository.
type Repo struct {
	dir string // git common dir: objects and refs live here for all worktrees
	st  *filesystem.Storage
	// chunk caps the size of one transcript file (DefaultChunkSize; tests
	// lower it). Slices are split after a newline inside the chunk, so each
	// file is whole JSON lines unless a single line is larger.
	chunk int64

	// inMemory is the largest transcript slice staged in memory for
	// redaction (maxStagedInMemory; tests lower it to reach the file).
	inMemory int64

	// rollAt is how many checkpoints the tip of CheckpointsRef holds
	// before a condense rolls it (defaultRollAt; tests lower it).
	rollAt int

	// packs names the pack indexes go-git has loaded; see refresh.
	packs string

	// red redacts everything that becomes a git object: prompts, the
	// transcript slice, checkpoint.json and commit messages.
	red *redact.Redactor
	// copyRedacted streams a transcript slice through red (red.Copy);
	// a benchmark swaps in a plain copy to price redaction.
	copyRedacted func(dst io.Writer, src io.Reader) (redact.Counts, int64, error)

	// env is added to the environment of the git commands run by Push and
	// Fetch (tests isolate them from the machine's configuration).
	env []string

	// conversations asks an agent that keeps no transcript file for a
	// session's messages (SetConversations); nil: not asked.
	conversations ConversationReader

	// changes, when set, fills in what the condensed turns changed
	// (SetTurnChanges).
	changes TurnChanges

	// hook, when set by tests, is called at named points of a write
	// ("before-ref" and "after-ref" with the ref name) so a test can race a
	// real git command or kill the process at that exact point, and at each
	// tree read ("read-tree" with its hash) so a test can count them.
	hook func(point, ref string)
}

// Open opens the repository whose git common dir is commonDir (for a linked
// worktree, the main repository's git dir, where objects and refs live).
func Open(commonDir string) (*Repo, error) {
	dir, err := filepath.Abs(commonDir)
	if err != nil {
		return nil, fmt.Errorf("open checkpoints repo %s: %w", commonDir, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "objects")); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("open checkpoints repo %s: not a git directory (no objects/)", dir)
	}
	st := gitstore.Open(dir)
	cfg, err := st.Config()
	if err != nil {
		return nil, fmt.Errorf("open checkpoints repo %s: read config: %w", dir, err)
	}
	if err := checkFormat(cfg); err != nil {
		return nil, fmt.Errorf("open checkpoints repo %s: %w", dir, err)
	}
	red := redact.New()
	return &Repo{dir: dir, st: st, chunk: DefaultChunkSize, inMemory: maxStagedInMemory, rollAt: defaultRollAt, red: red, copyRedacted: red.Copy}, nil
}

// TurnChanges fills in Turn.Changes of the turns of session s about to be
// condensed. It must be deterministic for turns already condensed once, so
// that a retry writes the same checkpoint. For a session whose agent keeps
// its conversation in a database (state.Session.AgentDB), said gives the
// messages of one of its turns as the agent answered for this condense
// (JSON lines, as conversation.Select gives them; ok false when they could
// not be read); nil for the others, whose transcript is a file.
type TurnChanges func(s *state.Session, turns []Turn, said func(turn int) (messages []byte, ok bool))

// SetTurnChanges has Condense call f on the turns of every checkpoint it
// writes.
func (r *Repo) SetTurnChanges(f TurnChanges) { r.changes = f }

// checkFormat refuses repositories this package would corrupt: objects are
// written as SHA-1 loose objects and refs as loose ref files. Other
// extensions (worktreeConfig, partialClone, ...) do not change either, so
// unlike go-git's own Open they are accepted.
func checkFormat(cfg *config.Config) error {
	if !cfg.Raw.HasSection("extensions") {
		return nil
	}
	ext := cfg.Raw.Section("extensions")
	if f := strings.ToLower(ext.Option("objectformat")); f != "" && f != "sha1" {
		return fmt.Errorf("object format %s is not supported", f)
	}
	if f := strings.ToLower(ext.Option("refstorage")); f != "" && f != "files" {
		return fmt.Errorf("ref storage %s is not supported", f)
	}
	return nil
}

// ErrNotFound is returned when a checkpoint, commit or note does not exist.
var ErrNotFound = errors.New("not found")

// resolveCommit turns a revision into the hash of an existing commit
// (peeling annotated tags). A revision is a full or abbreviated hash, or a
// ref name looked up the way git does (as given, then under refs/,
// refs/tags/, refs/heads/, refs/remotes/) in the common dir; HEAD there is
// the main worktree's, so callers in a linked worktree pass a hash.
func (r *Repo) resolveCommit(rev string) (plumbing.Hash, error) {
	if err := r.refresh(); err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := r.resolve(rev)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for range 10 { // tags of tags, bounded
		obj, err := r.st.EncodedObject(plumbing.AnyObject, h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return plumbing.ZeroHash, fmt.Errorf("object %s: %w", h, ErrNotFound)
		}
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("object %s: %w", h, err)
		}
		switch obj.Type() {
		case plumbing.CommitObject:
			return h, nil
		case plumbing.TagObject:
			tag, err := object.DecodeTag(r.st, obj)
			if err != nil {
				return plumbing.ZeroHash, fmt.Errorf("tag %s: %w", h, err)
			}
			h = tag.Target
		default:
			return plumbing.ZeroHash, fmt.Errorf("%s is a %s, not a commit", rev, obj.Type())
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("%s: too many nested tags", rev)
}

func (r *Repo) resolve(rev string) (plumbing.Hash, error) {
	if len(rev) == 40 && plumbing.IsHash(rev) {
		return plumbing.NewHash(rev), nil
	}
	if rev == "" || strings.ContainsAny(rev, " ~^:@{}\\") {
		return plumbing.ZeroHash, fmt.Errorf("revision %q: only hashes and ref names are supported", rev)
	}
	for _, name := range []string{rev, "refs/" + rev, "refs/tags/" + rev, "refs/heads/" + rev, "refs/remotes/" + rev} {
		ref, err := storer.ResolveReference(r.st, plumbing.ReferenceName(name))
		if err == nil {
			return ref.Hash(), nil
		}
	}
	if len(rev) >= 4 && validHex(rev) {
		prefix, err := hex.DecodeString(rev[:len(rev)&^1])
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("revision %q: %w", rev, err)
		}
		hashes, err := r.st.HashesWithPrefix(prefix)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("revision %q: %w", rev, err)
		}
		var found []plumbing.Hash
		for _, h := range hashes {
			if strings.HasPrefix(h.String(), strings.ToLower(rev)) && !slices.Contains(found, h) {
				found = append(found, h)
			}
		}
		switch len(found) {
		case 1:
			return found[0], nil
		case 0:
		default:
			return plumbing.ZeroHash, fmt.Errorf("revision %q is ambiguous", rev)
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("revision %q: %w", rev, ErrNotFound)
}

// refresh makes objects packed since the last call readable: go-git loads
// the pack indexes once, so a git gc or repack between two calls of one Repo
// would otherwise hide every object it packed.
func (r *Repo) refresh() error {
	entries, err := os.ReadDir(filepath.Join(r.dir, "objects", "pack"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("list packs: %w", err)
	}
	var names strings.Builder
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".idx") {
			names.WriteString(e.Name())
		}
	}
	if names.String() != r.packs {
		r.st.Reindex()
		r.packs = names.String()
	}
	return nil
}

func (r *Repo) callHook(point, ref string) {
	if r.hook != nil {
		r.hook(point, ref)
	}
}
