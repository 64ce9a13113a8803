//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/internal/mockllm"
	"github.com/tetherdev/tether/sweep"
)

// claudeKey is the API key the mock is given; the TUI approves it by its
// last 20 characters in ~/.claude.json.
const claudeKey = "sk-ant-e2e-0123456789abcdefghijklmnop"

// claudeRepo is a scratch repository with tether installed for Claude Code
// 2.1.328, which runs offline against mock: onboarding done, the key
// approved and the repository trusted, as the TUI needs.
func claudeRepo(t *testing.T, mock *mockllm.Server) *repo {
	t.Helper()
	bins := npmCLI(t, "@anthropic-ai/claude-code", "2.1.328")
	return newRepo(t, func(r *repo) {
		r.addPath(bins)
		r.setenv("ANTHROPIC_BASE_URL="+mock.URL, "ANTHROPIC_API_KEY="+claudeKey,
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
			"DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_MAX_RETRIES=0")
		cfg, err := json.Marshal(map[string]any{
			"hasCompletedOnboarding": true,
			"customApiKeyResponses":  map[string]any{"approved": []string{claudeKey[len(claudeKey)-20:]}, "rejected": []string{}},
			"projects":               map[string]any{r.Dir: map[string]any{"hasTrustDialogAccepted": true}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(r.Home, ".claude.json"), cfg, 0o600); err != nil {
			t.Fatal(err)
		}
	}, "--agent", "claude-code")
}

// claudePrint starts `claude -p PROMPT` with the tools the mock's write
// turn uses (as root, --dangerously-skip-permissions is refused).
func claudePrint(r *repo, prompt string, extra ...string) *proc {
	return r.start("claude", append([]string{"-p", prompt, "--allowedTools", "Write,Bash"}, extra...)...)
}

// onlyClaudeSession is the one session of the repository.
func onlyClaudeSession(t *testing.T, rows []sweep.Row) sweep.Row {
	t.Helper()
	if len(rows) != 1 || rows[0].Agent != "claude-code" {
		t.Fatalf("want one claude-code session, have %+v", rows)
	}
	return rows[0]
}

func TestClaudePrintTurns(t *testing.T) {
	t.Parallel()
	mock := mockllm.NewAnthropic(t)
	r := claudeRepo(t, mock)

	// A plain turn: recorded, owned by the claude process, ended cleanly.
	p := claudePrint(r, "say hello")
	if err := p.wait(2 * time.Minute); err != nil {
		t.Fatalf("claude -p: %v", err)
	}
	if !strings.Contains(p.output(), mockllm.Reply) || !mock.Saw("say hello") {
		t.Fatalf("the prompt did not reach the mock, or its reply did not come back: %q", p.output())
	}
	s := onlyClaudeSession(t, r.sessions(false))
	if s.Phase != "ended" || s.EndReason != "session-end" || s.Interrupted || s.Turns != 1 || s.LastPrompt != "say hello" {
		t.Errorf("after a clean -p turn: %+v", s)
	}
	if s.Owner == nil || s.Owner.PID != p.Cmd.Process.Pid || s.Owner.Name != "claude" {
		t.Errorf("owner %+v, want the claude process %d", s.Owner, p.Cmd.Process.Pid)
	}
	t.Logf("session %+v", s)
	id := s.ID
	_ = id
}
