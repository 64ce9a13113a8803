package agent

import "testing"

// TestAttended: a wait signal counts unless the agent runs in a mode with
// no dialog, as its environment or its command line says; what cannot be
// read is attended.
func TestAttended(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	args := func(a ...string) func() []string { return func() []string { return a } }
	unread := func() []string { t.Fatal("the command line read for an agent that does not need it"); return nil }
	for _, c := range []struct {
		name, agent string
		env         map[string]string
		args        func() []string
		want        bool
	}{
		{"claude -p", "claude-code", map[string]string{"CLAUDE_CODE_SESSION_ATTENDED": "0"}, unread, false},
		{"claude TUI", "claude-code", map[string]string{"CLAUDE_CODE_SESSION_ATTENDED": "1"}, unread, true},
		{"claude, older: no variable", "claude-code", nil, unread, true},
		{"copilot -p", "copilot", nil, args("/opt/copilot", "-p", "make a file", "--output-format", "json"), false},
		{"copilot --prompt=", "copilot", nil, args("copilot", "--prompt=make a file"), false},
		{"copilot TUI", "copilot", nil, args("/opt/copilot"), true},
		{"copilot TUI with a first prompt", "copilot", nil, args("copilot", "-i", "fix it"), true},
		{"copilot: -p after --", "copilot", nil, args("copilot", "--", "-p"), true},
		{"copilot: the program's own name", "copilot", nil, args("-p"), true},
		{"copilot: command line unknown", "copilot", nil, args(), true},
		{"gemini", "gemini", map[string]string{"CLAUDE_CODE_SESSION_ATTENDED": "0"}, unread, true},
		{"unknown agent", "nobody", nil, unread, true},
	} {
		if got := Attended(c.agent, env(c.env), c.args); got != c.want {
			t.Errorf("%s: Attended = %v, want %v", c.name, got, c.want)
		}
	}
}
