package checkpoint

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestMergeNote(t *testing.T) {
	tests := []struct {
		name string
		text string
		ids  []string
		want string
	}{
		{"empty note", "", []string{"aaaa", "bbbb"}, "Tether-Checkpoint: aaaa\nTether-Checkpoint: bbbb\n"},
		{"ids deduplicated", "", []string{"aaaa", "aaaa"}, "Tether-Checkpoint: aaaa\n"},
		{"existing line kept once", "Tether-Checkpoint: aaaa\n", []string{"aaaa", "cccc"}, "Tether-Checkpoint: aaaa\nTether-Checkpoint: cccc\n"},
		{"human note kept", "Reviewed by Ann.\n\nShip it.", []string{"aaaa"}, "Reviewed by Ann.\n\nShip it.\n\nTether-Checkpoint: aaaa\n"},
		{"checkpoint lines gathered after the text", "Tether-Checkpoint: aaaa\n\nby hand\n", []string{"bbbb"}, "by hand\n\nTether-Checkpoint: aaaa\nTether-Checkpoint: bbbb\n"},
		{"concatenated by a git rewrite", "Tether-Checkpoint: aaaa\n\nTether-Checkpoint: aaaa\nTether-Checkpoint: bbbb\n", nil,
			"Tether-Checkpoint: aaaa\nTether-Checkpoint: bbbb\n"},
		{"blank runs collapsed, edges trimmed", "\n\nhello\n\n\n\nworld\n\n", []string{"dddd"}, "hello\n\nworld\n\nTether-Checkpoint: dddd\n"},
		{"crlf", "note\r\nTether-Checkpoint: aaaa\r\n", []string{"aaaa"}, "note\n\nTether-Checkpoint: aaaa\n"},
		{"line with more words is not ours", "Tether-Checkpoint: aaaa extra\n", []string{"aaaa"}, "Tether-Checkpoint: aaaa extra\n\nTether-Checkpoint: aaaa\n"},
		{"nothing", "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mergeNote(tt.text, direct(tt.ids))
			if got != tt.want {
				t.Errorf("mergeNote(%q, %q) = %q, want %q", tt.text, tt.ids, got, tt.want)
			}
			if again := mergeNote(got, direct(tt.ids)); again != got {
				t.Errorf("merging again changed %q to %q", got, again)
			}
		})
	}
}

func TestNoteIDs(t *testing.T) {
	text := "intro\nTether-Checkpoint: aaaa\n  Tether-Checkpoint:   bbbb  \nTether-Checkpoint: aaaa\nTether-Checkpoint:\nTether-Checkpoint: x y\n"
	if got, want := noteIDs(text), []string{"aaaa", "bbbb"}; !reflect.DeepEqual(got, want) {
		t.Errorf("noteIDs = %q, want %q", got, want)
	}
}

func FuzzMergeNote(f *testing.F) {
	f.Add("", "aaaa")
	f.Add("Tether-Checkpoint: aaaa\n\nTether-Checkpoint: aaaa\n", "bbbb")
	f.Add("free text\r\n\r\n", "cccc")
	f.Fuzz(func(t *testing.T, text, id string) {
		ids := strings.Fields(id)
		got := mergeNote(text, direct(ids))
		have := noteIDs(got)
		for _, want := range ids {
			if !slices.Contains(have, want) {
				t.Fatalf("mergeNote(%q, %q) = %q lacks %q", text, ids, got, want)
			}
		}
		// Each checkpoint is named once, and merging is idempotent.
		count := map[string]int{}
		for line := range strings.Lines(got) {
			if id, ok := noteLineID(line); ok {
				count[id]++
				if count[id] > 1 {
					t.Fatalf("mergeNote(%q, %q) = %q names %q twice", text, ids, got, id)
				}
			}
		}
		if again := mergeNote(got, direct(ids)); again != got {
			t.Fatalf("not idempotent: %q then %q", got, again)
		}
		if got != "" && !strings.HasSuffix(got, "\n") {
			t.Fatalf("mergeNote = %q, want a trailing newline", got)
		}
	})
}

