package install

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tetherdev/tether/internal/durable"
	"github.com/tetherdev/tether/state"
)

// Options says what to install and where.
type Options struct {
	// Dir is any directory inside the git working tree.
	Dir string
	// Home is the user's home directory, for user-level agent configs (and
	// the record of what install changed there). Needed only with User.
	Home string
	// User puts agent hooks in the user's configs (~/.claude/settings.json,
	// ...) instead of the project's.
	User bool
	// Agents picks the agents to configure, by tether-hook's names for them
	// (see AgentNames). nil means the agents present on this machine
	// (Detect, else Claude Code) for Install and Check, and every agent for
	// Uninstall; an empty, non-nil slice means none.
	Agents []string
	// Push installs the pre-push hook too.
	Push bool
	// NoGitHooks leaves the git hooks and notes.rewriteRef alone.
	NoGitHooks bool
	// HookPath is tether-hook's absolute path, written into the agents'
	// configs; "" has agents find it on PATH.
	HookPath string
	// SweepPath is tether-sweep's absolute path: the git hooks run it and
	// tether-hook (post-commit's gate) from its directory; "" has git hooks
	// find them on PATH.
	SweepPath string
	// LookPath finds a program on PATH, for Check; nil means exec.LookPath.
	LookPath func(string) (string, error)
	// Trust writes Codex's trust of tether's own hook entries (their
	// hashes, in Codex's config.toml): Codex skips a hook nobody trusted.
	// Trusting a whole folder or project stays the user's decision.
	Trust bool
	// Getenv reads the user's environment (CODEX_HOME, COPILOT_HOME); nil
	// means os.Getenv.
	Getenv func(string) string
}

// Action is what happened to one file or setting.
type Action string

const (
	Created   Action = "created"
	Updated   Action = "updated"
	Unchanged Action = "unchanged"
	Removed   Action = "removed"
	Restored  Action = "restored" // put back as it was before install
	Moved     Action = "moved"    // a foreign hook, moved aside to run first
)

// Change is one file or setting that Install or Uninstall looked at.
type Change struct {
	Path   string // absolute path of the file (the git config file for settings)
	What   string // e.g. "git post-commit hook", "claude-code hooks"
	Action Action
}

// Manual is a change tether leaves to the user: hook managers such as
// lefthook and pre-commit own the git hooks and regenerate them, so their
// config has to run tether itself.
type Manual struct {
	File    string // the framework's config file
	Hook    string // git hook name
	Snippet string // what to add to File
	Then    string // command to run afterwards, or ""
}

// Result reports what Install or Uninstall did.
type Result struct {
	Changes []Change
	Manual  []Manual
	Notes   []string // things the user should know, one message each
	// Agents are the agents this run set up (or removed).
	Agents []string
	// Chosen: Options.Agents named them. Otherwise Install set up the
	// agents Found, or Claude Code when none was.
	Chosen bool
	// Found are the agents present on this machine, and where each was
	// seen (Detect); for Install only.
	Found []Presence
	// Unset are agents Found that neither this run nor an earlier one set
	// up, at either level: install says how to add them.
	Unset []string
	// Commit are the files of the repository install wrote that git does
	// not have as they are now: what a team commits so that teammates'
	// agents record too (relative to the top of the work tree).
	Commit []string
	// Personal are the other files it created or changed: this clone's
	// (git hooks, git config) or this user's, never committed.
	Personal []string
}

// Install sets up the git hooks, notes.rewriteRef and the agents' hook
// configs. It is idempotent: a second run writes nothing. It goes as far as
// it can, and reports every failure in the returned error alongside what it
// did.
func Install(opts Options) (Result, error) {
	in, err := newInstaller(opts)
	if err != nil {
		return Result{}, err
	}
	names, err := in.agentNames(false)
	if err != nil {
		return Result{}, err
	}
	found := in.detect()
	if err := in.checkOptions(names, found); err != nil {
		return Result{}, err
	}
	var errs []error
	if !opts.NoGitHooks {
		for _, h := range in.gitHooks() {
			errs = append(errs, in.installHook(h))
		}
		errs = append(errs, in.installRewriteRef())
	}
	var done []string
	for _, name := range names {
		spec, _ := lookupAgent(name) // names are checked by agentNames
		if err := in.installAgent(spec); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, name)
	}
	in.res.Agents, in.res.Chosen, in.res.Found = done, opts.Agents != nil, found
	for _, p := range found {
		if !slices.Contains(names, p.Agent) && !in.configured(p.Agent) {
			in.res.Unset = append(in.res.Unset, p.Agent)
		}
	}
	if !opts.User && len(done) > 0 {
		in.notePath()
	}
	in.res.Commit = in.toCommit()
	for _, c := range in.res.Changes {
		rel, err := filepath.Rel(in.repo.top, c.Path)
		shared := err == nil && slices.Contains(in.res.Commit, filepath.ToSlash(rel))
		if !shared && (c.Action == Created || c.Action == Updated) && !slices.Contains(in.res.Personal, c.Path) {
			in.res.Personal = append(in.res.Personal, c.Path)
		}
	}
	errs = append(errs, in.record(func(s *Setup) { s.installed(opts, done, in.res.Unset) }))
	return in.res, errors.Join(errs...)
}

