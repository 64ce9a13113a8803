package capture

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// commitObject is the content of a commit by tether of tree on parent
// (none when ""), made at now, as git encodes it.
func commitObject(tree, parent, msg string, now time.Time) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\n", tree)
	if parent != "" {
		fmt.Fprintf(&b, "parent %s\n", parent)
	}
	sig := fmt.Sprintf("tether <tether@localhost> %d %s", now.Unix(), now.Format("-0700"))
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s", sig, sig, msg)
	return b.Bytes()
}

// writeLoose stores an object of type typ in the object directory objects
// as a loose object, as git does: "typ size\0content", zlib-deflated, at
// objects/xx/yyyy…, its SHA-1 name. Written to a temporary file beside
// it, then renamed into place: a reader never sees part of one, and an
// object already there is the same object.
func writeLoose(objects, typ string, content []byte) (string, error) {
	header := typ + " " + strconv.Itoa(len(content)) + "\x00"
	h := sha1.New()
	h.Write([]byte(header))
	h.Write(content)
	id := hex.EncodeToString(h.Sum(nil))
	dir := filepath.Join(objects, id[:2])
	path := filepath.Join(dir, id[2:])
	if _, err := os.Stat(path); err == nil {
		return id, nil
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", fmt.Errorf("write object: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return "", fmt.Errorf("write object: %w", err)
	}
	zw := zlib.NewWriter(tmp)
	_, err = zw.Write([]byte(header))
	if err == nil {
		_, err = zw.Write(content)
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o444) // git's loose objects are read-only
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		if _, serr := os.Stat(path); serr == nil {
			return id, nil // another writer put the same object there first
		}
		return "", fmt.Errorf("write object: %w", err)
	}
	return id, nil
}