// condensed returns a fixture with one checkpoint on the branch and a
// commit to link it to.
func condensed(t *testing.T) (f *fixture, id, head string) {
	t.Helper()
	f = newFixture(t)
	f.agent(t, "s1").turn("make it so")
	id = f.condense(t, "s1")[0].Checkpoint
	head = f.commit(t, "a.txt", "a\n")
	return f, id, head
}

func TestLinkMergesWithGitNote(t *testing.T) {
	t.Parallel()
	f, id, head := condensed(t)
	// A note written by git itself, at git's flat (no fanout) path.
	runGit(t, f.dir, "notes", "--ref=tether", "add", "-m", "Reviewed by a human.", head)
	if err := f.repo.Link(head, []string{id, id}); err != nil {
		t.Fatal(err)
	}
	if err := f.repo.Link(head, []string{id}); err != nil { // again: no change
		t.Fatal(err)
	}
	want := "Reviewed by a human.\n\nTether-Checkpoint: " + id
	if note := runGit(t, f.dir, "notes", "--ref=tether", "show", head); note != want {
		t.Errorf("note = %q, want %q", note, want)
	}
	// One note for the commit, still where git put it.
	if paths := runGit(t, f.dir, "ls-tree", "-r", "--name-only", NotesRef); paths != head {
		t.Errorf("notes tree paths:\n%s\nwant only %s", paths, head)
	}
	if n := runGit(t, f.dir, "rev-list", "--count", NotesRef); n != "2" {
		t.Errorf("notes history has %s commits, want git's and ours", n)
	}
	f.fsck(t)
}

func TestLinkFanoutReadByGit(t *testing.T) {
	t.Parallel()
	f, id, head := condensed(t)
	other := f.commit(t, "b.txt", "b\n")
	for _, c := range []string{head, other} {
		if err := f.repo.Link(c, []string{id}); err != nil {
			t.Fatal(err)
		}
	}
	paths := runGit(t, f.dir, "ls-tree", "-r", "--name-only", NotesRef)
	for _, c := range []string{head, other} {
		if !strings.Contains(paths, c[:2]+"/"+c[2:]) {
			t.Errorf("notes tree:\n%s\nwant %s at a fanout path", paths, c)
		}
		if note := runGit(t, f.dir, "notes", "--ref=tether", "show", c); note != "Tether-Checkpoint: "+id {
			t.Errorf("git notes show %s = %q", c[:8], note)
		}
	}
	// git adds to our fanout tree; we read what git wrote.
	third := f.commit(t, "c.txt", "c\n")
	runGit(t, f.dir, "notes", "--ref=tether", "add", "-m", "Tether-Checkpoint: "+id, third)
	for _, c := range []string{head, other, third} {
		if ids, err := f.repo.Notes(c[:10]); err != nil || len(ids) != 1 || ids[0] != id {
			t.Errorf("Notes(%s) = %q, %v", c[:10], ids, err)
		}
	}
	f.fsck(t)
}

