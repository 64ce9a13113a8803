package capture_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/capture"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/snapshot"
	"github.com/tetherdev/tether/state"
)

func TestRef(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"3f2a9c1e-aaaa", capture.RefPrefix + "3f2a9c1e-aaaa"},
		{"a.b_c", capture.RefPrefix + "a.b_c"},
		{".hidden", ""},
		{"x..y", ""},
		{"name.lock", ""},
		{"trailing.", ""},
	} {
		got := capture.Ref(tc.id)
		if tc.want != "" && got != tc.want {
			t.Errorf("Ref(%q) = %q, want %q", tc.id, got, tc.want)
		}
		if tc.want == "" && !strings.HasPrefix(got, capture.RefPrefix+"x-") {
			t.Errorf("Ref(%q) = %q, want a hashed name", tc.id, got)
		}
		if out, err := exec.Command("git", "check-ref-format", got).CombinedOutput(); err != nil {
			t.Errorf("Ref(%q) = %q, which git refuses: %v %s", tc.id, got, err, out)
		}
	}
}

func TestMessageRoundTrip(t *testing.T) {
	for _, e := range []capture.Entry{
		{Turn: 3, At: capture.Start},
		{Turn: 12, At: capture.Rewind, Restored: "abc"},
		{Turn: 2, At: capture.End, Late: []string{"other.txt", "dir/with\nnewline \"and quotes\"", " spaced "}},
	} {
		got, ok := capture.ParseMessage(capture.Message("sess", e))
		if !ok || !reflect.DeepEqual(got, e) {
			t.Errorf("ParseMessage(message(%+v)) = %+v, %v", e, got, ok)
		}
	}
	if _, ok := capture.ParseMessage("a commit of someone else's\n"); ok {
		t.Error("a message without trailers parsed as a capture")
	}
}

