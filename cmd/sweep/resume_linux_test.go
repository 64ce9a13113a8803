package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetherdev/tether/state"
)

// TestResumeAttachesTheAgent: the agent resumed gets our own stdin, stdout
// and stderr, never a pipe (Gemini CLI with a piped stdout runs headless
// and ruins the session it was to resume), and a resume that fails after
// the agent's transcript went away clears the token.
func TestResumeAttachesTheAgent(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	st, err := state.Open(filepath.Join(dir, ".git"), state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	transcript := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(transcript, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := st.Mutate("s-1", func(s *state.Session) error {
		s.Agent, s.Phase, s.Worktree, s.TranscriptPath, s.Resumable = "gemini", state.PhaseEnded, dir, transcript, true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	files := make([]*os.File, 3)
	for i := range files {
		f, err := os.Create(filepath.Join(t.TempDir(), "fd"+string(rune('0'+i))))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files[i] = f
	}
	a := &app{stdin: files[0], stdout: files[1], stderr: files[2], dir: dir, getenv: os.Getenv}
	w := &workspace{store: st}
	// The agent says where its streams lead, then loses its session.
	script := `readlink /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2 >&1; rm -f "$0"; exit 3`
	err = a.runAgent(w, s, []string{"sh", "-c", script, transcript}, true)
	if err == nil || !strings.Contains(err.Error(), "gemini no longer has session s-1") {
		t.Errorf("runAgent = %v, want it to say the agent no longer has the session", err)
	}
	out, _ := os.ReadFile(files[1].Name())
	for i, f := range files {
		if !strings.Contains(string(out), f.Name()) {
			t.Errorf("the agent's fd %d is not ours (%s): it said\n%s", i, f.Name(), out)
		}
	}
	if s, err := st.Load("s-1"); err != nil || s.Resumable || !strings.Contains(s.ResumableReason, "no longer exists") {
		t.Errorf("after the failed resume: %+v, %v; want not resumable, the transcript gone", s, err)
	}
}
