package main

import (
	"os"
	"testing"
)

// TestInitHintRefused: CLAUDE_PID=1 would make init the session's owner,
// alive for ever, so the session could never be found dead. The hint is
// refused, and the walk finds the hook's real parent.
func TestInitHintRefused(t *testing.T) {
	r := newRepo(t)
	runHook(t, r.dir, claudePayload(t, r, "hint-1", "UserPromptSubmit", map[string]any{"prompt": "hi"}), []string{"CLAUDE_PID=1"}, "claude-code")
	s := r.load(t, "hint-1")
	if s.Owner == nil || s.Owner.PID != os.Getpid() {
		t.Errorf("owner %+v, want this test process (pid %d), the hook's parent", s.Owner, os.Getpid())
	}
}
