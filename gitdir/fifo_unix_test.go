//go:build unix

package gitdir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFIFOsDoNotHang plants FIFOs where git keeps small files, as anyone
// could in a shared directory such as /tmp: opening one for reading would
// block forever, so the lookup must refuse them instead.
func TestFIFOsDoNotHang(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		if k == "GIT_CEILING_DIRECTORIES" {
			return filepath.Dir(root)
		}
		return ""
	}
	mkfifo := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mkfifo(p, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	// A FIFO named .git is not a repository: the walk goes on past it.
	mkfifo(filepath.Join(root, "a", ".git"))
	if err := os.MkdirAll(filepath.Join(root, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := FindEnv(filepath.Join(root, "a", "b"), env); !errors.Is(err, ErrNotRepo) {
		t.Fatalf("FindEnv past a FIFO .git = %v, want ErrNotRepo", err)
	}
	// A repository whose commondir, HEAD or packed-refs is a FIFO is an
	// error, not a hang.
	for _, name := range []string{"commondir", "packed-refs", "HEAD"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, name, ".git")
			for _, d := range []string{"refs/heads", "objects"} {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if name == "HEAD" {
				mkfifo(filepath.Join(dir, "HEAD"))
				if _, _, err := Head(dir, dir); err == nil {
					t.Fatal("Head read a FIFO HEAD")
				}
				return
			}
			if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			mkfifo(filepath.Join(dir, name))
			r, err := FindEnv(filepath.Dir(dir), env)
			if name == "commondir" {
				if err == nil {
					t.Fatalf("FindEnv with a FIFO commondir = %+v", r)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := Head(r.GitDir, r.CommonDir); err == nil {
				t.Fatal("Head read a FIFO packed-refs")
			}
		})
	}
}
