package snapshot

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/state"
)

func TestRef(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"3f2a9c1e-aaaa", RefPrefix + "3f2a9c1e-aaaa"},
		{"a.b_c", RefPrefix + "a.b_c"},
		{".hidden", ""},
		{"x..y", ""},
		{"name.lock", ""},
		{"trailing.", ""},
	} {
		got := Ref(tc.id)
		if tc.want != "" && got != tc.want {
			t.Errorf("Ref(%q) = %q, want %q", tc.id, got, tc.want)
		}
		if tc.want == "" && !strings.HasPrefix(got, RefPrefix+"x-") {
			t.Errorf("Ref(%q) = %q, want a hashed name", tc.id, got)
		}
		if out, err := exec.Command("git", "check-ref-format", got).CombinedOutput(); err != nil {
			t.Errorf("Ref(%q) = %q, which git refuses: %v %s", tc.id, got, err, out)
		}
	}
}

func TestPick(t *testing.T) {
	e := func(turn int, at, tree string) Entry { return Entry{Turn: turn, At: at, Tree: tree} }
	entries := []Entry{
		e(1, Start, "s1"), e(1, End, "e1"), e(1, End, "e1-late"),
		e(2, Start, "s2"), // cut short by turn 3
		e(3, Start, "s3"), e(3, Swept, "w3"),
		e(4, Start, "s4"), // still running, or never looked at
		e(6, End, "e6"),   // its start was never captured
	}
	for _, tc := range []struct {
		turn       int
		start, end string
		ok         bool
	}{
		{1, "s1", "e1", true},
		{2, "s2", "s3", true},
		{3, "s3", "s4", true}, // the next turn's start comes before a later look
		{4, "", "", false},
		{5, "", "", false},
		{6, "", "", false},
	} {
		start, end, ok := Pick(entries, tc.turn)
		if ok != tc.ok || ok && (start.Tree != tc.start || end.Tree != tc.end) {
			t.Errorf("Pick(turn %d) = %q, %q, %v; want %q, %q, %v", tc.turn, start.Tree, end.Tree, ok, tc.start, tc.end, tc.ok)
		}
	}
	// An interrupted last turn ends where the sweep found it.
	if _, end, ok := Pick([]Entry{e(1, Start, "s"), e(1, Swept, "w")}, 1); !ok || end.Tree != "w" {
		t.Errorf("Pick of an interrupted turn = %q, %v; want w", end.Tree, ok)
	}
}

func TestMessageRoundTrip(t *testing.T) {
	for _, e := range []Entry{{Turn: 3, At: Start}, {Turn: 12, At: Rewind, Restored: "abc"}} {
		got, ok := parseMessage(message("sess", e))
		if !ok || got != e {
			t.Errorf("parseMessage(message(%+v)) = %+v, %v", e, got, ok)
		}
	}
	if _, ok := parseMessage("a commit of someone else's\n"); ok {
		t.Error("a message without trailers parsed as a capture")
	}
}

