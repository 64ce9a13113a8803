package snapshot

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/utils/merkletrie"

	"github.com/tetherdev/tether/capture"
	"github.com/tetherdev/tether/internal/gitstore"
)

// Reader reads recorded captures in-process.
type Reader struct {
	st *filesystem.Storage
}

// OpenReader reads the captures of the repository whose git common dir is
// commonDir.
func OpenReader(commonDir string) (*Reader, error) {
	dir, err := filepath.Abs(commonDir)
	if err != nil {
		return nil, fmt.Errorf("open snapshots: %w", err)
	}
	return &Reader{st: gitstore.Open(dir)}, nil
}

// maxEntries bounds the walk of one session's captures (two per turn).
const maxEntries = 100_000

// List returns a session's captures, oldest first; none when it has no ref.
func (r *Reader) List(session string) ([]capture.Entry, error) {
	ref, err := r.st.Reference(plumbing.ReferenceName(capture.Ref(session)))
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("captures of %s: %w", session, err)
	}
	var out []capture.Entry
	h := ref.Hash()
	for range maxEntries {
		c, err := object.GetCommit(r.st, h)
		if err != nil {
			return nil, fmt.Errorf("captures of %s: commit %s: %w", session, h, err)
		}
		if e, ok := capture.ParseMessage(c.Message); ok {
			e.Tree, e.Commit, e.Time = c.TreeHash.String(), c.Hash.String(), c.Committer.When
			out = append(out, e)
		}
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	slices.Reverse(out)
	return out, nil
}

// Changes is what a turn did to the worktree: the paths it added, modified
// and deleted (files, slash-separated, sorted), between the trees Before
// and After.
type Changes struct {
	Before   string   `json:"before"`
	After    string   `json:"after"`
	AfterAt  string   `json:"after_at,omitempty"` // which capture After is: End, Start (of the next turn) or Swept
	Added    []string `json:"added,omitempty"`
	Modified []string `json:"modified,omitempty"`
	Deleted  []string `json:"deleted,omitempty"`
	// Late are paths tether cannot attribute to the turn: a capture that
	// bounds it found them written after its boundary, the worktree having
	// changed before the capture looked (capture.Entry.Late), and they are
	// not among Added, Modified and Deleted (see Unsure).
	Late []string `json:"late,omitempty"`
	// UpTo is the commit a turn still running made (or saw made): After
	// is that commit's tree, and the changes are only the paths the commit
	// took that the turn wrote (AfterAt "commit"). The rest of the turn is
	// in the checkpoint that continues it.
	UpTo string `json:"up_to,omitempty"`
	// Since, for a turn continued from an earlier checkpoint that counted
	// it up to a commit (UpTo), is that commit: the changes are those not
	// already in it.
	Since string `json:"since,omitempty"`
	// Shared are paths among the changes that another session working in
	// the worktree meanwhile may have written as well: the turn's agent
	// did not write them with its file tools, but ran a tool that may have
	// (a shell command), or its transcript cannot tell.
	Shared []string `json:"shared,omitempty"`
}

// AfterCommit is Changes.AfterAt for a turn counted up to a commit.
const AfterCommit = "commit"

// Keep keeps only the changes to the given paths.
func (c *Changes) Keep(paths map[string]bool) {
	drop := func(p string) bool { return !paths[p] }
	c.Added, c.Modified, c.Deleted = slices.DeleteFunc(c.Added, drop), slices.DeleteFunc(c.Modified, drop), slices.DeleteFunc(c.Deleted, drop)
}

// Unsure settles the paths the captures bounding the turn found late
// (before and after the turn): those of the capture after it are taken out
// of the changes, and every late path the changes do not hold is listed as
// Late. A path the capture before the turn found late and that changed
// again by its end is the turn's all the same.
func (c *Changes) Unsure(before, after []string) {
	if len(before)+len(after) == 0 {
		return
	}
	notLate := func(paths []string) []string {
		return slices.DeleteFunc(paths, func(p string) bool { return slices.Contains(after, p) })
	}
	c.Added, c.Modified, c.Deleted = notLate(c.Added), notLate(c.Modified), notLate(c.Deleted)
	changed := c.Paths()
	late := slices.DeleteFunc(slices.Concat(before, after), func(p string) bool {
		_, found := slices.BinarySearch(changed, p)
		return found
	})
	slices.Sort(late)
	if late = slices.Compact(late); len(late) > 0 {
		c.Late = late
	}
}

// Paths lists every path the changes touch, sorted.
func (c *Changes) Paths() []string {
	if c == nil {
		return nil
	}
	all := slices.Concat(c.Added, c.Modified, c.Deleted)
	slices.Sort(all)
	return slices.Compact(all)
}

// Empty reports whether the turn changed nothing.
func (c *Changes) Empty() bool { return c == nil || len(c.Added)+len(c.Modified)+len(c.Deleted) == 0 }

