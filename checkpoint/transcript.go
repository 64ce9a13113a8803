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

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	agents "github.com/tetherdev/tether/agent" // the name agent is the tests' stand-in
	"github.com/tetherdev/tether/redact"
	"github.com/tetherdev/tether/state"
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
// checkpoint records the transcript as unavailable and keeps the rest. So
// is one that is not a regular file inside the directory its agent keeps
// transcripts in (agents.OpenTranscript): it is never read.
//
// The whole slice is redacted before it is split, so a secret that would
// straddle two chunks is still one match: the redacted bytes go to memory
// when the slice is small (up to Repo.inMemory, as most turns are), else
// stream into a staging file of the store, and are then cut into chunks.
// Memory stays bounded whatever the size of the slice.
func (b *batch) writeTranscript(path string, loc transcriptLoc, sp span, t *Transcript) ([]object.TreeEntry, error) {
	*t = Transcript{Path: path, From: sp.from, To: sp.to}
	unavailable := func(reason string) ([]object.TreeEntry, error) {
		t.To, t.Bytes, t.Unavailable, t.Reason = t.From, 0, true, reason
		return nil, nil
	}
	if path == "" {
		return unavailable("no transcript path recorded")
	}
	f, err := agents.OpenTranscript(loc.root, path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return unavailable("transcript file is missing")
	case errors.Is(err, agents.ErrTranscriptOutside):
		return unavailable(fmt.Sprintf("transcript is outside %s, where %s keeps its transcripts: not read", loc.root, loc.agent))
	case errors.Is(err, agents.ErrTranscriptNotRegular):
		return unavailable("transcript is not a regular file: not read")
	case err != nil:
		return unavailable(fmt.Sprintf("cannot open transcript: %v", err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return unavailable(fmt.Sprintf("cannot stat transcript: %v", err))
	}
	size := fi.Size()
	if sp.toEOF || t.To > size {
		t.To = size
	}
	if t.From > size {
		return unavailable(fmt.Sprintf("transcript has %d bytes, fewer than the recorded offset %d", size, t.From))
	}
	src := &countingReader{r: io.NewSectionReader(f, t.From, t.To-t.From)}
	entries, err := b.storeSlice(path, src, t.To-t.From, t)
	// The file may have shrunk since Stat: record the range actually read.
	t.To = t.From + src.n
	return entries, err
}

// writeConversation stores the messages of a checkpoint's turns as the
// agent gave them (an agent that keeps its sessions in a database,
// state.Session.AgentDB), as writeTranscript stores a transcript slice:
// redacted whole, then cut into chunks of whole lines. A conversation that
// could not be read is recorded as unavailable, with the reason.
func (b *batch) writeConversation(c conversationSlice, t *Transcript) ([]object.TreeEntry, error) {
	*t = Transcript{Path: c.source, To: int64(len(c.data))}
	switch {
	case c.err != nil:
		t.To, t.Unavailable, t.Reason = 0, true, c.err.Error()
		return nil, nil
	case len(c.data) == 0:
		t.Unavailable, t.Reason = true, "the agent has no messages for these turns"
		return nil, nil
	}
	return b.storeSlice(c.source, bytes.NewReader(c.data), int64(len(c.data)), t)
}

// conversationSlice is what an agent said in a checkpoint's turns, read
// by asking it (see Repo.SetConversations), or why it could not be read.
type conversationSlice struct {
	source string // the command that read it, e.g. "opencode export ses_…"
	data   []byte // JSON lines
	err    error
}

// storeSlice redacts size bytes of src and stores them as the chunks of
// t, which it completes (files, bytes, sha256, redactions); name says
// where they came from, for errors.
func (b *batch) storeSlice(name string, src io.Reader, size int64, t *Transcript) ([]object.TreeEntry, error) {
	var staged io.ReaderAt // the redacted slice
	var counts redact.Counts
	var n int64
	var err error
	if size <= b.r.inMemory {
		var buf bytes.Buffer
		counts, n, err = b.r.copyRedacted(&buf, src)
		staged = bytes.NewReader(buf.Bytes())
	} else {
		tmp, terr := b.st.StagingFile(tempPrefix)
		if terr != nil {
			return nil, fmt.Errorf("transcript %s: %w", name, terr)
		}
		defer func() {
			tmp.Close()
			os.Remove(tmp.Name()) // already gone where the OS allowed removing it while open
		}()
		counts, n, err = b.r.copyRedacted(tmp, src)
		staged = tmp
	}
	if err != nil {
		return nil, fmt.Errorf("transcript %s: redact: %w", name, err)
	}
	cuts, err := chunkCuts(staged, 0, n, b.r.chunk)
	if err != nil {
		return nil, fmt.Errorf("transcript %s: %w", name, err)
	}
	sum := sha256.New()
	var entries []object.TreeEntry
	var pos int64
	for i, cut := range cuts {
		h, err := b.writeStream(plumbing.BlobObject, cut-pos, io.TeeReader(io.NewSectionReader(staged, pos, cut-pos), sum))
		if err != nil {
			return nil, fmt.Errorf("transcript %s: %w", name, err)
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
// staging file (Repo.inMemory): creating and removing a file per
// checkpoint costs more than the rest of a small checkpoint together.
const maxStagedInMemory = 4 << 20

// transcriptLoc is where a session's agent keeps its transcripts: the only
// directory its transcript is read from.
type transcriptLoc struct {
	agent string
	root  string
}

// transcriptLocOf is the transcript directory the hook recorded for the
// session, from the agent's environment. A session recorded before tether
// recorded it gets the directory this process's environment gives.
func transcriptLocOf(s *state.Session) transcriptLoc {
	root := s.TranscriptRoot
	if root == "" {
		root = agents.TranscriptRoot(s.Agent, os.Getenv)
	}
	return transcriptLoc{agent: s.Agent, root: root}
}

// tempPrefix names the staging files of redacted slices
// (state.Store.StagingFile).
const tempPrefix = "redacted-slice-"

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