func TestLinkErrors(t *testing.T) {
	t.Parallel()
	f, id, head := condensed(t)
	if err := f.repo.Link("0000000000000000000000000000000000000000", []string{id}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Link to a missing commit: %v", err)
	}
	tree := runGit(t, f.dir, "rev-parse", "HEAD^{tree}")
	if err := f.repo.Link(tree, []string{id}); err == nil || !strings.Contains(err.Error(), "not a commit") {
		t.Errorf("Link to a tree: %v", err)
	}
	err := f.repo.Link(head, []string{"deadbeefdeadbeef", id, "../x"})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "deadbeefdeadbeef") || !strings.Contains(err.Error(), `"../x"`) {
		t.Errorf("Link with unknown checkpoints: %v", err)
	}
	// The known one is linked anyway.
	if ids, err := f.repo.Notes(head); err != nil || len(ids) != 1 || ids[0] != id {
		t.Errorf("Notes = %q, %v", ids, err)
	}
	runGit(t, f.dir, "tag", "-a", "-m", "release", "v1", head)
	for _, rev := range []string{"main", "refs/heads/main", "v1", "tags/v1", head[:7]} {
		if ids, err := f.repo.Notes(rev); err != nil || len(ids) != 1 {
			t.Errorf("Notes(%s) = %q, %v", rev, ids, err)
		}
	}
	if _, err := f.repo.Notes("HEAD~1"); err == nil {
		t.Error("Notes(HEAD~1): revision syntax is not supported, want an error")
	}
}

func TestNotesSurviveRewrites(t *testing.T) {
	t.Parallel()
	f, id, _ := condensed(t)
	runGit(t, f.dir, "config", "notes.rewriteRef", NotesRef)
	base := runGit(t, f.dir, "rev-parse", "HEAD")
	runGit(t, f.dir, "checkout", "-q", "-b", "feature")
	work := f.commit(t, "feature.txt", "v1\n")
	if err := f.repo.Link(work, []string{id}); err != nil {
		t.Fatal(err)
	}

	runGit(t, f.dir, "commit", "-q", "--amend", "-m", "feature, amended")
	amended := runGit(t, f.dir, "rev-parse", "HEAD")
	if amended == work {
		t.Fatal("amend did not rewrite the commit")
	}
	if note := runGit(t, f.dir, "notes", "--ref=tether", "show", amended); note != "Tether-Checkpoint: "+id {
		t.Errorf("note after amend = %q", note)
	}

	runGit(t, f.dir, "checkout", "-q", "main")
	f.commit(t, "main.txt", "moved on\n")
	runGit(t, f.dir, "checkout", "-q", "feature")
	runGit(t, f.dir, "rebase", "-q", "main")
	rebased := runGit(t, f.dir, "rev-parse", "HEAD")
	if rebased == amended || runGit(t, f.dir, "rev-parse", "HEAD~2") != base {
		t.Fatal("rebase did not replay the commit onto main")
	}
	if ids, err := f.repo.Notes(rebased); err != nil || len(ids) != 1 || ids[0] != id {
		t.Errorf("Notes after rebase = %q, %v", ids, err)
	}
	// Linking the rewritten commit again merges with the note git copied.
	if err := f.repo.Link(rebased, []string{id}); err != nil {
		t.Fatal(err)
	}
	if note := runGit(t, f.dir, "notes", "--ref=tether", "show", rebased); note != "Tether-Checkpoint: "+id {
		t.Errorf("note after rebase and relink = %q", note)
	}
	f.fsck(t)
}

func TestLinkLosesRaceToGit(t *testing.T) {
	t.Parallel()
	f, id, head := condensed(t)
	other := f.commit(t, "b.txt", "b\n")
	raced := 0
	f.repo.hook = func(point, ref string) {
		if point == "before-ref" && ref == NotesRef && raced == 0 {
			raced++
			runGit(t, f.dir, "notes", "--ref=tether", "add", "-m", "by git, concurrently", other)
		}
	}
	if err := f.repo.Link(head, []string{id}); err != nil {
		t.Fatal(err)
	}
	if raced != 1 {
		t.Fatal("the race never ran")
	}
	if note := runGit(t, f.dir, "notes", "--ref=tether", "show", other); note != "by git, concurrently" {
		t.Errorf("git's note was lost: %q", note)
	}
	if note := runGit(t, f.dir, "notes", "--ref=tether", "show", head); note != "Tether-Checkpoint: "+id {
		t.Errorf("our note = %q", note)
	}
	f.fsck(t)
}