// checkOptions refuses options that concern an agent this install does not
// set up, before anything changes: they would do nothing, silently.
func (in *installer) checkOptions(names []string, found []Presence) error {
	if !in.opts.Trust || slices.Contains(names, "codex") {
		return nil
	}
	why := "this install does not set up Codex"
	if !slices.ContainsFunc(found, func(p Presence) bool { return p.Agent == "codex" }) {
		why += " (it is not on this machine: no .codex/ in the repository, no ~/.codex, no codex on PATH)"
	}
	return fmt.Errorf("%w: --trust is for Codex's hooks, and %s; add --agent codex to set it up", ErrNotSetUp, why)
}

// ErrNotSetUp marks an option given for an agent the install leaves out.
var ErrNotSetUp = errors.New("option for an agent not set up")

// sharedPath is the path of tether's binaries in what a team commits
// (husky's hooks, lefthook's and pre-commit's configs): none, since each
// teammate keeps them elsewhere; they are found on PATH.
const sharedPath = ""

// hookPath is the tether-hook the agents' configs at this level run: the
// project's configs are shared (committed, pulled by teammates who keep
// tether elsewhere), so they find tether-hook on PATH, and do nothing
// where it is absent; a user's own configs may name this machine's binary.
func (in *installer) hookPath() string {
	if in.opts.User {
		return in.opts.HookPath
	}
	return ""
}

// notePath tells the user when the project's agent configs will not find
// tether-hook, which they look for on PATH.
func (in *installer) notePath() {
	if _, err := in.lookPath(hookBinary); err == nil {
		return
	}
	dir := "the directory that holds it"
	if in.opts.HookPath != "" {
		dir = filepath.Dir(in.opts.HookPath)
	}
	in.note("tether-hook is not on your PATH, and the agents' hooks in this repository look for it there: until it is, they record nothing. Add %s to PATH.", dir)
}