// testRepo makes a repository with one commit of a.txt and b.txt, an
// ignore rule, and its tether store.
func testRepo(t *testing.T) (gitdir.Repo, *state.Store) {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, "git", "init", "-q", "-b", "main")
	write(t, dir, "a.txt", "a\n")
	write(t, dir, "b.txt", "b\n")
	write(t, dir, ".gitignore", "*.log\n")
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "init")
	repo, err := gitdir.Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(repo.CommonDir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return repo, st
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A capture holds tracked and untracked files but not ignored ones, and
// leaves the user's index, HEAD and status as they were; what a turn
// changed reads back from two captures.
func TestCaptureAndDiff(t *testing.T) {
	repo, st := testRepo(t)
	dir := repo.WorkTree
	write(t, dir, "staged.txt", "staged\n")
	run(t, dir, "git", "add", "staged.txt")
	write(t, dir, "user-untracked.txt", "mine\n")
	index := filepath.Join(repo.GitDir, "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	status := run(t, dir, "git", "status", "--porcelain")
	head := run(t, dir, "git", "rev-parse", "HEAD")

	s := New(repo, st)
	start, err := s.CaptureTurn("sess-1", 1, Start)
	if err != nil {
		t.Fatal(err)
	}
	// The turn: edits a.txt, creates c/new.txt, deletes b.txt, writes a
	// log file that is ignored.
	write(t, dir, "a.txt", "a, edited\n")
	write(t, dir, "c/new.txt", "new\n")
	if err := os.Remove(filepath.Join(dir, "b.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "debug.log", "ignored\n")
	end, err := s.CaptureTurn("sess-1", 1, End)
	if err != nil {
		t.Fatal(err)
	}

	files := run(t, dir, "git", "ls-tree", "-r", "--name-only", start.Tree)
	if want := ".gitignore\na.txt\nb.txt\nstaged.txt\nuser-untracked.txt"; files != want {
		t.Errorf("start tree holds\n%s\nwant\n%s", files, want)
	}
	after, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Error("the user's index changed")
	}
	if got := run(t, dir, "git", "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved: %s, was %s", got, head)
	}
	wantStatus := status + "\n M a.txt\n D b.txt\n?? c/"
	if got := run(t, dir, "git", "status", "--porcelain"); !sameLines(got, wantStatus) {
		t.Errorf("git status:\n%s\nwant the user's own and the turn's:\n%s", got, wantStatus)
	}

	r, err := OpenReader(repo.CommonDir)
	if err != nil {
		t.Fatal(err)
	}
	list, err := r.List("sess-1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range list {
		list[i].Time = time.Time{} // Record does not know it
	}
	if len(list) != 2 || list[0] != start || list[1] != end {
		t.Fatalf("List = %+v, want %+v then %+v", list, start, end)
	}
	got, err := r.Diff(start.Tree, end.Tree)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Added, []string{"c/new.txt"}) || !slices.Equal(got.Modified, []string{"a.txt"}) || !slices.Equal(got.Deleted, []string{"b.txt"}) {
		t.Errorf("Diff = %+v", got)
	}
	if out := run(t, dir, "git", "fsck", "--strict", "--no-progress"); strings.Contains(out, "error") {
		t.Errorf("git fsck: %s", out)
	}

	if err := s.Remove("sess-1"); err != nil {
		t.Fatal(err)
	}
	if list, err := r.List("sess-1"); err != nil || len(list) != 0 {
		t.Errorf("after Remove, List = %v, %v", list, err)
	}
}

// sameLines compares two line sets, order aside: git status sorts
// untracked entries among the others by path.
func sameLines(a, b string) bool {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range x {
		x[i] = strings.TrimSpace(x[i])
	}
	for i := range y {
		y[i] = strings.TrimSpace(y[i])
	}
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

func TestPlan(t *testing.T) {
	h := func(c byte) File { return File{Hash: plumbing.Hash{c}, Mode: filemode.Regular} }
	none := File{}
	// from: after the turn; to: at its start; now: the worktree.
	from := map[string]File{"edited": h(2), "created": h(3), "deleted": none, "back": h(5), "theirs": h(6), "gone-since": h(7)}
	to := map[string]File{"edited": h(1), "created": none, "deleted": h(4), "back": h(5), "theirs": h(1), "gone-since": h(1)}
	now := map[string]File{"edited": h(2), "created": h(3), "deleted": none, "back": h(5), "theirs": h(9), "gone-since": none}
	paths := []string{"back", "created", "deleted", "edited", "gone-since", "theirs"}
	actions, conflicts := Plan(paths, from, to, now)
	want := []Action{{"created", "remove"}, {"deleted", "recreate"}, {"edited", "restore"}}
	if !slices.Equal(actions, want) {
		t.Errorf("actions = %v, want %v", actions, want)
	}
	if !slices.Equal(conflicts, []string{"gone-since", "theirs"}) {
		t.Errorf("conflicts = %v, want gone-since and theirs", conflicts)
	}
	// A mode change alone is a change.
	exec := File{Hash: plumbing.Hash{1}, Mode: filemode.Executable}
	if a, c := Plan([]string{"x"}, map[string]File{"x": exec}, map[string]File{"x": h(1)}, map[string]File{"x": exec}); len(c) != 0 || !slices.Equal(a, []Action{{"x", "restore"}}) {
		t.Errorf("mode change: %v, %v", a, c)
	}
}
