package main

import (
	"testing"

	"github.com/tetherdev/tether/sweep"
)

func TestEndingWords(t *testing.T) {
	for _, tc := range []struct {
		e    ending
		want string
	}{
		{ending{}, ""},
		{ending{reason: "session-end", agent: "claude-code", note: "claude-code: other"}, "ended by the agent"},
		{ending{reason: "session-end", agent: "claude-code", note: "claude-code: prompt_input_exit"}, "ended by the agent (the user quit)"},
		{ending{reason: "session-end", agent: "gemini", note: "gemini: exit"}, "ended by the agent (the user quit)"},
		{ending{reason: "session-end", agent: "claude-code", note: "claude-code: clear"}, "ended by the agent (/clear)"},
		{ending{reason: "session-end", agent: "copilot", note: "copilot: complete"}, "ended by the agent"},
		{ending{reason: "session-end", agent: "copilot", note: "copilot: error"}, "ended by the agent (after an error)"},
		{ending{reason: "session-end", agent: "claude-code", note: "claude-code: bypass_permissions_disabled"}, "ended by the agent (bypass_permissions_disabled)"},
		{ending{reason: "session-end", agent: "codex"}, "ended by the agent"},
		{ending{reason: "interrupted", agent: "claude-code"}, "killed mid-turn"},
		{ending{reason: "interrupted", agent: "claude-code", note: "claude-code: other"}, "stopped mid-turn"},
		{ending{reason: "interrupted", agent: "gemini", note: "gemini: exit"}, "stopped mid-turn (the user quit)"},
		{ending{reason: "owner-exited", agent: "opencode"}, "exited"},
		{ending{reason: "stale", agent: "codex"}, "given up: no sign of life"},
		{ending{reason: "github", agent: "codex", github: "PR #12 merged"}, "ended on GitHub (PR #12 merged)"},
		{ending{reason: "stale", agent: "codex", github: "issue #3 closed"}, "given up: no sign of life (issue #3 closed)"},
		{ending{reason: "manual", agent: "claude-code", note: "done on another machine"}, "ended by hand: done on another machine"},
		{ending{reason: "manual", agent: "claude-code"}, "ended by hand"},
		// A person's note that happens to look like an agent's is theirs.
		{ending{reason: "manual", agent: "claude-code", note: "codex: other"}, "ended by hand: codex: other"},
		{ending{reason: "something-newer", agent: "claude-code"}, "something-newer"},
	} {
		if got := tc.e.words(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestLivenessWord(t *testing.T) {
	for _, tc := range []struct {
		r    sweep.Row
		want string
	}{
		{sweep.Row{Phase: "active", Liveness: "alive"}, "alive"},
		{sweep.Row{Phase: "active", Liveness: "unknown"}, "unknown"},
		{sweep.Row{Phase: "active", Liveness: "dead"}, "died"},
		{sweep.Row{Phase: "waiting", Liveness: "dead"}, "died"},
		{sweep.Row{Phase: "idle", Liveness: "dead"}, "exited"},
		{sweep.Row{Phase: "ended", Liveness: "dead"}, "exited"},
		{sweep.Row{Phase: "ended", Liveness: "dead", Interrupted: true}, "died"},
		{sweep.Row{Phase: "ended", Liveness: "alive"}, "alive"},
	} {
		if got := livenessWord(tc.r); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
		}
	}
}
