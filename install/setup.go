package install

import (
	"os"
	"slices"
)

// Setup is what install set up in a repository, as the installs and
// uninstalls since have left it. It is kept in the repository's install
// record, and it is what doctor checks: what install did, never a guess
// from the directories that happen to exist.
type Setup struct {
	GitHooks   bool     `json:"git_hooks,omitempty"`   // the post-commit hook and notes.rewriteRef
	Push       bool     `json:"push,omitempty"`        // the pre-push hook too
	Agents     []string `json:"agents,omitempty"`      // agents configured in the project
	UserAgents []string `json:"user_agents,omitempty"` // agents configured at user level
	// Declined are agents the user chose not to have set up: present but
	// left out of an install's --agent, or removed by uninstall. Doctor
	// does not ask for them; an install that sets one up takes it back.
	Declined []string `json:"declined,omitempty"`
}

func (s *Setup) empty() bool {
	return !s.GitHooks && !s.Push && len(s.Agents) == 0 && len(s.UserAgents) == 0 && len(s.Declined) == 0
}

// level is the list of agents configured at the level opts installs to.
func (s *Setup) level(opts Options) *[]string {
	if opts.User {
		return &s.UserAgents
	}
	return &s.Agents
}

// installed records an Install with opts that configured agents.
// unset are the agents present that it did not set up (Result.Unset): an
// install that named its agents declines them.
func (s *Setup) installed(opts Options, agents, unset []string) {
	if !opts.NoGitHooks {
		s.GitHooks = true
		s.Push = s.Push || opts.Push
	}
	l := s.level(opts)
	*l = union(*l, agents)
	s.Declined = slices.DeleteFunc(s.Declined, func(a string) bool { return slices.Contains(agents, a) })
	if opts.Agents != nil {
		s.Declined = union(s.Declined, unset)
	}
	if len(s.Declined) == 0 {
		s.Declined = nil
	}
}

// union adds to list what it lacks of more, sorted.
func union(list, more []string) []string {
	for _, a := range more {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	slices.Sort(list)
	return list
}

// uninstalled records an Uninstall with opts that removed agents, which
// are declined from then on. The git hooks go only with a project-level
// uninstall: --user is about the user's own configs.
func (s *Setup) uninstalled(opts Options, agents []string) {
	if !opts.NoGitHooks && !opts.User {
		s.GitHooks, s.Push = false, false
	}
	l := s.level(opts)
	*l = slices.DeleteFunc(*l, func(a string) bool { return slices.Contains(agents, a) })
	if len(*l) == 0 {
		*l = nil
	}
	s.Declined = union(s.Declined, agents)
	if !s.GitHooks && len(s.Agents) == 0 && len(s.UserAgents) == 0 {
		s.Declined = nil // nothing left installed, nothing to decline
	}
}

// Options are the checks of this setup, for Check: the project level (git
// hooks and the project's agents), then the user level when any agent is
// configured there. base gives the binaries' paths and the home directory.
func (s Setup) Options(base Options) []Options {
	project := base
	project.User, project.NoGitHooks, project.Push = false, !s.GitHooks, s.Push
	project.Agents = append([]string{}, s.Agents...)
	out := []Options{project}
	if len(s.UserAgents) > 0 {
		user := base
		user.User, user.NoGitHooks, user.Push = true, true, false
		user.Agents = append([]string{}, s.UserAgents...)
		out = append(out, user)
	}
	return out
}

// Recorded returns the setup recorded for the repository at dir; ok is
// false when there is none: tether was never installed there, or by a
// tether too old to record it.
func Recorded(dir string) (s Setup, ok bool, err error) {
	r, err := findRepo(dir)
	if err != nil {
		return Setup{}, false, err
	}
	m, err := loadManifest(projectManifest(r))
	if err != nil || m.Setup == nil {
		return Setup{}, false, err
	}
	return *m.Setup, true, nil
}

// Traces reports whether tether looks installed in the repository at dir
// without a record of it: an install record without a setup (an older
// tether wrote it), or tether's post-commit hook in place.
func Traces(dir string) bool {
	in, err := newInstaller(Options{Dir: dir})
	if err != nil {
		return false
	}
	if m, err := loadManifest(projectManifest(in.repo)); err == nil && len(m.Files) > 0 {
		return true
	}
	s := in.setup(postCommitHook)
	switch {
	case s.husky != "":
		data, _ := os.ReadFile(s.husky)
		_, _, ok, _ := findBlock(string(data))
		return ok
	case s.hookFile != "":
		data, err := os.ReadFile(s.hookFile)
		return err == nil && isOurHook(data)
	}
	return false
}

// record applies change to the repository's recorded setup.
func (in *installer) record(change func(*Setup)) error {
	m, err := loadManifest(projectManifest(in.repo))
	if err != nil {
		return err
	}
	if m.Setup == nil {
		m.Setup = &Setup{}
	}
	change(m.Setup)
	if m.Setup.empty() {
		m.Setup = nil
	}
	return m.save()
}
