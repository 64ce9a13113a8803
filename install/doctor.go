package install

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Problem is one thing wrong with the installation, for `tether-sweep
// doctor` to print and, with --fix, to repair.
type Problem struct {
	What   string // one line
	Detail string // why it matters and what to do; may span lines
	// Fix repairs the problem the way Install would; nil when it cannot be
	// repaired safely without the user (their own settings, another tool's
	// config, a missing binary).
	Fix func() error
}

// Check looks for what Install would change, without changing anything:
// git hooks missing, foreign or out of date, notes.rewriteRef unset, agent
// configs without our entries or with stale ones, and the tether binaries
// the hooks run not being where the hooks look for them.
func Check(opts Options) []Problem {
	in, err := newInstaller(opts)
	if err != nil {
		return []Problem{{What: "cannot check tether's installation", Detail: err.Error()}}
	}
	lookPath := opts.LookPath
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	// Each fix starts from a fresh installer, so it works whenever it runs
	// and reports nothing into this check.
	fix := func(do func(*installer) error) func() error {
		return func() error {
			in, err := newInstaller(opts)
			if err != nil {
				return err
			}
			return do(in)
		}
	}

	var ps []Problem
	var bins []binaryUse // the binaries the installed hooks run
	if !opts.NoGitHooks {
		for _, h := range in.gitHooks() {
			if p := in.checkHook(h, fix); p != nil {
				ps = append(ps, *p)
			}
		}
		switch ok, err := in.repo.hasRewriteRef(); {
		case err != nil:
			ps = append(ps, Problem{What: "cannot read notes.rewriteRef", Detail: err.Error()})
		case !ok:
			ps = append(ps, Problem{
				What:   "notes.rewriteRef does not include " + rewriteRef,
				Detail: "git will not carry tether's notes to rewritten commits (amend, rebase).",
				Fix:    fix((*installer).installRewriteRef),
			})
		}
		// post-commit runs tether-hook, which runs tether-sweep when there
		// is something to sweep; pre-push runs tether-sweep. Both are found
		// beside SweepPath, or on PATH.
		bins = append(bins,
			binaryUse{"tether-sweep", opts.SweepPath, "the git hooks"},
			binaryUse{"tether-hook", programPath(opts.SweepPath, "tether-hook"), "the git hooks"})
	}
	names, err := in.agentNames(false)
	if err != nil {
		ps = append(ps, Problem{What: "cannot check agent hooks", Detail: err.Error()})
	}
	for _, name := range names {
		spec, _ := lookupAgent(name)
		ps = append(ps, in.checkAgent(spec, fix)...)
	}
	if len(names) > 0 {
		bins = append(bins, binaryUse{"tether-hook", in.hookPath(), "the agents' hooks"})
	}
	return append(ps, checkBinaries(bins, lookPath)...)
}

func (in *installer) checkHook(h gitHook, fix func(func(*installer) error) func() error) *Problem {
	s := in.setup(h)
	repair := fix(func(in *installer) error { return in.installHook(h) })
	switch {
	case s.husky != "":
		data, err := os.ReadFile(s.husky)
		content := string(data)
		start, end, ok, damaged := findBlock(content)
		switch {
		case damaged:
			return &Problem{What: s.husky + " has a damaged tether block", Detail: "the block's end line is missing; fix the file by hand, then run install again."}
		case err != nil || !ok:
			return &Problem{What: "husky " + h.name + " hook does not run " + h.program, Detail: s.husky, Fix: repair}
		case content[start:end] != huskyBlock(h, sharedPath):
			return &Problem{What: "husky " + h.name + " hook runs an outdated tether block", Detail: s.husky, Fix: repair}
		}
		return nil
	case s.framework != "":
		data, err := os.ReadFile(s.framework)
		if err == nil && runsHook(string(data), h) {
			return nil
		}
		snippet, then := frameworkSnippet(s.fwName, h, sharedPath)
		detail := s.fwName + " manages the git hooks; add this to " + s.framework + ":\n" + snippet
		if then != "" {
			detail += "then run: " + then + "\n"
		}
		return &Problem{What: s.fwName + " does not run " + h.program + " at " + h.name, Detail: detail}
	}
	data, err := os.ReadFile(s.hookFile)
	_, backupErr := os.Lstat(s.hookFile + backupSuffix)
	switch {
	case err != nil:
		return &Problem{What: "git " + h.name + " hook is not installed", Detail: s.hookFile, Fix: repair}
	case !isOurHook(data):
		return &Problem{
			What:   "git " + h.name + " hook is not tether's",
			Detail: fmt.Sprintf("%s belongs to something else; the fix moves it to %s and runs it before %s.", s.hookFile, h.name+backupSuffix, h.program),
			Fix:    repair,
		}
	case string(data) != hookScript(h, in.opts.SweepPath, backupErr == nil, in.hooksInCommon()):
		return &Problem{What: "git " + h.name + " hook is out of date", Detail: s.hookFile, Fix: repair}
	}
	return nil
}