// Diff compares two trees ("" before: the empty tree). A file that became a symlink, or changed mode,
// is modified; renames are a deletion and an addition.
func (r *Reader) Diff(before, after string) (*Changes, error) {
	c := &Changes{Before: before, After: after}
	if before == after {
		return c, nil
	}
	var a *object.Tree // none before a root commit
	if before != "" {
		var err error
		if a, err = object.GetTree(r.st, plumbing.NewHash(before)); err != nil {
			return nil, fmt.Errorf("tree %s: %w", before, err)
		}
	}
	b, err := object.GetTree(r.st, plumbing.NewHash(after))
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", after, err)
	}
	changes, err := object.DiffTree(a, b)
	if err != nil {
		return nil, fmt.Errorf("diff %s %s: %w", before, after, err)
	}
	for _, ch := range changes {
		action, err := ch.Action()
		if err != nil {
			return nil, fmt.Errorf("diff %s %s: %w", before, after, err)
		}
		switch action {
		case merkletrie.Insert:
			c.Added = append(c.Added, ch.To.Name)
		case merkletrie.Delete:
			c.Deleted = append(c.Deleted, ch.From.Name)
		case merkletrie.Modify:
			c.Modified = append(c.Modified, ch.To.Name)
		}
	}
	slices.Sort(c.Added)
	slices.Sort(c.Modified)
	slices.Sort(c.Deleted)
	return c, nil
}

// File is what a tree holds at one path: nothing (Hash zero), or a blob
// with its mode.
type File struct {
	Hash plumbing.Hash
	Mode filemode.FileMode
}

// Files looks up paths in a tree.
func (r *Reader) Files(tree string, paths []string) (map[string]File, error) {
	t, err := object.GetTree(r.st, plumbing.NewHash(tree))
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", tree, err)
	}
	out := make(map[string]File, len(paths))
	for _, p := range paths {
		e, err := t.FindEntry(p)
		switch {
		case errors.Is(err, object.ErrEntryNotFound), errors.Is(err, object.ErrDirectoryNotFound):
			out[p] = File{}
		case err != nil:
			return nil, fmt.Errorf("tree %s: %s: %w", tree, p, err)
		case e.Mode == filemode.Dir || e.Mode == filemode.Submodule:
			out[p] = File{} // not a file there
		default:
			out[p] = File{Hash: e.Hash, Mode: e.Mode}
		}
	}
	return out, nil
}

// Has reports whether entries hold a capture of turn at a boundary.
func Has(entries []capture.Entry, turn int, at string) bool {
	_, ok := First(entries, turn, at)
	return ok
}

// First finds the first capture of turn at a boundary.
func First(entries []capture.Entry, turn int, at string) (capture.Entry, bool) {
	i := slices.IndexFunc(entries, func(e capture.Entry) bool { return e.Turn == turn && e.At == at })
	if i < 0 {
		return capture.Entry{}, false
	}
	return entries[i], true
}

// Pick finds the captures bounding turn among a session's entries: its
// first Start, and for its end its first End, else the next turn's first
// Start (the turn was cut short by another), else its first Swept (the
// sweep's look after the turn was interrupted). ok is false when either is
// missing.
func Pick(entries []capture.Entry, turn int) (start, end capture.Entry, ok bool) {
	start, ok = First(entries, turn, capture.Start)
	if !ok {
		return capture.Entry{}, capture.Entry{}, false
	}
	for _, c := range []struct {
		turn int
		at   string
	}{{turn, capture.End}, {turn + 1, capture.Start}, {turn, capture.Swept}} {
		if e, found := First(entries, c.turn, c.at); found {
			return start, e, true
		}
	}
	return start, capture.Entry{}, false
}

// Commit is what a commit did: the paths it changed against its first
// parent (every path, for a root commit), and when it was committed.
type Commit struct {
	Paths map[string]bool
	At    time.Time
}

// Trees returns the tree of a commit and that of its first parent (""
// for a root commit).
func (r *Reader) Trees(hash string) (tree, parent string, err error) {
	c, err := object.GetCommit(r.st, plumbing.NewHash(hash))
	if err != nil {
		return "", "", fmt.Errorf("commit %s: %w", hash, err)
	}
	if len(c.ParentHashes) > 0 {
		p, err := object.GetCommit(r.st, c.ParentHashes[0])
		if err != nil {
			return "", "", fmt.Errorf("commit %s: parent: %w", hash, err)
		}
		parent = p.TreeHash.String()
	}
	return c.TreeHash.String(), parent, nil
}

// CommitChanges reads what a commit changed.
func (r *Reader) CommitChanges(hash string) (Commit, error) {
	c, err := object.GetCommit(r.st, plumbing.NewHash(hash))
	if err != nil {
		return Commit{}, fmt.Errorf("commit %s: %w", hash, err)
	}
	out := Commit{Paths: map[string]bool{}, At: c.Committer.When}
	to, err := c.Tree()
	if err != nil {
		return Commit{}, fmt.Errorf("commit %s: %w", hash, err)
	}
	var from *object.Tree
	if len(c.ParentHashes) > 0 {
		p, err := object.GetCommit(r.st, c.ParentHashes[0])
		if err != nil {
			return Commit{}, fmt.Errorf("commit %s: parent: %w", hash, err)
		}
		if from, err = p.Tree(); err != nil {
			return Commit{}, fmt.Errorf("commit %s: parent: %w", hash, err)
		}
	}
	changes, err := object.DiffTree(from, to)
	if err != nil {
		return Commit{}, fmt.Errorf("commit %s: %w", hash, err)
	}
	for _, ch := range changes {
		if ch.From.Name != "" {
			out.Paths[ch.From.Name] = true
		}
		if ch.To.Name != "" {
			out.Paths[ch.To.Name] = true
		}
	}
	return out, nil
}
