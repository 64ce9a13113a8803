package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tetherdev/tether/internal/gittest"
)

// TestReadsWhatGitWrote reads, through the storage, commits that real git
// packed into several packs (each index read whole) and one it left
// loose, and the refs pointing at them, packed and loose.
func TestReadsWhatGitWrote(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	var commits []string
	for i, text := range []string{"one", "two", "three"} {
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte(text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Run(t, dir, "add", "f")
		gittest.Run(t, dir, "commit", "-qm", text)
		commits = append(commits, gittest.Run(t, dir, "rev-parse", "HEAD"))
		if i < 2 {
			gittest.Run(t, dir, "repack", "-q") // a pack of what is new: one per commit
		}
	}
	gittest.Run(t, dir, "pack-refs", "--all")
	gittest.Run(t, dir, "update-ref", "refs/tether/loose", commits[0])
	idx, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	if len(idx) != 2 {
		t.Fatalf("want 2 packs, git made %d", len(idx))
	}

	st := Open(filepath.Join(dir, ".git"))
	for i, want := range []string{"one", "two", "three"} {
		c, err := object.GetCommit(st, plumbing.NewHash(commits[i]))
		if err != nil {
			t.Fatalf("commit %s (%s): %v", commits[i], want, err)
		}
		if strings.TrimSpace(c.Message) != want {
			t.Errorf("commit %s: message %q, want %q", commits[i], c.Message, want)
		}
		f, err := c.File("f")
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := f.Contents(); got != want+"\n" {
			t.Errorf("commit %s: f is %q, want %q", commits[i], got, want+"\n")
		}
	}
	for name, want := range map[string]string{"refs/heads/main": commits[2], "refs/tether/loose": commits[0]} {
		ref, err := st.Reference(plumbing.ReferenceName(name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ref.Hash().String() != want {
			t.Errorf("%s = %s, want %s", name, ref.Hash(), want)
		}
	}
}

// TestOpenKeepsNamesAndRefusesWrites: files open under the name go-git
// asked for, pack indexes are whole and read-only, and a name that climbs
// out of the git directory gets the soft chroot's answer, not the file.
func TestOpenKeepsNamesAndRefusesWrites(t *testing.T) {
	dir := t.TempDir()
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	gittest.Run(t, dir, "commit", "-q", "--allow-empty", "-m", "empty")
	gittest.Run(t, dir, "repack", "-q")
	gd := filepath.Join(dir, ".git")
	fs := Open(gd).Filesystem()

	f, err := fs.Open("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != "HEAD" {
		t.Errorf("Name() = %q, want HEAD", f.Name())
	}
	f.Close()

	idx, _ := filepath.Glob(filepath.Join(gd, "objects", "pack", "*.idx"))
	rel, _ := filepath.Rel(gd, idx[0])
	f, err = fs.Open(rel)
	if err != nil {
		t.Fatal(err)
	}
	disk, _ := os.ReadFile(idx[0])
	buf := make([]byte, len(disk)+1)
	n, _ := f.Read(buf)
	if string(buf[:n]) != string(disk) {
		t.Errorf("index read %d bytes, the file has %d", n, len(disk))
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Error("a pack index opened for writing")
	}

	outside := filepath.Join(filepath.Dir(dir), "outside-"+filepath.Base(dir))
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(outside) })
	if f, err := fs.Open(filepath.Join("..", "..", filepath.Base(outside))); err == nil {
		data := make([]byte, 6)
		n, _ := f.Read(data)
		if string(data[:n]) == "secret" {
			t.Error("a name climbing out of the git directory opened the file there")
		}
		f.Close()
	}
}