// A capture's message reads back as the entry it was written from, and
// nothing else parses as more than it says.
func FuzzParseMessage(f *testing.F) {
	f.Add("sess", 1, capture.End, "", "a.txt")
	f.Add("s", 7, capture.Rewind, "0123", "dir/\x00odd\n\"name")
	f.Fuzz(func(t *testing.T, session string, turn int, at, restored, late string) {
		e := capture.Entry{Turn: turn, At: at, Restored: restored, Late: []string{late}}
		got, ok := capture.ParseMessage(capture.Message(session, e))
		clean := at != "" && !strings.ContainsAny(at+restored+session, "\n\r") && !strings.Contains(session, "Tether-")
		if clean && (!ok || !reflect.DeepEqual(got, e)) {
			t.Errorf("ParseMessage(Message(%q, %+v)) = %+v, %v", session, e, got, ok)
		}
		capture.ParseMessage(late) // any text: no panic
	})
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

	s := capture.New(repo, st)
	start, err := s.CaptureTurn("sess-1", 1, capture.Start, time.Now())
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
	end, err := s.CaptureTurn("sess-1", 1, capture.End, time.Now())
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

	r, err := snapshot.OpenReader(repo.CommonDir)
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
	if len(list) != 2 || !reflect.DeepEqual(list[0], start) || !reflect.DeepEqual(list[1], end) {
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

// TestMain lets the test binary be a recording process of its own: many
// of them record captures of one session at once in
// TestConcurrentRecords.
func TestMain(m *testing.M) {
	if dir := os.Getenv("CAPTURE_TEST_WORKTREE"); dir != "" {
		os.Exit(recordProcess(dir, os.Getenv("CAPTURE_TEST_TREE"), os.Getenv("CAPTURE_TEST_TURN")))
	}
	os.Exit(m.Run())
}

// recordsPerProcess is how many captures each recording process records.
const recordsPerProcess = 20

func recordProcess(dir, tree, turn string) int {
	repo, err := gitdir.Find(dir)
	if err == nil {
		var st *state.Store
		if st, err = state.Open(repo.CommonDir, state.Options{}); err == nil {
			defer st.Close()
			n, _ := strconv.Atoi(turn)
			w := capture.New(repo, st)
			for i := 0; i < recordsPerProcess && err == nil; i++ {
				_, err = w.Record("sess-many", capture.Entry{Turn: n*100 + i, At: capture.Start, Tree: tree})
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// Many processes recording captures of one session at once each land
// every one of theirs on its ref, none lost: the ref moves only from the
// tip each one read, under git's own ref lock.
func TestConcurrentRecords(t *testing.T) {
	repo, _ := testRepo(t)
	tree := run(t, repo.WorkTree, "git", "rev-parse", "HEAD^{tree}")
	const n = 8
	procs := make([]*exec.Cmd, n)
	outs := make([]*strings.Builder, n)
	for i := range procs {
		outs[i] = &strings.Builder{}
		procs[i] = exec.Command(os.Args[0], "-test.run=^$")
		procs[i].Env = append(os.Environ(), "CAPTURE_TEST_WORKTREE="+repo.WorkTree, "CAPTURE_TEST_TREE="+tree, fmt.Sprintf("CAPTURE_TEST_TURN=%d", i+1))
		procs[i].Stderr = outs[i]
		if err := procs[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			t.Errorf("recording process %d: %v: %s", i+1, err, outs[i])
		}
	}
	turns := strings.Fields(run(t, repo.WorkTree, "git", "log", "--format=%(trailers:key=Tether-Turn,valueonly)", capture.Ref("sess-many")))
	slices.Sort(turns)
	if len(turns) != n*recordsPerProcess || len(slices.Compact(turns)) != n*recordsPerProcess {
		t.Errorf("the ref holds %d captures, %d distinct; want each of the %d once", len(turns), len(slices.Compact(turns)), n*recordsPerProcess)
	}
	if out := run(t, repo.WorkTree, "git", "fsck", "--strict", "--no-progress"); strings.Contains(out, "error") {
		t.Errorf("git fsck: %s", out)
	}
}

// A capture that runs after its boundary (the hook starts it in the
// background) names the paths written since the boundary: what it holds of
// them is not what the turn left. Written before the boundary, a path is
// the turn's; written, or deleted, after it, it is late.
func TestCaptureLate(t *testing.T) {
	repo, st := testRepo(t)
	dir := repo.WorkTree
	write(t, dir, "d/gone-later.txt", "x\n")
	w := capture.New(repo, st)
	if _, err := w.CaptureTurn("sess-late", 1, capture.Start, time.Now()); err != nil {
		t.Fatal(err)
	}
	// The turn edits a.txt and b.txt, and ends.
	write(t, dir, "a.txt", "the turn's\n")
	write(t, dir, "b.txt", "the turn's\n")
	boundary := time.Now()
	// Then, before the end capture runs, the user writes other.txt, edits
	// b.txt again and deletes d/gone-later.txt. A file's time comes from
	// the kernel's clock, which may lag behind by a tick: wait one out.
	time.Sleep(50 * time.Millisecond)
	write(t, dir, "other.txt", "the user's\n")
	write(t, dir, "b.txt", "the user's\n")
	if err := os.Remove(filepath.Join(dir, "d", "gone-later.txt")); err != nil {
		t.Fatal(err)
	}
	end, err := w.CaptureTurn("sess-late", 1, capture.End, boundary)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b.txt", "d/gone-later.txt", "other.txt"}; !slices.Equal(end.Late, want) {
		t.Errorf("late paths %q, want %q (a.txt was written before the boundary)", end.Late, want)
	}
	// Plain git reads them in the capture's message.
	msg := run(t, dir, "git", "log", "-1", "--format=%B", capture.Ref("sess-late"))
	if got, ok := capture.ParseMessage(msg); !ok || !slices.Equal(got.Late, end.Late) || !strings.Contains(msg, "\nTether-Late: \"other.txt\"") {
		t.Errorf("the end capture's message:\n%s\nwant its late paths, each in a Tether-Late trailer", msg)
	}
	// A capture taken where it is wanted (a zero boundary) looks at none.
	swept, err := w.CaptureTurn("sess-late", 1, capture.Swept, time.Time{})
	if err != nil || swept.Late != nil {
		t.Errorf("swept capture: %+v, %v; want no late paths", swept, err)
	}
}

// A ref git has packed (git gc, git pack-refs) is read from packed-refs,
// and the next capture goes on top of it.
func TestCaptureOnAPackedRef(t *testing.T) {
	repo, st := testRepo(t)
	w := capture.New(repo, st)
	first, err := w.CaptureTurn("sess-packed", 1, capture.Start, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	run(t, repo.WorkTree, "git", "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(repo.CommonDir, filepath.FromSlash(capture.Ref("sess-packed")))); !os.IsNotExist(err) {
		t.Fatalf("the ref is still loose after git pack-refs: %v", err)
	}
	write(t, repo.WorkTree, "a.txt", "edited\n")
	second, err := w.CaptureTurn("sess-packed", 1, capture.End, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if parent := run(t, repo.WorkTree, "git", "rev-parse", second.Commit+"^"); parent != first.Commit {
		t.Errorf("the second capture's parent is %s, want the packed tip %s", parent, first.Commit)
	}
	if tip := run(t, repo.WorkTree, "git", "rev-parse", capture.Ref("sess-packed")); tip != second.Commit {
		t.Errorf("git reads the ref as %s, want %s", tip, second.Commit)
	}
	if err := w.Remove("sess-packed"); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", repo.WorkTree, "rev-parse", "--verify", "--quiet", capture.Ref("sess-packed")).Output(); err == nil {
		t.Errorf("after Remove git still finds the ref: %s", out)
	}
}

// A ref locked by a git that died holding it is never written through:
// the capture fails and says so, as git update-ref would.
func TestCaptureRespectsGitsRefLock(t *testing.T) {
	repo, st := testRepo(t)
	w := capture.New(repo, st)
	first, err := w.CaptureTurn("sess-locked", 1, capture.Start, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(repo.CommonDir, filepath.FromSlash(capture.Ref("sess-locked"))) + ".lock"
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := w.CaptureTurn("sess-locked", 1, capture.End, time.Now()); err == nil || !strings.Contains(err.Error(), "kept moving") {
		t.Errorf("capture under another writer's lock: %v, want it refused", err)
	}
	if tip := run(t, repo.WorkTree, "git", "rev-parse", capture.Ref("sess-locked")); tip != first.Commit {
		t.Errorf("the ref moved to %s under another writer's lock", tip)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("the other writer's lock was removed: %v", err)
	}
}