// toCommit lists the files of the work tree this run wrote (agent configs,
// husky's hooks) that git shows as new or changed; none it ignores.
func (in *installer) toCommit() []string {
	var paths []string
	for _, c := range in.res.Changes {
		rel, err := filepath.Rel(in.repo.top, c.Path)
		if err != nil || !filepath.IsLocal(rel) || isUnder(c.Path, in.repo.common) || c.Action == Removed {
			continue
		}
		paths = append(paths, filepath.ToSlash(rel))
	}
	if len(paths) == 0 {
		return nil
	}
	out, err := git(in.repo.top, append([]string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--"}, paths...)...)
	if err != nil {
		return nil // a listing for people: without git's view, none
	}
	var commit []string
	for rec := range strings.SplitSeq(out, "\x00") {
		if len(rec) > 3 {
			commit = append(commit, rec[3:])
		}
	}
	slices.Sort(commit)
	return commit
}

// isUnder tells whether p is dir or inside it, symlinks resolved.
func isUnder(p, dir string) bool {
	rel, err := filepath.Rel(resolved(dir), resolved(p))
	return err == nil && filepath.IsLocal(rel)
}

// configured tells whether an agent has tether's entries in its project or
// user-level config, whoever put them there.
func (in *installer) configured(name string) bool {
	spec, err := lookupAgent(name)
	if err != nil {
		return false
	}
	for _, user := range []bool{false, true} {
		if user && in.opts.Home == "" {
			continue
		}
		path, _ := in.agentConfigAt(spec, user)
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if spec.layout == plugin {
			if pluginFor(spec.name).isOurs(data) {
				return true
			}
			continue
		}
		doc, err := parseDocument(data)
		if err != nil {
			continue
		}
		if missing, _ := spec.status(doc.root, ""); len(missing) < len(spec.events) {
			return true
		}
	}
	return false
}

// Uninstall removes what Install added: our git hooks (putting back the
// hooks they chained to), our husky blocks, our notes.rewriteRef value and
// our agent hook entries. With User it removes the user-level agent
// entries only: the repository's git hooks stay. Files install created are deleted; files that
// existed are restored byte for byte when nothing else changed in them, and
// otherwise lose only our entries.
func Uninstall(opts Options) (Result, error) {
	in, err := newInstaller(opts)
	if err != nil {
		return Result{}, err
	}
	var errs []error
	if !opts.NoGitHooks && !opts.User { // --user is about the user's configs alone
		for _, h := range allGitHooks() {
			errs = append(errs, in.uninstallHook(h))
		}
		if changed, err := in.repo.removeRewriteRef(); err != nil {
			errs = append(errs, fmt.Errorf("notes.rewriteRef: %w", err))
		} else if changed {
			in.change(filepath.Join(in.repo.common, "config"), "notes.rewriteRef "+rewriteRef, Removed)
		}
	}
	names, err := in.agentNames(true)
	if err != nil {
		return in.res, err
	}
	var done []string
	for _, name := range names {
		spec, _ := lookupAgent(name)
		if err := in.uninstallAgent(spec); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, name)
	}
	in.res.Agents, in.res.Chosen = done, opts.Agents != nil
	errs = append(errs, in.record(func(s *Setup) { s.uninstalled(opts, done) }))
	return in.res, errors.Join(errs...)
}

// installer carries one run's options, repository and report.
type installer struct {
	opts Options
	repo repo
	res  Result
}

func newInstaller(opts Options) (*installer, error) {
	for _, p := range []struct{ name, path string }{{"tether-hook", opts.HookPath}, {"tether-sweep", opts.SweepPath}} {
		if p.path != "" && !filepath.IsAbs(p.path) {
			return nil, fmt.Errorf("%s path %q is not absolute", p.name, p.path)
		}
	}
	if opts.User && opts.Home == "" {
		return nil, errors.New("user-level install needs the home directory")
	}
	r, err := findRepo(opts.Dir)
	if err != nil {
		return nil, err
	}
	return &installer{opts: opts, repo: r}, nil
}

func (in *installer) change(path, what string, a Action) {
	in.res.Changes = append(in.res.Changes, Change{Path: path, What: what, Action: a})
}

func (in *installer) note(format string, args ...any) {
	in.res.Notes = append(in.res.Notes, fmt.Sprintf(format, args...))
}

func (in *installer) gitHooks() []gitHook {
	hooks := append([]gitHook{postCommitHook}, linkHooks...)
	if in.opts.Push {
		hooks = append(hooks, prePushHook)
	}
	return hooks
}

// agentNames resolves Options.Agents; all means every agent rather than the
// detected ones (for uninstall). Detected: the agents present on this
// machine (Detect), or Claude Code when there is none.
func (in *installer) agentNames(all bool) ([]string, error) {
	switch {
	case in.opts.Agents != nil:
		for _, n := range in.opts.Agents {
			if _, err := lookupAgent(n); err != nil {
				return nil, err
			}
		}
		return in.opts.Agents, nil
	case all:
		return AgentNames(), nil
	}
	if found := names(in.detect()); len(found) > 0 {
		return found, nil
	}
	return []string{"claude-code"}, nil
}

// Agents are the agents Install (and Check) would configure with opts.
func Agents(opts Options) ([]string, error) {
	in, err := newInstaller(opts)
	if err != nil {
		return nil, err
	}
	return in.agentNames(false)
}

// hookSetup is how a git hook reaches tether in this repository.
type hookSetup struct {
	husky     string // the user's husky hook file to put our block in, or ""
	framework string // a hook manager's config file to tell the user about, or ""
	fwName    string
	hookFile  string // otherwise: the hook in git's hooks directory
}

func (in *installer) setup(h gitHook) hookSetup {
	top := in.repo.top
	husky := filepath.Join(top, ".husky")
	if fi, err := os.Stat(husky); err == nil && fi.IsDir() &&
		(samePath(in.repo.hooks, husky) || samePath(in.repo.hooks, filepath.Join(husky, "_"))) {
		return hookSetup{husky: filepath.Join(husky, h.name)}
	}
	for _, fw := range frameworks {
		for _, f := range fw.files {
			if _, err := os.Stat(filepath.Join(top, f)); err == nil {
				return hookSetup{framework: filepath.Join(top, f), fwName: fw.name}
			}
		}
	}
	return hookSetup{hookFile: filepath.Join(in.repo.hooks, h.name)}
}

// samePath compares paths after resolving symlinks, since git and the
// caller may spell the same directory differently (a symlinked /tmp, for
// one). The last element may not exist yet: husky's .husky/_ is generated
// by npm install.
func samePath(a, b string) bool {
	return resolved(a) == resolved(b)
}

func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(r, filepath.Base(p))
	}
	return filepath.Clean(p)
}

