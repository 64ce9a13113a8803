package inherit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/internal/gitstore"
	"github.com/tetherdev/tether/state"
)

// lockName is the store lock serializing writes to the index.
const lockName = "links"

// maxRange bounds the walk from a linked commit back to where it left the
// default branch: a longer line of work is matched by its replayed
// commits, or by the forge.
const maxRange = 1_000

// Matcher finds the commits that carry linked commits' changes.
type Matcher struct {
	repo gitdir.Repo
	st   *state.Store
	cp   *checkpoint.Repo
	objs *filesystem.Storage
	// Forge, when set, is asked about arriving commits content did not
	// match: the merged pull requests they are the merge commit of.
	Forge Forge
}

// Forge is what a code forge says of a commit.
type Forge interface {
	// MergedPulls returns the merged pull requests whose merge commit
	// (the squash, the last replayed commit, or the merge) is commit.
	MergedPulls(ctx context.Context, commit string) ([]Pull, error)
}

// Pull is a merged pull request and its commits.
type Pull struct {
	Number  int
	Commits []string
}

// New returns the matcher of a repository.
func New(repo gitdir.Repo, st *state.Store, cp *checkpoint.Repo) (*Matcher, error) {
	dir, err := filepath.Abs(repo.CommonDir)
	if err != nil {
		return nil, fmt.Errorf("inherit: %w", err)
	}
	return &Matcher{repo: repo, st: st, cp: cp, objs: gitstore.Open(dir)}, nil
}

// indexPath is the index file in the store.
func (m *Matcher) indexPath() string { return filepath.Join(m.st.Dir(), "links", "index") }

// Update indexes the linked commits whose notes changed since it last
// looked, and retries those that were not here then: their trees,
// patch-ids, and the range each ends. It reports how many it indexed.
func (m *Matcher) Update() (int, error) {
	unlock, err := m.st.Lock(lockName)
	if err != nil {
		return 0, fmt.Errorf("index linked commits: %w", err)
	}
	defer unlock()
	ix, err := readIndex(m.indexPath())
	if err != nil {
		return 0, err
	}
	changed, tip, err := m.cp.NotedSince(ix.notes)
	if err != nil {
		return 0, fmt.Errorf("index linked commits: %w", err)
	}
	for h, e := range ix.entries {
		if e.Tree == "" && !slices.Contains(changed, h) {
			changed = append(changed, h) // absent last time: here now?
		}
	}
	var todo []string
	for _, h := range changed {
		if m.objs.HasEncodedObject(plumbing.NewHash(h)) != nil {
			// Not here (its note came from another clone): kept to look
			// for again.
			ix.entries[h] = &Entry{Commit: h}
			continue
		}
		todo = append(todo, h)
	}
	if tip == ix.notes && len(todo) == 0 {
		return 0, nil
	}
	info, err := m.scan(todo)
	if err != nil {
		return 0, err
	}
	onDefault, err := m.defaultHistory()
	if err != nil {
		return 0, err
	}
	notes := map[string][]string{} // checkpoints by commit, read once
	var pairs []string
	ranged := map[string][]*Entry{}
	indexed := 0
	for _, h := range todo {
		c := info[h]
		if c == nil {
			delete(ix.entries, h) // a note on something not a commit
			continue
		}
		e := &Entry{Commit: h, Tree: c.tree, PatchID: c.patchID}
		if onDefault != nil {
			base, baseTree, ids, err := m.rangeOf(h, info, onDefault, notes)
			if err != nil {
				return 0, err
			}
			if base != "" {
				e.Base, e.IDs = base, ids
				pair := baseTree + " " + c.tree
				pairs, ranged[pair] = append(pairs, pair), append(ranged[pair], e)
			}
		}
		ix.entries[h] = e
		indexed++
	}
	changes, err := m.rangeChanges(slices.Compact(slices.Sorted(slices.Values(pairs))))
	if err != nil {
		return 0, err
	}
	for pair, es := range ranged {
		for _, e := range es {
			e.Change = changes[pair]
		}
	}
	ix.notes = tip
	return indexed, ix.write(m.indexPath())
}

// defaultHistory is the set of the default branch's commits (git rev-list
// of its tip: the remote's HEAD, else its main or master, else the local
// main or master); nil when there is none here.
func (m *Matcher) defaultHistory() (map[plumbing.Hash]bool, error) {
	for _, name := range []string{"refs/remotes/origin/HEAD", "refs/remotes/origin/main", "refs/remotes/origin/master", "refs/heads/main", "refs/heads/master"} {
		if _, err := m.objs.Reference(plumbing.ReferenceName(name)); err != nil {
			continue
		}
		cmd := m.git("rev-list", name)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("git rev-list %s: %s", name, firstLine(stderr.String(), err))
		}
		set := map[plumbing.Hash]bool{}
		for _, h := range strings.Fields(stdout.String()) {
			set[plumbing.NewHash(h)] = true
		}
		return set, nil
	}
	return nil, nil
}

