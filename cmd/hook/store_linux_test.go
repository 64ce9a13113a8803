package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// makeUnwritable makes dir refuse new files for real: chmod for an ordinary
// user, the immutable attribute for root (who ignores permissions). It
// checks that a write really fails, and undoes itself at cleanup.
func makeUnwritable(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
			t.Skipf("cannot make a directory unwritable as root here: chattr +i: %v %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("chattr", "-i", dir).Run() })
	} else {
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	}
	probe := filepath.Join(dir, "probe")
	if f, err := os.Create(probe); err == nil {
		f.Close()
		os.Remove(probe)
		t.Skipf("%s is still writable after trying to make it read-only", dir)
	}
}

// TestUnwritableStore: the store refuses writes (read-only sessions
// directory); the hook reports it once and the agent carries on.
func TestUnwritableStore(t *testing.T) {
	r := newRepo(t)
	runHook(t, r.dir, claudePayload(t, r, "ro", "SessionStart", map[string]any{"source": "startup"}), nil, "claude-code")
	sessions := filepath.Join(r.common, "tether", "sessions")
	makeUnwritable(t, sessions)

	before, since := len(r.logLines(t)), time.Now().Add(-time.Second)
	run := runHook(t, r.dir, claudePayload(t, r, "ro", "UserPromptSubmit", map[string]any{"prompt": "p"}), nil, "claude-code")
	assertFailed(t, r, run, "", before, since, "operation not permitted")
	if s := r.load(t, "ro"); s.Phase != "idle" || s.Turns != 0 {
		t.Errorf("phase %q, %d turns after a failed write; want the old state", s.Phase, s.Turns)
	}
}

// TestFullDisk: the store's file system is full (a 64 KiB tmpfs filled to
// the last block). Needs permission to mount; skipped without it.
func TestFullDisk(t *testing.T) {
	r := newRepo(t)
	store := filepath.Join(r.common, "tether")
	if err := os.Mkdir(store, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", store, "tmpfs", 0, "size=64k,mode=0700"); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (%v): full-disk case not testable here", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(store, syscall.MNT_DETACH) })

	runHook(t, r.dir, claudePayload(t, r, "full", "SessionStart", map[string]any{"source": "startup"}), nil, "claude-code")
	fill, err := os.Create(filepath.Join(store, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 4096)
	for {
		if _, err = fill.Write(block); err != nil {
			break
		}
	}
	fill.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the tmpfs: %v, want ENOSPC", err)
	}

	// The log file's last page still has room, so the failure gets its line.
	before, since := len(r.logLines(t)), time.Now().Add(-time.Second)
	run := runHook(t, r.dir, claudePayload(t, r, "full", "UserPromptSubmit", map[string]any{"prompt": "p"}), nil, "claude-code")
	assertFailed(t, r, run, "", before, since, "no space left on device")
	if s := r.load(t, "full"); s.Phase != "idle" || s.Turns != 0 {
		t.Errorf("phase %q, %d turns after a failed write; want the old state", s.Phase, s.Turns)
	}
}
