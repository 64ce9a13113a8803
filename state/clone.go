package state

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// cloneFile holds the clone's name (CloneID).
const cloneFile = "clone"

// cloneIDLen is the length of a clone's name: 12 hex digits, 48 random
// bits, so the clones of one team never meet twice.
const cloneIDLen = 12

// CloneID names this clone of the repository among the others sharing its
// checkpoints: what a clone alone writes (its transcripts) goes under its
// name, so no two clones ever update the same ref. It is random, made on
// first use and kept in the store (a store copied by hand keeps the same
// name; whatever shares it then merges as any shared ref does).
func (s *Store) CloneID() (string, error) {
	root, err := s.openRoot(true)
	if err != nil {
		return "", fmt.Errorf("clone id: %w", err)
	}
	data, err := root.ReadFile(cloneFile)
	switch {
	case err == nil:
		id := strings.TrimSpace(string(data))
		if validCloneID(id) {
			return id, nil
		}
		if qerr := s.quarantine(root, cloneFile, "", fmt.Errorf("not a clone id: %q", id)); qerr != nil {
			return "", fmt.Errorf("clone id: %w", qerr)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("clone id: %w", err)
	}
	var b [cloneIDLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("clone id: %w", err)
	}
	id := hex.EncodeToString(b[:])
	// Written aside, then linked into place: the name appears with its
	// content, and of two processes naming the clone at once the second
	// finds the first one's name.
	tmp := cloneFile + "." + id + ".tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return "", fmt.Errorf("clone id: %w", err)
	}
	defer root.Remove(tmp)
	_, err = f.WriteString(id + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Link(tmp, cloneFile)
		if errors.Is(err, fs.ErrExist) {
			return s.CloneID()
		}
	}
	if err == nil {
		err = syncDir(root, ".")
	}
	if err != nil {
		return "", fmt.Errorf("clone id: %w", err)
	}
	return id, nil
}

func validCloneID(id string) bool {
	if len(id) != cloneIDLen {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}