func (in *installer) installHook(h gitHook) error {
	s := in.setup(h)
	switch {
	case s.husky != "":
		return in.installHusky(h, s.husky)
	case s.framework != "":
		data, err := os.ReadFile(s.framework)
		if err != nil {
			return fmt.Errorf("read %s: %w", s.framework, err)
		}
		if !runsHook(string(data), h) {
			snippet, then := frameworkSnippet(s.fwName, h, sharedPath)
			in.res.Manual = append(in.res.Manual, Manual{File: s.framework, Hook: h.name, Snippet: snippet, Then: then})
		}
		return nil
	default:
		return in.installGitHook(h, s.hookFile)
	}
}

// hooksInCommon reports whether git's hooks directory is <common>/hooks as
// the shell resolves it from inside (symlinks followed), where a hook
// finds tether's store beside it (see storeGate).
func (in *installer) hooksInCommon() bool {
	return filepath.Dir(resolved(in.repo.hooks)) == resolved(in.repo.common)
}

// flagStore flags the store active before a gated hook is written: a store
// an earlier tether kept may hold sessions without the flag, and the gate
// would keep their work from every commit. The next sweep settles it.
func (in *installer) flagStore(h gitHook) error {
	if !h.gated {
		return nil
	}
	st, err := state.Open(in.repo.common, state.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	return st.MarkActive()
}

// installGitHook writes our hook, chaining to a foreign one: the foreign
// hook is renamed <hook>.pre-tether and our script runs it first.
func (in *installer) installGitHook(h gitHook, path string) error {
	what := "git " + h.name + " hook"
	backup := path + backupSuffix
	_, backupErr := os.Lstat(backup)
	hasBackup := backupErr == nil
	cur, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", what, err)
	}
	switch {
	case exists && isOurHook(cur):
		want := hookScript(h, in.opts.SweepPath, hasBackup, in.hooksInCommon())
		if string(cur) == want {
			in.change(path, what, Unchanged)
			return nil
		}
		if err := in.flagStore(h); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := durable.WriteFile(path, []byte(want), 0o755); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		in.change(path, what, Updated)
		return nil
	case exists && hasBackup:
		return fmt.Errorf("%s: %s is not tether's and %s already exists; move one of them aside", what, path, backup)
	case exists:
		return in.chainHook(h, path, backup)
	default:
		if _, err := mkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := in.flagStore(h); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := durable.WriteFile(path, []byte(hookScript(h, in.opts.SweepPath, hasBackup, in.hooksInCommon())), 0o755); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		in.change(path, what, Created)
		return nil
	}
}

// chainHook moves the foreign hook aside and puts ours in its place. Ours is
// written to a temp file first, so the hook is never missing for longer
// than two renames, and a failure puts the foreign hook back.
func (in *installer) chainHook(h gitHook, path, backup string) error {
	what := "git " + h.name + " hook"
	tmp := path + ".tether-new"
	if err := in.flagStore(h); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := durable.WriteFile(tmp, []byte(hookScript(h, in.opts.SweepPath, true, in.hooksInCommon())), 0o755); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := os.Rename(path, backup); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: move the existing hook aside: %w", what, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Rename(backup, path)
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", what, err)
	}
	in.change(backup, "previous "+h.name+" hook (runs first)", Moved)
	in.change(path, what, Created)
	return nil
}