// Inherited links go in blocks of their own, each under its Tether-Via
// line, after the commit's own; a checkpoint linked directly stays direct.
func TestMergeNoteVia(t *testing.T) {
	squash := []NoteLink{{ID: "aaaa", Via: "squash of 1111..2222"}, {ID: "bbbb", Via: "squash of 1111..2222"}}
	tests := []struct {
		name string
		text string
		add  []NoteLink
		want string
	}{
		{"inherited only", "", squash, "Tether-Checkpoint: aaaa\nTether-Checkpoint: bbbb\nTether-Via: squash of 1111..2222\n"},
		{"after the commit's own", "Tether-Checkpoint: cccc\n", squash,
			"Tether-Checkpoint: cccc\n\nTether-Checkpoint: aaaa\nTether-Checkpoint: bbbb\nTether-Via: squash of 1111..2222\n"},
		{"direct wins", "Tether-Checkpoint: aaaa\n", squash,
			"Tether-Checkpoint: aaaa\n\nTether-Checkpoint: bbbb\nTether-Via: squash of 1111..2222\n"},
		{"direct added later wins", "Tether-Checkpoint: aaaa\nTether-Via: PR #12\n", []NoteLink{{ID: "aaaa"}}, "Tether-Checkpoint: aaaa\n"},
		{"two ways", "Tether-Checkpoint: aaaa\nTether-Via: cherry-pick of 3333\n", []NoteLink{{ID: "dddd", Via: "PR #12"}},
			"Tether-Checkpoint: aaaa\nTether-Via: cherry-pick of 3333\n\nTether-Checkpoint: dddd\nTether-Via: PR #12\n"},
		{"first way kept", "Tether-Checkpoint: aaaa\nTether-Via: cherry-pick of 3333\n", []NoteLink{{ID: "aaaa", Via: "PR #12"}},
			"Tether-Checkpoint: aaaa\nTether-Via: cherry-pick of 3333\n"},
		{"concatenated by a git rewrite", "Tether-Checkpoint: aaaa\nTether-Via: PR #1\n\nTether-Checkpoint: aaaa\nTether-Via: PR #1\n", nil,
			"Tether-Checkpoint: aaaa\nTether-Via: PR #1\n"},
		{"a via with nothing above is text", "Tether-Via: nothing\n", []NoteLink{{ID: "aaaa"}}, "Tether-Via: nothing\n\nTether-Checkpoint: aaaa\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mergeNote(tt.text, tt.add)
			if got != tt.want {
				t.Errorf("mergeNote(%q, %v) = %q, want %q", tt.text, tt.add, got, tt.want)
			}
			if again := mergeNote(got, tt.add); again != got {
				t.Errorf("merging again changed %q to %q", got, again)
			}
		})
	}
}

// What mergeNote writes reads back as the links it was given.
func FuzzNoteLinks(f *testing.F) {
	f.Add("", "aaaa", "squash of 1..2")
	f.Add("Tether-Checkpoint: aaaa\nTether-Via: PR #3\n", "bbbb", "")
	f.Fuzz(func(t *testing.T, text, id, via string) {
		if strings.ContainsAny(via, "\r\n") {
			return
		}
		via = strings.TrimSpace(via)
		ids := strings.Fields(id)
		var add []NoteLink
		for _, id := range ids {
			add = append(add, NoteLink{ID: id, Via: via})
		}
		got := mergeNote(text, add)
		_, links := parseNote(got)
		for _, id := range ids {
			i := slices.IndexFunc(links, func(l NoteLink) bool { return l.ID == id })
			if i < 0 {
				t.Fatalf("mergeNote(%q, %v) = %q lacks %q", text, add, got, id)
			}
		}
		if again := mergeNote(got, add); again != got {
			t.Fatalf("not idempotent: %q then %q", got, again)
		}
		if _, again := parseNote(mergeNote(got, nil)); !slices.Equal(again, links) {
			t.Fatalf("links of %q changed on rewriting: %v then %v", got, links, again)
		}
	})
}
