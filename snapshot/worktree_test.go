package snapshot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tetherdev/tether/internal/gittest"
)

// TestUncommitted compares paths of a real work tree with the commit git
// made of them: equal until a file is edited (staged or not), deleted,
// added, made executable or not, retargeted as a symlink, or replaced by
// a directory; equal again once put back.
func TestUncommitted(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		return gittest.Run(t, dir, args...)
	}
	write := func(name, content string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write("a.txt", "alpha\n", 0o644)
	write("sub/run.sh", "#!/bin/sh\n", 0o755)
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-qm", "files")
	head := git("rev-parse", "HEAD")
	r, err := OpenReader(filepath.Join(dir, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, want bool, paths ...string) {
		t.Helper()
		got, err := r.Uncommitted(head, dir, paths)
		if err != nil || got != want {
			t.Errorf("%s: Uncommitted(%v) = %v, %v; want %v", what, paths, got, err, want)
		}
	}
	all := []string{"a.txt", "sub/run.sh", "link", "new.txt"}
	check("as committed", false, all...)

	write("a.txt", "alpha, edited\n", 0o644)
	check("edited", true, "a.txt")
	git("add", "a.txt")
	check("edited and staged", true, "a.txt")
	write("a.txt", "alpha\n", 0o644)
	check("put back (the index still differs: the work tree decides)", false, "a.txt")

	write("new.txt", "new\n", 0o644)
	check("added", true, "new.txt")
	os.Remove(filepath.Join(dir, "new.txt"))

	os.Remove(filepath.Join(dir, "a.txt"))
	check("deleted", true, "a.txt")
	write("a.txt", "alpha\n", 0o644)

	os.Chmod(filepath.Join(dir, "sub/run.sh"), 0o644)
	check("no longer executable", true, "sub/run.sh")
	os.Chmod(filepath.Join(dir, "sub/run.sh"), 0o755)

	os.Remove(filepath.Join(dir, "link"))
	os.Symlink("sub/run.sh", filepath.Join(dir, "link"))
	check("symlink retargeted", true, "link")
	os.Remove(filepath.Join(dir, "link"))
	os.Symlink("a.txt", filepath.Join(dir, "link"))

	os.Remove(filepath.Join(dir, "a.txt"))
	os.Mkdir(filepath.Join(dir, "a.txt"), 0o755)
	check("a directory where the file was", true, "a.txt")
	os.Remove(filepath.Join(dir, "a.txt"))
	write("a.txt", "alpha\n", 0o644)

	check("all put back", false, all...)
}
