package install

import (
	"reflect"
	"testing"
)

// The recorded setup follows installs and uninstalls: additive installs,
// uninstalls that take away only what they name, --user never touching the
// repository's git hooks.
func TestSetupRecord(t *testing.T) {
	type step struct {
		uninstall bool
		opts      Options
		agents    []string
		unset     []string // present, not set up
	}
	for _, tc := range []struct {
		name  string
		steps []step
		want  Setup
	}{
		{"git hooks only", []step{{opts: Options{}, agents: nil}}, Setup{GitHooks: true}},
		{"no git hooks", []step{{opts: Options{NoGitHooks: true}, agents: []string{"codex"}}}, Setup{Agents: []string{"codex"}}},
		{"installs add up", []step{
			{opts: Options{Push: true}, agents: []string{"cursor"}},
			{opts: Options{NoGitHooks: true}, agents: []string{"claude-code", "cursor"}},
			{opts: Options{User: true, NoGitHooks: true}, agents: []string{"gemini"}},
		}, Setup{GitHooks: true, Push: true, Agents: []string{"claude-code", "cursor"}, UserAgents: []string{"gemini"}}},
		{"uninstall --user keeps the git hooks, and declines what it removed", []step{
			{opts: Options{User: true}, agents: []string{"gemini"}},
			{uninstall: true, opts: Options{User: true}, agents: []string{"gemini"}},
		}, Setup{GitHooks: true, Declined: []string{"gemini"}}},
		{"uninstall of one agent declines it", []step{
			{opts: Options{}, agents: []string{"claude-code", "codex"}},
			{uninstall: true, opts: Options{NoGitHooks: true, Agents: []string{"codex"}}, agents: []string{"codex"}},
		}, Setup{GitHooks: true, Agents: []string{"claude-code"}, Declined: []string{"codex"}}},
		{"agents named: those present and left out are declined", []step{
			{opts: Options{Agents: []string{"claude-code"}}, agents: []string{"claude-code"}, unset: []string{"codex", "gemini"}},
		}, Setup{GitHooks: true, Agents: []string{"claude-code"}, Declined: []string{"codex", "gemini"}}},
		{"agents found: none declined", []step{
			{opts: Options{}, agents: []string{"claude-code"}, unset: []string{"codex"}},
		}, Setup{GitHooks: true, Agents: []string{"claude-code"}}},
		{"setting up a declined agent takes it back", []step{
			{opts: Options{Agents: []string{"claude-code"}}, agents: []string{"claude-code"}, unset: []string{"codex", "gemini"}},
			{opts: Options{Agents: []string{"codex"}}, agents: []string{"codex"}},
		}, Setup{GitHooks: true, Agents: []string{"claude-code", "codex"}, Declined: []string{"gemini"}}},
		{"full uninstall", []step{
			{opts: Options{Push: true}, agents: []string{"claude-code"}},
			{uninstall: true, opts: Options{}, agents: []string{"claude-code"}},
		}, Setup{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Setup
			for _, st := range tc.steps {
				if st.uninstall {
					s.uninstalled(st.opts, st.agents)
				} else {
					s.installed(st.opts, st.agents, st.unset)
				}
			}
			if !reflect.DeepEqual(s, tc.want) {
				t.Errorf("setup = %+v, want %+v", s, tc.want)
			}
		})
	}
}

func TestSetupOptions(t *testing.T) {
	base := Options{Dir: "/r", Home: "/h", HookPath: "/bin/tether-hook"}
	got := Setup{GitHooks: true, Agents: []string{"cursor"}, UserAgents: []string{"gemini"}}.Options(base)
	want := []Options{
		{Dir: "/r", Home: "/h", HookPath: "/bin/tether-hook", Agents: []string{"cursor"}},
		{Dir: "/r", Home: "/h", HookPath: "/bin/tether-hook", User: true, NoGitHooks: true, Agents: []string{"gemini"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Options = %+v\nwant %+v", got, want)
	}
	// Nothing configured at a level is an empty, non-nil list: "no
	// agents", never "the default ones".
	if o := (Setup{}).Options(base); len(o) != 1 || o[0].Agents == nil || !o[0].NoGitHooks {
		t.Errorf("empty setup checks %+v", o)
	}
}
