// Package gitstore opens go-git's object and ref storage on a git
// directory, reading it with fewer system calls than go-git's default
// filesystem, which matters on a commit's path (the post-commit sweep):
//
//   - A pack index is read whole, in one read, before go-git decodes it.
//     go-git decodes it straight from the file, four or twenty bytes per
//     read: a system call for each fanout slot and for every object's name,
//     checksum and offset. A sweep looks objects up in every pack (one more
//     each time tether or a fetch writes one, until git gc). Pack indexes
//     never change once written, so reading one whole is safe.
//   - Files are opened and stat'ed at their path under the git directory
//     (non-blocking: see noPoll). go-billy's default "soft chroot" resolves
//     each path one component at a time in user space (an lstat per
//     directory) to keep symlinks inside it; a git directory's layout is
//     git's, and git follows its symlinks as the kernel does. Names that are
//     not local (absolute, or climbing out with "..") still go through the
//     soft chroot, as do all writes.
//
// Measured: `go run ./scripts/bench --only condenses` (the note of issue 20).
package gitstore

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Open returns go-git's storage for the git directory dir, an absolute
// path, with an object cache of go-git's default size.
func Open(dir string) *filesystem.Storage {
	return filesystem.NewStorage(gitDir{Filesystem: osfs.New(dir), dir: dir}, cache.NewObjectLRUDefault())
}

// gitDir is go-billy's OS filesystem rooted at dir, reading directly.
type gitDir struct {
	billy.Filesystem
	dir string
}

// path is where name is, when it is a local name.
func (g gitDir) path(name string) (string, bool) {
	if !filepath.IsLocal(name) {
		return "", false
	}
	return filepath.Join(g.dir, name), true
}

func (g gitDir) Open(name string) (billy.File, error) {
	p, ok := g.path(name)
	if !ok {
		return g.Filesystem.Open(name)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|noPoll, 0)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(name, ".idx") {
		return &osFile{File: f, name: name}, nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := make([]byte, info.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, err
	}
	return &memFile{name: name, Reader: bytes.NewReader(data), info: info}, nil
}

func (g gitDir) Stat(name string) (fs.FileInfo, error) {
	if p, ok := g.path(name); ok {
		return os.Stat(p)
	}
	return g.Filesystem.Stat(name)
}

// osFile is an open file of the git directory, named as go-git asked
// for it; it is only read.
type osFile struct {
	*os.File
	name string
}

func (f *osFile) Name() string  { return f.name }
func (f *osFile) Lock() error   { return errUnsupported }
func (f *osFile) Unlock() error { return errUnsupported }

// memFile is a read-only file held in memory. Stat matters: go-git checks
// an index's size against its object count before decoding it.
type memFile struct {
	name string
	*bytes.Reader
	info fs.FileInfo
}

var (
	errReadOnly    = errors.New("opened read-only")
	errUnsupported = errors.New("not supported on a file opened for reading")
)

func (f *memFile) Name() string               { return f.name }
func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Write([]byte) (int, error)  { return 0, errReadOnly }
func (f *memFile) Truncate(int64) error       { return errReadOnly }
func (f *memFile) Lock() error                { return errUnsupported }
func (f *memFile) Unlock() error              { return errUnsupported }
func (f *memFile) Close() error               { return nil }

var (
	_ billy.File = (*memFile)(nil)
	_ billy.File = (*osFile)(nil)
)
