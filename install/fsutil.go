package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// readTarget reads a file we are about to rewrite. A symlink (dotfile
// managers link ~/.claude/settings.json) is followed, and the path of the
// real file is returned so the link itself survives. existed is false when
// there is no file yet.
func readTarget(path string) (target string, data []byte, mode fs.FileMode, existed bool, err error) {
	target = path
	if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if t, eerr := filepath.EvalSymlinks(path); eerr == nil {
			target = t
		}
	}
	fi, err := os.Stat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return target, nil, 0, false, nil
	}
	if err != nil {
		return target, nil, 0, false, fmt.Errorf("read %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return target, nil, 0, false, fmt.Errorf("read %s: not a regular file", path)
	}
	data, err = os.ReadFile(target)
	if err != nil {
		return target, nil, 0, false, fmt.Errorf("read %s: %w", path, err)
	}
	return target, data, fi.Mode().Perm(), true, nil
}

// mkdirAll creates dir and its missing parents, returning the ones it
// created, deepest last, so an uninstall can take them away again.
func mkdirAll(dir string, perm fs.FileMode) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append([]string{d}, missing...)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	return missing, nil
}

// removeEmptyDirs removes the directories we created, deepest first, as
// long as they are empty; a directory someone put files in stays.
func removeEmptyDirs(dirs []string) {
	for i := len(dirs) - 1; i >= 0; i-- {
		if os.Remove(dirs[i]) != nil {
			return
		}
	}
}
