package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tetherdev/tether/redact"
)

// chunkName is the file name of the i-th transcript chunk.
func chunkName(i int) string {
	if i == 0 {
		return "transcript.jsonl"
	}
	return fmt.Sprintf("transcript.%03d.jsonl", i)
}

// newlineScan is how much is read at a time when looking for a line end.
const newlineScan = 64 << 10

// chunkCuts splits [from, to) of r into pieces of at most limit bytes and
// returns the end offset of each piece. A piece ends just after the last
// newline inside it, so every piece is whole JSON lines; only a single line
// longer than limit is cut mid-line.
func chunkCuts(r io.ReaderAt, from, to, limit int64) ([]int64, error) {
	var cuts []int64
	buf := make([]byte, newlineScan)
	for pos := from; ; {
		if to-pos <= limit {
			return append(cuts, to), nil
		}
		cut := pos + limit
		for hi := pos + limit; hi > pos; {
			lo := max(pos, hi-newlineScan)
			n, err := r.ReadAt(buf[:hi-lo], lo)
			if err != nil && !(errors.Is(err, io.EOF) && int64(n) == hi-lo) {
				return nil, fmt.Errorf("scan for line end at %d: %w", lo, err)
			}
			if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
				cut = lo + int64(i) + 1
				break
			}
			hi = lo
		}
		cuts = append(cuts, cut)
		pos = cut
	}
}

// writeTranscript stores the slice sp of the transcript at path as one or
// more blobs and fills in t. A missing or short file is not an error: the
// checkpoint records the transcript as unavailable and keeps the rest.
//
// The whole slice is redacted before it is split, so a secret that would
// straddle two chunks is still one match: the redacted bytes go to memory
// when the slice is small (up to Repo.inMemory, as most turns are),
// else stream into a temporary file in b.tmpDir, and are then cut into
// chunks. Memory stays bounded whatever the size of the slice.
func (b *batch) writeTranscript(path string, sp span, t *Transcript) ([]object.TreeEntry, error) {
	*t = Transcript{Path: path, From: sp.from, To: sp.to}
	unavailable := func(reason string) ([]object.TreeEntry, error) {
		t.To, t.Bytes, t.Unavailable, t.Reason = t.From, 0, true, reason
		return nil, nil
	}
	if path == "" {
		return unavailable("no transcript path recorded")
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return unavailable("transcript file is missing")
	}
	if err != nil {
		return unavailable(fmt.Sprintf("cannot open transcript: %v", err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return unavailable(fmt.Sprintf("cannot stat transcript: %v", err))
	}
	if !fi.Mode().IsRegular() {
		return unavailable("transcript is not a regular file")
	}
	size := fi.Size()
	if sp.toEOF || t.To > size {
		t.To = size
	}
	if t.From > size {
		return unavailable(fmt.Sprintf("transcript has %d bytes, fewer than the recorded offset %d", size, t.From))
	}
	src := &countingReader{r: io.NewSectionReader(f, t.From, t.To-t.From)}
	var staged io.ReaderAt // the redacted slice
	var counts redact.Counts
	var n int64
	if t.To-t.From <= b.r.inMemory {
		var buf bytes.Buffer
		counts, n, err = b.r.copyRedacted(&buf, src)
		staged = bytes.NewReader(buf.Bytes())
	} else {
		tmp, terr := b.tempFile()
		if terr != nil {
			return nil, fmt.Errorf("transcript %s: %w", path, terr)
		}
		defer func() {
			tmp.Close()
			os.Remove(tmp.Name()) // already gone where the OS allowed removing it while open
		}()
		counts, n, err = b.r.copyRedacted(tmp, src)
		staged = tmp
	}
	if err != nil {
		return nil, fmt.Errorf("transcript %s: redact: %w", path, err)
	}
	// The file may have shrunk since Stat: record the range actually read.
	t.To = t.From + src.n
	cuts, err := chunkCuts(staged, 0, n, b.r.chunk)
	if err != nil {
		return nil, fmt.Errorf("transcript %s: %w", path, err)
	}
	sum := sha256.New()
	var entries []object.TreeEntry
	var pos int64
	for i, cut := range cuts {
		h, err := b.writeStream(plumbing.BlobObject, cut-pos, io.TeeReader(io.NewSectionReader(staged, pos, cut-pos), sum))
		if err != nil {
			return nil, fmt.Errorf("transcript %s: %w", path, err)
		}
		entries = append(entries, blobEntry(chunkName(i), h))
		t.Files = append(t.Files, chunkName(i))
		pos = cut
	}
	t.Bytes = n
	t.SHA256 = hex.EncodeToString(sum.Sum(nil))
	t.Redactions = counts
	return entries, nil
}

// maxStagedInMemory is the largest slice staged in memory rather than in a
// temporary file (Repo.inMemory): creating and removing a file per
// checkpoint costs more than the rest of a small checkpoint together.
const maxStagedInMemory = 4 << 20

// tempFile creates the file a redacted slice is staged in. It is unlinked
// at once where the OS allows it (not Windows), so a crash leaves nothing
// behind; removeStaleTemps clears what a crash left elsewhere.
func (b *batch) tempFile() (*os.File, error) {
	if err := os.MkdirAll(b.tmpDir, 0o700); err != nil {
		return nil, fmt.Errorf("staging dir: %w", err)
	}
	f, err := os.CreateTemp(b.tmpDir, tempPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("staging file: %w", err)
	}
	os.Remove(f.Name())
	return f, nil
}

// tempPrefix names the staging files of redacted slices.
const tempPrefix = "redacted-slice-"

// staleTemp is the age past which a staging file is a crash leftover: no
// condense holds one for that long.
const staleTemp = 24 * time.Hour

// removeStaleTemps deletes staging files left by a crash in dir.
func removeStaleTemps(dir string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return // nothing staged yet, or unreadable: the next write reports it
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > staleTemp {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
