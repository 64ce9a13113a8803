//go:build !windows

package state

import "os"

// syncDir fsyncs a directory of the store, making the names created,
// renamed or removed in it durable.
func syncDir(root *tree, dir string) error {
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	return syncClose(d)
}

// syncPath fsyncs a directory outside the store (the common dir, after the
// store directory is created in it).
func syncPath(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return syncClose(d)
}

func syncClose(d *os.File) error {
	err := d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