func (in *installer) uninstallHook(h gitHook) error {
	s := in.setup(h)
	switch {
	case s.husky != "":
		return in.uninstallHusky(h, s.husky)
	case s.framework != "":
		if data, err := os.ReadFile(s.framework); err == nil && runsHook(string(data), h) {
			in.note("%s still runs %s for %s: remove that entry by hand.", s.framework, h.program, h.name)
		}
		return nil
	}
	path := filepath.Join(in.repo.hooks, h.name)
	what := "git " + h.name + " hook"
	backup := path + backupSuffix
	_, backupErr := os.Lstat(backup)
	cur, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", what, err)
	}
	exists := err == nil
	switch {
	case exists && !isOurHook(cur):
		if backupErr == nil {
			in.note("%s is not tether's, so %s was left where it is.", path, backup)
		}
		return nil
	case backupErr == nil:
		if err := os.Rename(backup, path); err != nil {
			return fmt.Errorf("%s: put the previous hook back: %w", what, err)
		}
		in.change(path, what, Restored)
		return nil
	case exists:
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		in.change(path, what, Removed)
	}
	return nil
}

func (in *installer) installRewriteRef() error {
	changed, err := in.repo.addRewriteRef()
	if err != nil {
		return fmt.Errorf("notes.rewriteRef: %w", err)
	}
	a := Unchanged
	if changed {
		a = Updated
	}
	in.change(filepath.Join(in.repo.common, "config"), "notes.rewriteRef "+rewriteRef, a)
	return nil
}

