package checkpoint

import (
	"bufio"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"

	"github.com/tetherdev/tether/internal/durable"
)

// packWriter appends objects to a temporary pack file, undeltified, and
// turns it into a pack and its index in objects/pack. Git's format: a
// 12-byte header ("PACK", version 2, object count), one entry per object
// (a type-and-size header, then the zlib-compressed content), and the
// SHA-1 of all that; the .idx (version 2, written by go-git's idxfile)
// maps each object to its offset and the CRC-32 of its entry.
type packWriter struct {
	dir     string // objects/pack
	f       *os.File
	end     int64 // where the next entry goes
	entries []packEntry

	// Reused for every entry: a zlib writer allocates a megabyte of state.
	zw *zlib.Writer
	bw *bufio.Writer
}

type packEntry struct {
	hash   plumbing.Hash
	offset int64
	crc    uint32
}

const packHeaderLen = 12

func newPackWriter(objectsDir string) (*packWriter, error) {
	dir := filepath.Join(objectsDir, "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "tmp_pack_")
	if err != nil {
		return nil, fmt.Errorf("create pack: %w", err)
	}
	// The count is filled in by finish.
	if _, err := f.Write(packHeader(0)); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("write pack header: %w", err)
	}
	return &packWriter{dir: dir, f: f, end: packHeaderLen}, nil
}

func packHeader(count uint32) []byte {
	h := []byte{'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(h[8:], count)
	return h
}

// add appends an object of the given type and size read from src and
// returns its hash. dup reports whether the hash is one to leave out
// (stored already): the entry is then cut off again.
func (p *packWriter) add(typ plumbing.ObjectType, size int64, src io.Reader, dup func(plumbing.Hash) bool) (plumbing.Hash, error) {
	start := p.end
	crc := crc32.NewIEEE()
	out := &offsetWriter{f: p.f, off: start}
	if p.bw == nil {
		p.bw = bufio.NewWriterSize(nil, 64<<10)
		p.zw = zlib.NewWriter(nil)
	}
	p.bw.Reset(io.MultiWriter(out, crc))
	p.zw.Reset(p.bw)
	if _, err := p.bw.Write(entryHeader(typ, size)); err != nil {
		return plumbing.ZeroHash, err
	}
	hs := plumbing.NewHasher(typ, size)
	if _, err := io.CopyN(io.MultiWriter(p.zw, hs), src, size); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s object of %d bytes: %w", typ, size, err)
	}
	if err := p.zw.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := p.bw.Flush(); err != nil {
		return plumbing.ZeroHash, err
	}
	h := hs.Sum()
	if dup(h) {
		return h, p.f.Truncate(start)
	}
	p.end = out.off
	p.entries = append(p.entries, packEntry{hash: h, offset: start, crc: crc.Sum32()})
	return h, nil
}

// entryHeader is a pack entry's header: the type in bits 4-6 of the first
// byte, the size in its low 4 bits and 7 bits of each byte after, the high
// bit saying another byte follows.
func entryHeader(typ plumbing.ObjectType, size int64) []byte {
	b := []byte{byte(typ)<<4 | byte(size&0x0f)}
	for size >>= 4; size > 0; size >>= 7 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
	}
	return b
}

// offsetWriter writes at increasing offsets of a file.
type offsetWriter struct {
	f   *os.File
	off int64
}

func (w *offsetWriter) Write(b []byte) (int, error) {
	n, err := w.f.WriteAt(b, w.off)
	w.off += int64(n)
	return n, err
}

// finish completes the pack and its index, makes both durable, and moves
// them into place: the pack first, then the index that makes git and
// go-git see it, then the directory is fsynced. Nothing is left behind
// when it fails, and an empty writer leaves nothing at all.
func (p *packWriter) finish() (err error) {
	defer func() {
		if p.f != nil {
			p.f.Close()
			os.Remove(p.f.Name())
		}
	}()
	if len(p.entries) == 0 {
		return nil
	}
	if _, err := p.f.WriteAt(packHeader(uint32(len(p.entries))), 0); err != nil {
		return fmt.Errorf("write pack header: %w", err)
	}
	sum := sha1.New()
	if _, err := io.Copy(sum, io.NewSectionReader(p.f, 0, p.end)); err != nil {
		return fmt.Errorf("checksum pack: %w", err)
	}
	var packHash plumbing.Hash
	copy(packHash[:], sum.Sum(nil))
	if _, err := p.f.WriteAt(packHash[:], p.end); err != nil {
		return fmt.Errorf("write pack checksum: %w", err)
	}
	// The pack is flushed while the index is written and flushed: the file
	// system commits the two together.
	synced := make(chan error, 1)
	go func() { synced <- p.f.Sync() }()
	idx, err := p.index(packHash)
	if serr := <-synced; serr != nil {
		if err == nil {
			os.Remove(idx)
		}
		return fmt.Errorf("sync pack: %w", serr)
	}
	if err != nil {
		return err
	}
	defer os.Remove(idx) // gone by then, unless something failed
	base := filepath.Join(p.dir, "pack-"+packHash.String())
	if err := p.f.Chmod(0o444); err != nil {
		return fmt.Errorf("pack: %w", err)
	}
	if err := p.f.Close(); err != nil {
		return fmt.Errorf("pack: %w", err)
	}
	tmp := p.f.Name()
	p.f = nil
	defer os.Remove(tmp) // gone by then, unless something failed
	if err := os.Rename(tmp, base+".pack"); err != nil {
		return fmt.Errorf("store pack: %w", err)
	}
	if err := os.Rename(idx, base+".idx"); err != nil {
		return fmt.Errorf("store pack index: %w", err)
	}
	return durable.SyncDir(p.dir)
}

// index writes the pack's index to a synced temporary file and returns
// its name.
func (p *packWriter) index(packHash plumbing.Hash) (string, error) {
	w := new(idxfile.Writer)
	if err := w.OnHeader(uint32(len(p.entries))); err != nil {
		return "", err
	}
	for _, e := range p.entries {
		w.Add(e.hash, uint64(e.offset), e.crc)
	}
	if err := w.OnFooter(packHash); err != nil {
		return "", err
	}
	mem, err := w.Index()
	if err != nil {
		return "", fmt.Errorf("build pack index: %w", err)
	}
	f, err := os.CreateTemp(p.dir, "tmp_idx_")
	if err != nil {
		return "", fmt.Errorf("write pack index: %w", err)
	}
	bw := bufio.NewWriter(f)
	_, err = idxfile.NewEncoder(bw).Encode(mem)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Chmod(0o444)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write pack index: %w", err)
	}
	return f.Name(), nil
}

// abandon drops the temporary pack.
func (p *packWriter) abandon() {
	if p.f != nil {
		p.f.Close()
		os.Remove(p.f.Name())
		p.f = nil
	}
}