// rangeOf finds the range a linked commit ends: back along its first
// parents to where its line of work left the default branch (at most
// maxRange commits), the base and its tree, and the checkpoints of the
// linked commits in it; no base for a commit on the default branch.
func (m *Matcher) rangeOf(h string, info map[string]*scanned, onDefault map[plumbing.Hash]bool, notes map[string][]string) (base, baseTree string, ids []string, err error) {
	if onDefault[plumbing.NewHash(h)] {
		return "", "", nil, nil
	}
	walk := h
	for range maxRange {
		got, ok := notes[walk]
		if !ok {
			if got, err = m.cp.Notes(walk); err != nil {
				return "", "", nil, err
			}
			notes[walk] = got
		}
		for _, id := range got {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		parents, ok := m.parents(walk, info)
		if !ok || len(parents) == 0 {
			return "", "", nil, nil // unrelated to the default branch, or a shallow history
		}
		if onDefault[plumbing.NewHash(parents[0])] {
			c, err := object.GetCommit(m.objs, plumbing.NewHash(parents[0]))
			if err != nil {
				return "", "", nil, nil
			}
			return parents[0], c.TreeHash.String(), ids, nil
		}
		walk = parents[0]
	}
	return "", "", nil, nil
}

// parents are a commit's parents, from what scan read, else the object.
func (m *Matcher) parents(h string, info map[string]*scanned) ([]string, bool) {
	if c := info[h]; c != nil {
		return c.parents, true
	}
	c, err := object.GetCommit(m.objs, plumbing.NewHash(h))
	if err != nil {
		return nil, false
	}
	out := make([]string, len(c.ParentHashes))
	for i, p := range c.ParentHashes {
		out[i] = p.String()
	}
	return out, true
}

// Arrived lists the commits (not merges) that revs select, as git
// rev-list takes them ("new", "^old"), newest first, at most limit.
func (m *Matcher) Arrived(limit int, revs ...string) ([]string, error) {
	cmd := m.git(append([]string{"rev-list", "--no-merges", fmt.Sprintf("--max-count=%d", limit), "--end-of-options"}, revs...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git rev-list: %s", firstLine(stderr.String(), err))
	}
	return strings.Fields(stdout.String()), nil
}

// git runs git on the repository (its worktree's git dir: HEAD and
// ORIG_HEAD are the worktree's).
func (m *Matcher) git(args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"--git-dir=" + m.repo.GitDir}, args...)...)
	cmd.Env = os.Environ()
	return cmd
}

// Inherited is what one commit inherits, and how.
type Inherited struct {
	Commit string   `json:"commit"`
	IDs    []string `json:"checkpoints"`
	Via    string   `json:"via"`
}

// Match finds, among the arriving commits, those that carry the change of
// linked commits (see the package's promises), and what each inherits.
// replay names how a commit with a linked commit's patch-id came:
// "cherry-pick" or "rebase". A commit linked itself is left alone. Update
// first, so the index knows what was linked.
func (m *Matcher) Match(ctx context.Context, arrivals []string, replay string) ([]Inherited, error) {
	ix, err := readIndex(m.indexPath())
	if err != nil {
		return nil, err
	}
	byPatch, byTree, byChange := map[string][]*Entry{}, map[string][]*Entry{}, map[string][]*Entry{}
	for _, e := range ix.entries {
		if e.PatchID != "" {
			byPatch[e.PatchID] = append(byPatch[e.PatchID], e)
		}
		if e.Base != "" {
			byTree[e.Tree] = append(byTree[e.Tree], e)
			if e.Change != "" {
				byChange[e.Change] = append(byChange[e.Change], e)
			}
		}
	}
	var todo []string
	for _, h := range arrivals {
		if e := ix.entries[h]; e == nil || e.Tree == "" {
			todo = append(todo, h)
		}
	}
	info, err := m.scan(todo) // merges are left out
	if err != nil {
		return nil, err
	}
	var out []Inherited
	for _, h := range todo {
		c := info[h]
		if c == nil || len(c.parents) != 1 || c.change == "" {
			continue // a merge, or a commit that changes nothing: carries nothing
		}
		// A replay first: a squash of one commit is one too. Each
		// checkpoint is inherited once, the first way found.
		found := map[string]bool{}
		add := func(ids []string, via string) {
			ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return found[id] })
			for _, id := range ids {
				found[id] = true
			}
			if len(ids) > 0 {
				out = append(out, Inherited{Commit: h, IDs: ids, Via: via})
			}
		}
		for _, e := range byPatch[c.patchID] {
			if e.Commit == h || c.patchID == "" {
				continue
			}
			ids, err := m.cp.Notes(e.Commit)
			if err != nil {
				return nil, err
			}
			add(ids, fmt.Sprintf("%s of %s", replay, short(e.Commit)))
		}
		seen := map[string]bool{}
		for _, e := range slices.Concat(byTree[c.tree], byChange[c.change]) {
			if e.Commit != h && !seen[e.Commit] {
				seen[e.Commit] = true
				add(e.IDs, fmt.Sprintf("squash of %s..%s", short(e.Base), short(e.Commit)))
			}
		}
		if len(found) == 0 && m.Forge != nil {
			pulls, err := m.Forge.MergedPulls(ctx, h)
			if err != nil {
				return out, fmt.Errorf("pull requests of %s: %w", short(h), err)
			}
			for _, p := range pulls {
				var ids []string
				for _, pc := range p.Commits {
					got, err := m.cp.Notes(pc)
					if err != nil {
						return nil, err
					}
					for _, id := range got {
						if !slices.Contains(ids, id) {
							ids = append(ids, id)
						}
					}
				}
				add(ids, fmt.Sprintf("PR #%d", p.Number))
			}
		}
	}
	return out, nil
}

