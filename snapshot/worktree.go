package snapshot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxHashed bounds the size of a work-tree file Uncommitted reads to
// compare: a bigger one counts as changed, unread.
const maxHashed = 16 << 20

// Uncommitted reports whether any of paths (slash-separated, relative to
// the work tree at dir) holds something other than commit has there: a
// change not committed (staged or not), or a file commit has that the work
// tree lost. Only regular files and symlinks compare equal; anything else
// at a path (a directory, a file too big to read) counts as a change, so a
// caller waiting on uncommitted work waits on. Paths are opened inside dir
// only.
func (r *Reader) Uncommitted(commit, dir string, paths []string) (bool, error) {
	c, err := object.GetCommit(r.st, plumbing.NewHash(commit))
	if err != nil {
		return false, fmt.Errorf("commit %s: %w", commit, err)
	}
	committed, err := r.Files(c.TreeHash.String(), paths)
	if err != nil {
		return false, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return false, fmt.Errorf("work tree: %w", err)
	}
	defer root.Close()
	for _, p := range paths {
		now, err := worktreeFile(root, p)
		if err != nil {
			return false, fmt.Errorf("work tree: %s: %w", p, err)
		}
		if now == nil || *now != committed[p] {
			return true, nil
		}
	}
	return false, nil
}

// worktreeFile is what the work tree holds at p, as git would store it;
// File{} when nothing is there, nil when it is not a file git compares
// here.
func worktreeFile(root *os.Root, p string) (*File, error) {
	name := filepath.FromSlash(p)
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &File{}, nil
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := root.Readlink(name)
		if err != nil {
			return nil, err
		}
		return &File{Hash: plumbing.ComputeHash(plumbing.BlobObject, []byte(filepath.ToSlash(target))), Mode: filemode.Symlink}, nil
	case !fi.Mode().IsRegular() || fi.Size() > maxHashed:
		return nil, nil
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := plumbing.NewHasher(plumbing.BlobObject, fi.Size())
	if n, err := io.Copy(h, f); err != nil || n != fi.Size() {
		return nil, err // changed while read: compared as a change
	}
	mode := filemode.Regular
	if fi.Mode()&0o111 != 0 {
		mode = filemode.Executable
	}
	return &File{Hash: h.Sum(), Mode: mode}, nil
}

// maxCommittedWalk bounds how far CommittedIn looks back along HEAD's first
// parents.
const maxCommittedWalk = 10_000

// CommittedIn finds, for each path whose content at commit is want[p], the
// commit that put it there: the nearest one along first parents whose own
// first parent held something else. A path commit does not hold as want
// says, or whose content goes back further than the walk, is left out.
func (r *Reader) CommittedIn(commit string, want map[string]File) (map[string]string, error) {
	out := map[string]string{}
	h := plumbing.NewHash(commit)
	c, err := object.GetCommit(r.st, h)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", commit, err)
	}
	var open []string // paths whose content c holds, as want says
	for p := range want {
		open = append(open, p)
	}
	slices.Sort(open)
	files, err := r.Files(c.TreeHash.String(), open)
	if err != nil {
		return nil, err
	}
	open = slices.DeleteFunc(open, func(p string) bool { return files[p] != want[p] })
	for range maxCommittedWalk {
		if len(open) == 0 {
			break
		}
		var parent map[string]File
		var pc *object.Commit
		if len(c.ParentHashes) > 0 {
			if pc, err = object.GetCommit(r.st, c.ParentHashes[0]); err != nil {
				return nil, fmt.Errorf("commit %s: parent: %w", c.Hash, err)
			}
			if parent, err = r.Files(pc.TreeHash.String(), open); err != nil {
				return nil, err
			}
		}
		open = slices.DeleteFunc(open, func(p string) bool {
			if parent[p] == want[p] {
				return false
			}
			out[p] = c.Hash.String()
			return true
		})
		if pc == nil {
			break
		}
		c = pc
	}
	return out, nil
}
