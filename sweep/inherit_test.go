package sweep

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/state"
)

// git runs git in dir as a person would, failing the test on an error.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commitFile writes a file and commits it.
func commitFile(t *testing.T, dir, name, content, msg string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", name)
	gitIn(t, dir, "commit", "-q", "-m", msg)
	return gitIn(t, dir, "rev-parse", "HEAD")
}

// teamRepo is an agent's clone of a bare repository standing for GitHub
// (the remote "server"; origin names the GitHub repository o/r, which the
// API is asked about), with a branch of two commits linked to a
// checkpoint, pushed to the server, and a reviewer's clone of the server.
func teamRepo(t *testing.T) (repo gitdir.Repo, st *state.Store, cp *checkpoint.Repo, id string, branch []string, reviewer string) {
	t.Helper()
	repo, st = newRepo(t)
	server := filepath.Join(t.TempDir(), "server.git")
	gitIn(t, repo.WorkTree, "init", "-q", "--bare", "-b", "main", server)
	gitIn(t, repo.WorkTree, "remote", "add", "server", server)
	gitIn(t, repo.WorkTree, "remote", "add", "origin", "https://github.com/o/r.git")
	gitIn(t, repo.WorkTree, "push", "-q", "server", "main")

	startTurn(t, st, repo, "agent-1", deadOwner(t))
	rep, err := Run(repo, st, Options{})
	if err != nil || len(rep.Checkpoints) != 1 {
		t.Fatalf("sweep: %+v, %v", rep, err)
	}
	id = rep.Checkpoints[0].Checkpoint
	if cp, err = checkpoint.Open(repo.CommonDir); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo.WorkTree, "switch", "-q", "-c", "feature")
	for i, name := range []string{"parser.go", "parser_test.go"} {
		c := commitFile(t, repo.WorkTree, name, "package parser // "+name+"\n", "turn "+string(rune('1'+i)))
		if err := cp.Link(c, []string{id}); err != nil {
			t.Fatal(err)
		}
		branch = append(branch, c)
	}
	gitIn(t, repo.WorkTree, "push", "-q", "server", "feature")

	reviewer = filepath.Join(t.TempDir(), "reviewer")
	gitIn(t, repo.WorkTree, "clone", "-q", server, reviewer)
	commitFile(t, reviewer, "CHANGELOG.md", "# Changes\n", "changelog")
	gitIn(t, repo.WorkTree, "switch", "-q", "main")
	return repo, st, cp, id, branch, reviewer
}

// pull brings the server's main into the agent's clone, as git pull does,
// and returns what arrived, as the post-merge hook names it.
func pull(t *testing.T, repo gitdir.Repo) []string {
	t.Helper()
	gitIn(t, repo.WorkTree, "pull", "-q", "--no-rebase", "server", "main")
	return []string{"HEAD", "^ORIG_HEAD"}
}

// A squash merge whose content drifted in review matches no linked
// change; GitHub's record of the pull request settles it: the squash
// commit inherits its commits' links, "PR #12".
func TestInheritFromGitHubPullRequest(t *testing.T) {
	repo, st, cp, id, branch, reviewer := teamRepo(t)
	gitIn(t, reviewer, "fetch", "-q", "origin", "feature")
	gitIn(t, reviewer, "merge", "-q", "--squash", "origin/feature")
	if err := os.WriteFile(filepath.Join(reviewer, "parser.go"), []byte("package parser // reviewed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, reviewer, "add", "parser.go")
	gitIn(t, reviewer, "commit", "-q", "-m", "Add a parser (#12)")
	squash := gitIn(t, reviewer, "rev-parse", "HEAD")
	gitIn(t, reviewer, "push", "-q", "origin", "main")
	gitIn(t, reviewer, "push", "-q", "origin", "--delete", "feature")

	revs := pull(t, repo)
	// Content alone cannot tell.
	found, _, err := Inherit(repo, st, InheritOptions{Revs: revs, Replay: "rebase"})
	if err != nil || len(found) != 0 {
		t.Fatalf("by content: %+v, %v; want nothing", found, err)
	}

	f := newGHFake(t)
	f.set(func() {
		f.merged = map[string]ghMerged{squash: {Number: 12, Commits: branch}}
	})
	// GitHub down: a warning, no link.
	f.set(func() { f.fail = serverError500 })
	found, warnings, err := Inherit(repo, st, InheritOptions{Revs: revs, Replay: "rebase", GitHub: f.options()})
	if err != nil || len(found) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], "github:") {
		t.Fatalf("GitHub down: %+v, %q, %v", found, warnings, err)
	}
	if links, _ := cp.NoteLinks(squash); len(links) != 0 {
		t.Fatalf("GitHub down: the squash got links %v", links)
	}
	f.set(func() { f.fail = nil })
	found, warnings, err = Inherit(repo, st, InheritOptions{Revs: revs, Replay: "rebase", GitHub: f.options()})
	if err != nil || len(warnings) != 0 || len(found) != 1 || found[0].Commit != squash || found[0].Via != "PR #12" {
		t.Fatalf("with GitHub: %+v, %q, %v", found, warnings, err)
	}
	links, err := cp.NoteLinks(squash)
	if err != nil || len(links) != 1 || links[0] != (checkpoint.NoteLink{ID: id, Via: "PR #12"}) {
		t.Fatalf("note of the squash: %+v, %v", links, err)
	}
	note := gitIn(t, repo.WorkTree, "notes", "--ref=tether", "show", squash)
	if note != "Tether-Checkpoint: "+id+"\nTether-Via: PR #12" {
		t.Fatalf("git notes show = %q", note)
	}
	gitIn(t, repo.WorkTree, "fsck", "--strict", "--no-dangling")
}

// A rebase merge on the server replays the branch's commits onto a main
// that moved: each replayed commit inherits by its patch-id, and the
// changelog commit that moved main inherits nothing.
func TestInheritRebaseMerge(t *testing.T) {
	repo, st, cp, id, branch, reviewer := teamRepo(t)
	gitIn(t, reviewer, "fetch", "-q", "origin", "feature")
	gitIn(t, reviewer, "switch", "-q", "-c", "feature", "origin/feature")
	gitIn(t, reviewer, "rebase", "-q", "main")
	gitIn(t, reviewer, "push", "-q", "-f", "origin", "feature")
	gitIn(t, reviewer, "switch", "-q", "main")
	gitIn(t, reviewer, "merge", "-q", "--ff-only", "feature")
	gitIn(t, reviewer, "push", "-q", "origin", "main")

	found, _, err := Inherit(repo, st, InheritOptions{Revs: pull(t, repo), Replay: "rebase"})
	if err != nil || len(found) != 2 {
		t.Fatalf("inherited %+v, %v; want the two replayed commits", found, err)
	}
	for i, c := range []string{"HEAD", "HEAD~1"} {
		h := gitIn(t, repo.WorkTree, "rev-parse", c)
		links, err := cp.NoteLinks(h)
		want := checkpoint.NoteLink{ID: id, Via: "rebase of " + branch[1-i][:12]}
		if err != nil || len(links) != 1 || links[0] != want {
			t.Errorf("%s: links %+v, %v; want %+v", c, links, err, want)
		}
	}
	if links, _ := cp.NoteLinks(gitIn(t, repo.WorkTree, "rev-parse", "HEAD~2")); len(links) != 0 {
		t.Errorf("the changelog commit inherited %v", links)
	}
}
