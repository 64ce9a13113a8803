package state

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStagingFile(t *testing.T) {
	s, dir := newStore(t, Options{})
	f, err := s.StagingFile("slice-")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("staged"); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(io.NewSectionReader(f, 0, 6)); err != nil || string(b) != "staged" {
		t.Errorf("read back %q, %v", b, err)
	}
	// Unlinked at once: a crash leaves nothing in tmp/.
	if names, err := os.ReadDir(filepath.Join(dir, stagingDir)); err != nil || len(names) != 0 {
		t.Errorf("tmp/ holds %v, %v", names, err)
	}
}

// TestStagingConfined: a symlink planted at tmp/ leads neither the staging
// file nor the clean-up anywhere, outside the store or inside it.
func TestStagingConfined(t *testing.T) {
	s, dir := newStore(t, Options{})
	mustMutate(t, s, "old", func(tx *Tx) error { tx.Session.Phase = PhaseIdle; return nil })
	past := time.Now().Add(-72 * time.Hour)
	state := filepath.Join(dir, "sessions", "old.json")
	elsewhere := t.TempDir()
	victim := filepath.Join(elsewhere, "slice-victim")
	writeRaw(t, victim, "keep")
	for _, p := range []string{state, victim} {
		if err := os.Chtimes(p, past, past); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(dir, stagingDir)
	for _, target := range []string{elsewhere, "sessions"} {
		if err := os.Symlink(target, tmp); err != nil {
			t.Fatal(err)
		}
		if target == elsewhere {
			if f, err := s.StagingFile("slice-"); err == nil {
				f.Close()
				t.Errorf("StagingFile through tmp -> %s succeeded", target)
			}
		}
		s.RemoveStaleStaging("", time.Now())
		for _, p := range []string{state, victim} {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("tmp -> %s: %s: %v", target, p, err)
			}
		}
		if err := os.Remove(tmp); err != nil {
			t.Fatal(err)
		}
	}
	// A real staging directory is cleared of old files with the prefix only.
	writeRaw(t, filepath.Join(tmp, "slice-old"), "x")
	writeRaw(t, filepath.Join(tmp, "other-old"), "x")
	writeRaw(t, filepath.Join(tmp, "slice-new"), "x")
	for _, n := range []string{"slice-old", "other-old"} {
		if err := os.Chtimes(filepath.Join(tmp, n), past, past); err != nil {
			t.Fatal(err)
		}
	}
	s.RemoveStaleStaging("slice-", time.Now())
	names, err := readDirNames(mustRoot(t, s), stagingDir)
	if err != nil || len(names) != 2 || names[0] != "other-old" || names[1] != "slice-new" {
		t.Errorf("tmp/ holds %v, %v; want other-old and slice-new", names, err)
	}
}

func mustRoot(t *testing.T, s *Store) *tree {
	t.Helper()
	r, err := s.openRoot(false)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