func (in *installer) checkAgent(spec agentSpec, fix func(func(*installer) error) func() error) []Problem {
	path, _ := in.agentConfig(spec)
	repair := fix(func(in *installer) error { return in.installAgent(spec) })
	if spec.layout == plugin {
		return in.checkPlugin(pluginFor(spec.name), path, repair)
	}
	_, data, _, existed, err := readTarget(path)
	if err != nil {
		return []Problem{{What: "cannot read " + spec.name + " hooks", Detail: err.Error()}}
	}
	if !existed {
		return []Problem{{What: spec.name + " hooks are not installed", Detail: path + " does not exist", Fix: repair}}
	}
	doc, err := parseDocument(data)
	if err != nil {
		return []Problem{{What: "cannot read " + spec.name + " hooks", Detail: path + ": " + err.Error()}}
	}
	var ps []Problem
	missing, stale := spec.status(doc.root, in.hookPath())
	switch {
	case len(missing) > 0:
		ps = append(ps, Problem{
			What:   spec.name + " hooks are missing for " + strings.Join(missing, ", "),
			Detail: path,
			Fix:    repair,
		})
	case len(stale) > 0 && !in.opts.User && len(spec.machinePaths(doc.root)) > 0:
		// An install by an older tether, here or on a teammate's machine.
		ps = append(ps, Problem{
			What: spec.name + " hooks run tether-hook from " + strings.Join(spec.machinePaths(doc.root), ", ") + ", a path on one machine",
			Detail: path + in.committed(path) + " is meant to be shared: a teammate who pulls it runs nothing there, or another binary. " +
				"The fix writes commands that find tether-hook on PATH, the same on every machine.",
			Fix: repair,
		})
	case len(stale) > 0:
		ps = append(ps, Problem{
			What:   spec.name + " hooks are out of date for " + strings.Join(stale, ", "),
			Detail: path,
			Fix:    repair,
		})
	}
	if spec.enableFlag && hooksDisabled(doc.root) {
		ps = append(ps, Problem{
			What:   "Gemini CLI hooks are turned off",
			Detail: path + " sets hooksConfig.enabled to false; set it to true to record Gemini sessions.",
		})
	}
	if h := doc.root.get("hooks"); spec.layout == topLevel && h != nil && h.kind == objectNode {
		ps = append(ps, Problem{
			What: spec.name + "'s " + filepath.Base(path) + " has a \"hooks\" key, which Droid silently ignores",
			Detail: path + ": Droid reads the events at the top level of the file ({\"SessionStart\": [...]}), never under \"hooks\"; " +
				"move the entries under it up a level (tether's are already there).",
		})
	}
	// Installed is not running: the agent's own trust gates.
	target, _, _, _, _ := readTarget(path)
	return append(ps, in.hookTrust(spec, target, doc.root)...)
}

// binaryUse is a tether binary some hooks run, and where they look for it:
// an absolute path, or "" for PATH.
type binaryUse struct {
	name, path string
	usedBy     string // the hooks that run it, e.g. "the agents' hooks"
}

// checkBinaries reports each binary the hooks cannot find, once per place
// they look, naming every kind of hook that looks there.
func checkBinaries(uses []binaryUse, lookPath func(string) (string, error)) []Problem {
	var ps []Problem
	for i, u := range uses {
		same := func(v binaryUse) bool { return v.name == u.name && v.path == u.path }
		if slices.ContainsFunc(uses[:i], same) {
			continue // reported with the first use
		}
		var users []string
		for _, v := range uses[i:] {
			if same(v) {
				users = append(users, v.usedBy)
			}
		}
		if p := checkBinary(u.name, u.path, lookPath, strings.Join(users, " and ")+" run it"); p != nil {
			ps = append(ps, *p)
		}
	}
	return ps
}

// checkBinary looks for a tether binary where the hooks will look for it.
func checkBinary(name, abs string, lookPath func(string) (string, error), usedBy string) *Problem {
	if abs == "" {
		if _, err := lookPath(name); err != nil {
			return &Problem{
				What:   name + " is not on PATH",
				Detail: usedBy + " and find it on PATH; until it is there they do nothing.",
			}
		}
		return nil
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.Mode().IsRegular() || (runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0) {
		return &Problem{
			What:   name + " is missing from " + abs,
			Detail: usedBy + " from there; until it is back they do nothing. Reinstall it, or run install again from where it is now.",
		}
	}
	return nil
}

// CheckPresent reports the agents present on this machine (Detect) that
// tether records nowhere: not in setup (Check looks after those), not
// declined (Setup.Declined), and no entries of ours in their project or
// user config. Their sessions go unrecorded; the fix sets them up in the
// project, as install --agent would.
func CheckPresent(opts Options, setup Setup) []Problem {
	in, err := newInstaller(opts)
	if err != nil {
		return []Problem{{What: "cannot look for the agents on this machine", Detail: err.Error()}}
	}
	var ps []Problem
	for _, p := range in.detect() {
		if slices.Contains(setup.Agents, p.Agent) || slices.Contains(setup.UserAgents, p.Agent) ||
			slices.Contains(setup.Declined, p.Agent) || in.configured(p.Agent) {
			continue
		}
		fixOpts := opts
		fixOpts.User, fixOpts.NoGitHooks, fixOpts.Agents = false, true, []string{p.Agent}
		ps = append(ps, Problem{
			What: p.Agent + " is on this machine but not set up here",
			Detail: fmt.Sprintf("found %s; its sessions in this repository are not recorded. Set it up with: tether-sweep install --agent %s (or, to stop this check, tether-sweep uninstall --agent %s)",
				strings.Join(p.Where, ", "), p.Agent, p.Agent),
			Fix: func() error { _, err := Install(fixOpts); return err },
		})
	}
	return ps
}

// committed says " (committed)" when git tracks path: a fix to it is for
// the whole team, and is committed too.
func (in *installer) committed(path string) string {
	rel, err := filepath.Rel(in.repo.top, path)
	if err != nil || !filepath.IsLocal(rel) {
		return ""
	}
	if _, err := git(in.repo.top, "ls-files", "--error-unmatch", "--", filepath.ToSlash(rel)); err != nil {
		return ""
	}
	return " (committed)"
}
