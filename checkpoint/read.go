package checkpoint

import (
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Read returns the checkpoint with the given ID, or the only one whose ID
// starts with the given prefix (at least 4 hex digits).
func (r *Repo) Read(id string) (*Checkpoint, error) {
	all, err := r.read(id, false)
	if err != nil {
		return nil, err
	}
	return all[0], nil
}

// ReadVariants is Read, followed by the other versions of the checkpoint
// that merges kept beside it (checkpoint.theirs-<hash>.json): two clones
// that once held different content under one ID both keep theirs visible.
func (r *Repo) ReadVariants(id string) ([]*Checkpoint, error) {
	return r.read(id, true)
}

func (r *Repo) read(id string, variants bool) ([]*Checkpoint, error) {
	if err := r.refresh(); err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", id, err)
	}
	root, err := r.checkpointsRoot()
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", id, err)
	}
	full, dir, err := r.find(root, id)
	if err != nil {
		return nil, err
	}
	entries, err := r.treeEntries(dir)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", full, err)
	}
	var ours *Checkpoint
	var theirs []*Checkpoint
	for _, e := range entries {
		isTheirs := strings.HasPrefix(e.Name, "checkpoint.theirs-")
		if e.Name != "checkpoint.json" && !(variants && isTheirs) {
			continue
		}
		cp, err := r.readCheckpointBlob(e.Hash)
		if err != nil {
			return nil, fmt.Errorf("read checkpoint %s: %s: %w", full, e.Name, err)
		}
		if isTheirs {
			theirs = append(theirs, cp)
		} else {
			ours = cp
		}
	}
	if ours == nil {
		return nil, fmt.Errorf("read checkpoint %s: no checkpoint.json", full)
	}
	return append([]*Checkpoint{ours}, theirs...), nil
}

// readAt reads a checkpoint from the tree root of CheckpointsRef.
func (r *Repo) readAt(root plumbing.Hash, id string) (*Checkpoint, error) {
	full, dir, err := r.find(root, id)
	if err != nil {
		return nil, err
	}
	e, ok, err := r.lookup(dir, "checkpoint.json")
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", full, err)
	}
	if !ok {
		return nil, fmt.Errorf("read checkpoint %s: no checkpoint.json", full)
	}
	cp, err := r.readCheckpointBlob(e.Hash)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", full, err)
	}
	return cp, nil
}

// find resolves a checkpoint ID, or a unique prefix of one, to its full ID
// and the tree of its directory, under root, the tree of CheckpointsRef's
// tip, or the archived trees it names (see eachRoot): the newest copy of
// a checkpoint wins. A whole ID stops at the first tree that holds it.
func (r *Repo) find(root plumbing.Hash, id string) (string, plumbing.Hash, error) {
	if !validID(id) {
		return "", plumbing.ZeroHash, fmt.Errorf("read checkpoint %q: not a checkpoint ID: %w", id, ErrNotFound)
	}
	matches := map[string]plumbing.Hash{}
	err := r.eachRoot(root, func(tree plumbing.Hash) (bool, error) {
		dir, ok, err := r.lookup(tree, id[:2])
		if err != nil || !ok {
			return false, err
		}
		entries, err := r.treeEntries(dir.Hash)
		if err != nil {
			return false, err
		}
		for _, e := range entries {
			if _, seen := matches[e.Name]; !seen && strings.HasPrefix(e.Name, id[2:]) {
				matches[e.Name] = e.Hash
			}
		}
		return len(id) == idLen && len(matches) > 0, nil
	})
	if err != nil {
		return "", plumbing.ZeroHash, fmt.Errorf("read checkpoint %s: %w", id, err)
	}
	switch len(matches) {
	case 0:
		return "", plumbing.ZeroHash, fmt.Errorf("checkpoint %s: %w", id, ErrNotFound)
	case 1:
		for name, h := range matches {
			return id[:2] + name, h, nil
		}
	}
	return "", plumbing.ZeroHash, fmt.Errorf("checkpoint %s: prefix matches %d checkpoints", id, len(matches))
}

func (r *Repo) readCheckpointBlob(h plumbing.Hash) (*Checkpoint, error) {
	data, err := r.readBlob(h)
	if err != nil {
		return nil, err
	}
	return parseCheckpoint(data)
}

// ErrTranscriptNotFetched reports a transcript stored on a ref this clone
// has not fetched (or not since the checkpoint was written): fetch
// TranscriptRef's ref and try again. It wraps ErrNotFound.
var ErrTranscriptNotFetched = fmt.Errorf("transcript not fetched: %w", ErrNotFound)

// TranscriptRef is the ref holding the checkpoint's stored transcript:
// the one checkpoint.json names, or LegacyTranscripts for a checkpoint
// migrated from LegacyBranch.
func (c *Checkpoint) TranscriptRef() plumbing.ReferenceName {
	if c.Transcript.Ref != "" {
		return plumbing.ReferenceName(c.Transcript.Ref)
	}
	return LegacyTranscripts
}

// WriteTranscript writes the transcript slice stored for the checkpoint
// (its files, in order: exactly the bytes that were stored) to w. A
// checkpoint without one (Transcript.Unavailable) writes nothing.
func (r *Repo) WriteTranscript(w io.Writer, c *Checkpoint) error {
	if c.Transcript.Unavailable || len(c.Transcript.Files) == 0 {
		return nil
	}
	if !validID(c.ID) || len(c.ID) < 4 {
		return fmt.Errorf("transcript of %q: not a checkpoint ID", c.ID)
	}
	if err := r.refresh(); err != nil {
		return fmt.Errorf("transcript of %s: %w", c.ID, err)
	}
	ref := c.TranscriptRef()
	tip, err := r.readRef(ref)
	if err == nil && tip.IsZero() && ref == LegacyTranscripts {
		tip, err = r.readRef(LegacyBranch) // not migrated yet
	}
	if err != nil {
		return fmt.Errorf("transcript of %s: %w", c.ID, err)
	}
	root, err := r.commitTree(tip)
	if err != nil {
		return fmt.Errorf("transcript of %s: %w", c.ID, err)
	}
	for _, name := range c.Transcript.Files {
		e, ok, err := r.lookup(root, c.ID[:2], c.ID[2:], name)
		if err != nil {
			return fmt.Errorf("transcript of %s: %w", c.ID, err)
		}
		if !ok {
			return fmt.Errorf("transcript of %s: %s on %s: %w", c.ID, name, ref, ErrTranscriptNotFetched)
		}
		blob, err := object.GetBlob(r.st, e.Hash)
		if err != nil {
			return fmt.Errorf("transcript of %s: %s: %w", c.ID, name, err)
		}
		rd, err := blob.Reader()
		if err != nil {
			return fmt.Errorf("transcript of %s: %s: %w", c.ID, name, err)
		}
		_, err = io.Copy(w, rd)
		rd.Close()
		if err != nil {
			return fmt.Errorf("transcript of %s: %s: %w", c.ID, name, err)
		}
	}
	return nil
}