// editFile applies edit to a file that install records in a manifest: the
// first change to it records what it was, so uninstall can undo exactly
// that. edit gets the current content (nil when there is no file) and
// returns the new one.
func (in *installer) editFile(manifestPath, path, what string, newMode fs.FileMode, edit func(cur []byte, existed bool) ([]byte, error)) error {
	target, cur, mode, existed, err := readTarget(path)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	out, err := edit(cur, existed)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", what, path, err)
	}
	if existed && bytes.Equal(out, cur) {
		in.change(path, what, Unchanged)
		return nil
	}
	m, err := loadManifest(manifestPath)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	created, err := mkdirAll(filepath.Dir(target), 0o755)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if m.Files[target] == nil {
		m.Files[target] = &fileRecord{Existed: existed, Original: cur, CreatedDirs: created}
		// Saved before the file changes: a crash in between leaves a record
		// of a file that is still original, which is harmless.
		if err := m.save(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if !existed {
		mode = newMode
	}
	if err := durable.WriteFile(target, out, mode); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if existed {
		in.change(path, what, Updated)
	} else {
		in.change(path, what, Created)
	}
	return nil
}

// undoFile is editFile's inverse. undo gets the current content and the
// record (nil when install left none) and returns the new content, or
// remove=true when the file should go.
func (in *installer) undoFile(manifestPath, path, what string, undo func(cur []byte, rec *fileRecord) (out []byte, remove bool, err error)) error {
	target, cur, mode, existed, err := readTarget(path)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	m, err := loadManifest(manifestPath)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	rec := m.Files[target]
	if existed {
		out, remove, err := undo(cur, rec)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", what, path, err)
		}
		switch {
		case remove:
			if err := os.Remove(target); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			removeEmptyDirs(rec.CreatedDirs)
			in.change(path, what, Removed)
		case bytes.Equal(out, cur):
		case rec != nil && rec.Existed && bytes.Equal(out, rec.Original):
			if err := durable.WriteFile(target, out, mode); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			in.change(path, what, Restored)
		default:
			if err := durable.WriteFile(target, out, mode); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			in.change(path, what, Updated)
		}
	}
	if rec != nil {
		delete(m.Files, target)
		if err := m.save(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}

func (in *installer) installHusky(h gitHook, path string) error {
	block := huskyBlock(h, sharedPath)
	return in.editFile(projectManifest(in.repo), path, "husky "+h.name+" hook", 0o755, func(cur []byte, existed bool) ([]byte, error) {
		content := string(cur)
		if !existed {
			content = huskyShebang
		}
		out, err := withBlock(content, block)
		return []byte(out), err
	})
}

func (in *installer) uninstallHusky(h gitHook, path string) error {
	return in.undoFile(projectManifest(in.repo), path, "husky "+h.name+" hook", func(cur []byte, rec *fileRecord) ([]byte, bool, error) {
		out, found, err := withoutBlock(string(cur))
		if err != nil || !found {
			return cur, false, err
		}
		switch {
		case rec != nil && !rec.Existed && (out == huskyShebang || out == ""):
			return nil, true, nil
		case rec != nil && rec.Existed && out == string(rec.Original)+"\n":
			// withBlock added the line break the file lacked.
			return rec.Original, false, nil
		}
		return []byte(out), false, nil
	})
}

// agentConfig is where an agent's hook config goes, and the manifest that
// records it.
func (in *installer) agentConfig(spec agentSpec) (path, manifestPath string) {
	return in.agentConfigAt(spec, in.opts.User)
}

// agentConfigAt is agentConfig at the user level or the project's.
func (in *installer) agentConfigAt(spec agentSpec, user bool) (path, manifestPath string) {
	if user {
		// Inside the agent's own directory, wherever its variable moves it
		// ($CODEX_HOME, $COPILOT_HOME, $XDG_CONFIG_HOME/opencode).
		dir := spec.userMarker
		if dir == "" {
			dir, _, _ = strings.Cut(spec.user, "/")
		}
		rel := filepath.FromSlash(strings.TrimPrefix(spec.user, dir+"/"))
		return filepath.Join(in.userDir(spec), rel), userManifest(in.opts.Home)
	}
	return filepath.Join(in.repo.top, filepath.FromSlash(spec.project)), projectManifest(in.repo)
}

func (in *installer) installAgent(spec agentSpec) error {
	path, mpath := in.agentConfig(spec)
	if spec.layout == plugin {
		return in.installPlugin(pluginFor(spec.name), path, mpath)
	}
	var disabled bool
	var root *node
	err := in.editFile(mpath, path, spec.name+" hooks", 0o644, func(cur []byte, _ bool) ([]byte, error) {
		doc, err := parseDocument(cur)
		if err != nil {
			return nil, err
		}
		if err := spec.merge(doc.root, in.hookPath()); err != nil {
			return nil, err
		}
		disabled = spec.enableFlag && hooksDisabled(doc.root)
		root = doc.root
		return doc.bytes(), nil
	})
	if err != nil {
		return err
	}
	if disabled {
		in.note("%s sets hooksConfig.enabled to false, so Gemini CLI will not run tether's hooks; set it to true to record Gemini sessions.", path)
	}
	target, _, _, _, _ := readTarget(path)
	if spec.name == "codex" && in.opts.Trust {
		if err := in.trustCodex(target, root); err != nil {
			return fmt.Errorf("trust tether's Codex hooks: %w", err)
		}
	}
	// What the agent still needs before it runs the hooks.
	for _, p := range in.hookTrust(spec, target, root) {
		in.note("%s: %s", p.What, p.Detail)
	}
	return nil
}

// hooksDisabled tells whether a Gemini CLI config turns hooks off.
func hooksDisabled(root *node) bool {
	e := root.get("hooksConfig").get("enabled")
	return e != nil && e.raw == "false"
}

func (in *installer) uninstallAgent(spec agentSpec) error {
	path, mpath := in.agentConfig(spec)
	if spec.layout == plugin {
		return in.uninstallPlugin(pluginFor(spec.name), path, mpath)
	}
	if spec.name == "codex" {
		// The trust of entries about to go goes first.
		target, data, _, existed, err := readTarget(path)
		if err == nil && existed {
			if doc, err := parseDocument(data); err == nil {
				if err := in.untrustCodex(target, doc.root); err != nil {
					return fmt.Errorf("Codex hook trust: %w", err)
				}
			}
		}
	}
	return in.undoFile(mpath, path, spec.name+" hooks", func(cur []byte, rec *fileRecord) ([]byte, bool, error) {
		doc, err := parseDocument(cur)
		if err != nil {
			return nil, false, err
		}
		var orig *node
		if rec != nil {
			if od, err := parseDocument(rec.Original); err == nil {
				orig = od.root
			}
		}
		spec.unmerge(doc.root, orig)
		out := doc.bytes()
		switch {
		case bytes.Equal(out, cur):
			return cur, false, nil
		case rec != nil && !rec.Existed && len(doc.root.members) == 0:
			return nil, true, nil
		case rec != nil && rec.Existed && orig != nil && equal(doc.root, orig):
			return rec.Original, false, nil
		}
		return out, false, nil
	})
}