// Apply writes what Match found into the commits' notes.
func (m *Matcher) Apply(found []Inherited) error {
	var errs []error
	for _, f := range found {
		if err := m.cp.Inherit(f.Commit, f.IDs, f.Via); err != nil {
			errs = append(errs, err)
			continue
		}
		m.st.Logger().Info("links inherited", "commit", f.Commit, "via", f.Via, "checkpoints", f.IDs)
	}
	return errors.Join(errs...)
}

// Rewritten gives each rewritten commit (a post-rewrite's "old new"
// lines) the links of the commit it replaced that its note lacks: git
// copies notes itself where notes.rewriteRef names tether's, and then
// nothing is missing, but the note is tidied (TidyNote: git concatenates
// the notes of squashed commits). how is "rebase" or "amend".
func (m *Matcher) Rewritten(lines io.Reader, how string) ([]Inherited, error) {
	var out []Inherited
	sc := bufio.NewScanner(lines)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || !validHex(f[0]) || !validHex(f[1]) {
			continue
		}
		if err := m.cp.TidyNote(f[1]); err != nil {
			return nil, err
		}
		old, err := m.cp.Notes(f[0])
		if err != nil || len(old) == 0 {
			continue
		}
		now, err := m.cp.Notes(f[1])
		if err != nil {
			return nil, err
		}
		missing := slices.DeleteFunc(old, func(id string) bool { return slices.Contains(now, id) })
		if len(missing) > 0 {
			out = append(out, Inherited{Commit: f[1], IDs: missing, Via: fmt.Sprintf("%s of %s", how, short(f[0]))})
		}
	}
	return out, sc.Err()
}

func commitHashes(cs []*object.Commit) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Hash.String()
	}
	return out
}

// short abbreviates a commit as a note names it.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// firstLine is the first line git wrote on stderr, else err.
func firstLine(stderr string, err error) string {
	if line, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n"); line != "" {
		return line
	}
	return err.Error()
}

// maxArrivals bounds the commits one look at a remote's branches matches.
const maxArrivals = 10_000

// RemoteArrivals lists the commits the remote's tracking branches
// (refs/remotes/<remote>/) gained since the last look that saved their
// tips, or, at the first look, those no local branch has: what a git fetch
// brought. save records the tips for the next look.
func (m *Matcher) RemoteArrivals(remote string) (arrived []string, save func() error, err error) {
	prefix := "refs/remotes/" + remote + "/"
	refs, err := m.objs.IterReferences()
	if err != nil {
		return nil, nil, fmt.Errorf("list refs: %w", err)
	}
	tips := map[string]string{}
	var branches []string
	_ = refs.ForEach(func(r *plumbing.Reference) error {
		name := r.Name().String()
		switch {
		case r.Type() != plumbing.HashReference:
		case strings.HasPrefix(name, prefix):
			tips[name] = r.Hash().String()
		case strings.HasPrefix(name, "refs/heads/"):
			branches = append(branches, r.Hash().String())
		}
		return nil
	})
	path := filepath.Join(m.st.Dir(), "links", "seen-"+hex.EncodeToString([]byte(remote)))
	var not []string
	if data, err := os.ReadFile(path); err == nil {
		for _, h := range strings.Fields(string(data)) {
			if validHex(h) && m.objs.HasEncodedObject(plumbing.NewHash(h)) == nil {
				not = append(not, "^"+h)
			}
		}
	} else {
		for _, h := range branches {
			not = append(not, "^"+h)
		}
	}
	var revs []string
	for _, h := range tips {
		revs = append(revs, h)
	}
	save = func() error {
		var b strings.Builder
		for _, h := range slices.Sorted(maps.Values(tips)) {
			b.WriteString(h + "\n")
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		return os.WriteFile(path, []byte(b.String()), 0o600)
	}
	if len(revs) == 0 {
		return nil, save, nil
	}
	slices.Sort(revs)
	arrived, err = m.Arrived(maxArrivals, append(revs, not...)...)
	return arrived, save, err
}
