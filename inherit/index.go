package inherit

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// indexHeader starts the index file; a file without it is not read.
const indexHeader = "# tether linked commits v1"

// Entry is what matching needs of one linked commit.
type Entry struct {
	Commit  string
	Tree    string
	PatchID string // "" for a commit with no patch (a merge, an empty change)
	// Base is where the commit's line of work left the default branch
	// (their merge base), "" when the commit is on it: the range
	// Base..Commit is what a squash of a branch ending at Commit carries.
	Base string
	// Change names the combined change of Base..Commit, file for file
	// (changeID); IDs are the checkpoints of the linked commits in it.
	Change string
	IDs    []string
}

// index is the linked commits known, and the notes tip they were read at.
type index struct {
	notes   string
	entries map[string]*Entry
}

// field and unfield write "" as "-", so that every line has six fields.
func field(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func unfield(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

// readIndex reads the index file; a missing or foreign file is empty.
func readIndex(path string) (*index, error) {
	ix := &index{entries: map[string]*Entry{}}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ix, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	if !sc.Scan() || sc.Text() != indexHeader {
		return ix, sc.Err()
	}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "notes":
			ix.notes = unfield(f[1])
		case len(f) == 6 && validHex(f[0]):
			e := &Entry{Commit: f[0], Tree: unfield(f[1]), PatchID: unfield(f[2]), Base: unfield(f[3]), Change: unfield(f[4])}
			if ids := unfield(f[5]); ids != "" {
				e.IDs = strings.Split(ids, ",")
			}
			ix.entries[e.Commit] = e
		}
	}
	return ix, sc.Err()
}

// write replaces the index file: a temporary file, fsynced, renamed.
func (ix *index) write(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".index-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	fmt.Fprintf(w, "%s\nnotes %s\n", indexHeader, field(ix.notes))
	for _, e := range ix.entries {
		fmt.Fprintf(w, "%s %s %s %s %s %s\n", e.Commit, field(e.Tree), field(e.PatchID), field(e.Base), field(e.Change), field(strings.Join(e.IDs, ",")))
	}
	err = w.Flush()
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// validHex reports whether s is a full SHA-1 object name.
func validHex(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
