package checkpoint

import (
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func TestUnionNote(t *testing.T) {
	tests := []struct {
		name, ours, theirs, want string
	}{
		{"ids of both, once", "Tether-Checkpoint: aaaa\nTether-Checkpoint: bbbb\n", "Tether-Checkpoint: bbbb\nTether-Checkpoint: cccc\n",
			"Tether-Checkpoint: aaaa\nTether-Checkpoint: bbbb\nTether-Checkpoint: cccc\n"},
		{"their text after ours", "Reviewed by Ann.\n\nTether-Checkpoint: aaaa\n", "Ship it.\n\nTether-Checkpoint: bbbb\n",
			"Reviewed by Ann.\n\nShip it.\n\nTether-Checkpoint: aaaa\nTether-Checkpoint: bbbb\n"},
		{"a line both have is kept once", "Reviewed by Ann.\nTether-Checkpoint: aaaa\n", "Tether-Checkpoint: bbbb\n\nReviewed by Ann.\n",
			"Reviewed by Ann.\n\nTether-Checkpoint: aaaa\nTether-Checkpoint: bbbb\n"},
		{"ours empty", "", "by hand\n", "by hand\n"},
		{"theirs empty", "Tether-Checkpoint: aaaa\n", "", "Tether-Checkpoint: aaaa\n"},
		{"crlf lines compare equal", "note\r\n", "note\nmore\r\n", "note\n\nmore\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unionNote(tt.ours, tt.theirs); got != tt.want {
				t.Errorf("unionNote(%q, %q) = %q, want %q", tt.ours, tt.theirs, got, tt.want)
			}
		})
	}
}

func FuzzUnionNote(f *testing.F) {
	f.Add("Tether-Checkpoint: aaaa\n", "Tether-Checkpoint: bbbb\n")
	f.Add("Reviewed.\n\nTether-Checkpoint: aaaa\n", "Tether-Checkpoint: aaaa\nShip it.\r\n")
	f.Add("", "\n\n")
	f.Fuzz(func(t *testing.T, ours, theirs string) {
		got := unionNote(ours, theirs)
		lines := map[string]bool{}
		for line := range strings.Lines(got) {
			lines[strings.TrimSpace(line)] = true
		}
		ids := noteIDs(got)
		for _, side := range []string{ours, theirs} {
			for line := range strings.Lines(side) {
				if trimmed := strings.TrimSpace(line); !lines[trimmed] && trimmed != "" {
					if _, isID := noteLineID(trimmed); !isID {
						t.Fatalf("unionNote(%q, %q) = %q lost the line %q", ours, theirs, got, trimmed)
					}
				}
			}
			for _, id := range noteIDs(side) {
				if !slices.Contains(ids, id) {
					t.Fatalf("unionNote(%q, %q) = %q lost checkpoint %q", ours, theirs, got, id)
				}
			}
		}
		if n := strings.Count(got, noteKey); n < len(ids) {
			t.Fatalf("unionNote = %q: %d checkpoint lines for %d IDs", got, n, len(ids))
		}
		if again := unionNote(got, theirs); again != got {
			t.Fatalf("merging theirs again changed %q to %q", got, again)
		}
		if self := unionNote(ours, ours); self != mergeNote(ours, nil) {
			t.Fatalf("unionNote of a note with itself = %q, want %q", self, mergeNote(ours, nil))
		}
	})
}

func TestBesideName(t *testing.T) {
	h := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	for name, want := range map[string]string{
		"checkpoint.json":      "checkpoint.theirs-0123456789ab.json",
		"transcript.001.jsonl": "transcript.001.theirs-0123456789ab.jsonl",
		"README":               "README.theirs-0123456789ab",
		".hidden":              ".hidden.theirs-0123456789ab",
	} {
		if got := besideName(name, h); got != want {
			t.Errorf("besideName(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestTracking(t *testing.T) {
	for remote, want := range map[string]string{
		"origin":                       "origin",
		"up-stream_2.x":                "up-stream_2.x",
		"git@github.com:team/repo.git": "url-",
		"/srv/git/repo.git":            "url-",
		"../shared.git":                "url-",
		"origin/sub":                   "url-",
		"a..b":                         "url-",
		"x.lock":                       "url-",
		"-n":                           "url-",
		"":                             "url-",
	} {
		name := trackingName(remote)
		if want == "url-" && (!strings.HasPrefix(name, "url-") || len(name) != 20) || want != "url-" && name != want {
			t.Errorf("trackingName(%q) = %q, want %s", remote, name, want)
		}
		for ref, want := range map[plumbing.ReferenceName]string{
			CheckpointsRef:                           "refs/tether/remotes/" + name + "/checkpoints/v1",
			NotesRef:                                 "refs/notes/tether-remotes/" + name,
			LegacyBranch:                             "refs/tether/remotes/" + name + "/legacy-branch",
			LegacyTranscripts:                        "refs/tether/remotes/" + name + "/transcripts/v1/legacy",
			TranscriptRef("2026-05", "0123456789ab"): "refs/tether/remotes/" + name + "/transcripts/v1/2026-05/0123456789ab",
		} {
			if got := Tracking(remote, ref); got.String() != want {
				t.Errorf("Tracking(%q, %s) = %s, want %s", remote, ref, got, want)
			}
		}
		for _, ref := range []plumbing.ReferenceName{Tracking(remote, CheckpointsRef), Tracking(remote, NotesRef)} {
			if out, err := exec.Command("git", "check-ref-format", ref.String()).CombinedOutput(); err != nil {
				t.Errorf("git check-ref-format %s: %v %s", ref, err, out)
			}
		}
	}
	if trackingName("/a/repo.git") == trackingName("/b/repo.git") {
		t.Error("two paths share a tracking name")
	}
}

func FuzzTrackingName(f *testing.F) {
	f.Add("origin")
	f.Add("https://example.com/r.git")
	f.Add("..")
	f.Fuzz(func(t *testing.T, remote string) {
		name := trackingName(remote)
		if name == "" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "-") ||
			strings.Contains(name, "..") || strings.HasSuffix(name, ".lock") {
			t.Fatalf("trackingName(%q) = %q is not a ref component", remote, name)
		}
		for _, c := range []byte(name) {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
				t.Fatalf("trackingName(%q) = %q has %q", remote, name, c)
			}
		}
	})
}

func TestParsePushPorcelain(t *testing.T) {
	out := "To /srv/remote.git\n" +
		"=\trefs/notes/tether:refs/notes/tether\t[up to date]\n" +
		" \trefs/heads/tether/checkpoints/v1:refs/heads/tether/checkpoints/v1\t1a2b3c4..5d6e7f8\n" +
		"*\tHEAD:refs/heads/x\t[new branch]\n" +
		"!\trefs/heads/a:refs/heads/a\t[rejected] (fetch first)\n" +
		"!\trefs/heads/b:refs/heads/b\t[rejected] (non-fast-forward)\n" +
		"!\trefs/heads/c:refs/heads/c\t[remote rejected] (pre-receive hook declined)\n" +
		"+\trefs/heads/d:refs/heads/d\t1a2b3c4...5d6e7f8 (forced update)\n" +
		"-\t:refs/heads/gone\t[deleted]\n" +
		"Done\n"
	got, err := ParsePushPorcelain(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []PushStatus{
		{'=', "refs/notes/tether", "refs/notes/tether", "[up to date]", ""},
		{' ', "refs/heads/tether/checkpoints/v1", "refs/heads/tether/checkpoints/v1", "1a2b3c4..5d6e7f8", ""},
		{'*', "HEAD", "refs/heads/x", "[new branch]", ""},
		{'!', "refs/heads/a", "refs/heads/a", "[rejected]", "fetch first"},
		{'!', "refs/heads/b", "refs/heads/b", "[rejected]", "non-fast-forward"},
		{'!', "refs/heads/c", "refs/heads/c", "[remote rejected]", "pre-receive hook declined"},
		{'+', "refs/heads/d", "refs/heads/d", "1a2b3c4...5d6e7f8", "forced update"},
		{'-', "", "refs/heads/gone", "[deleted]", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParsePushPorcelain =\n%+v\nwant\n%+v", got, want)
	}
	var moved []bool
	for _, s := range got {
		moved = append(moved, s.RemoteMoved())
	}
	if !reflect.DeepEqual(moved, []bool{false, false, false, true, true, false, false, false}) {
		t.Errorf("RemoteMoved = %v", moved)
	}
	for _, bad := range []string{"?\ta:b\tx\n", "!\ta:b\n", "!\tab\tx\n", "!\ta:\tx\n"} {
		if _, err := ParsePushPorcelain(bad); err == nil {
			t.Errorf("ParsePushPorcelain(%q) succeeded", bad)
		}
	}
	if got, err := ParsePushPorcelain("To x\nDone\n"); err != nil || got != nil {
		t.Errorf("no refs: %v, %v", got, err)
	}
}

func FuzzParsePushPorcelain(f *testing.F) {
	f.Add("To r\n=\trefs/a:refs/a\t[up to date]\nDone\n")
	f.Add("!\trefs/a:refs/a\t[rejected] (fetch first)\n")
	f.Add("+\ta:b\tx...y (forced update)\r\n")
	f.Fuzz(func(t *testing.T, out string) {
		got, err := ParsePushPorcelain(out)
		if err != nil {
			return
		}
		// What parsed prints back as the same status lines.
		var b strings.Builder
		for _, s := range got {
			if s.To == "" || strings.ContainsAny(s.From+s.To, "\t\n") {
				t.Fatalf("status %+v from %q", s, out)
			}
			b.WriteString(string(s.Flag) + "\t" + s.From + ":" + s.To + "\t" + s.Summary)
			if s.Reason != "" {
				b.WriteString(" (" + s.Reason + ")")
			}
			b.WriteString("\n")
		}
		again, err := ParsePushPorcelain(b.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("reparse of %q = %+v, %v; want %+v", b.String(), again, err, got)
		}
	})
}

func TestApplyEditsRemoves(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b := f.repo.newBatch()
	blob := mustBlob(t, b, "x")
	put := func(p ...string) edit { return edit{path: p, entry: blobEntry(p[len(p)-1], blob)} }
	del := func(p ...string) edit { return edit{path: p} }
	root, err := b.applyEdits(plumbing.ZeroHash, []edit{put("a", "b", "x"), put("a", "c"), put("d")})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.flush(); err != nil { // a batch's objects are readable once flushed
		t.Fatal(err)
	}
	// Removing the only entry of a/b removes a/b; a missing path is fine.
	root, err = b.applyEdits(root, []edit{del("a", "b", "x"), del("nope", "y")})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.flush(); err != nil {
		t.Fatal(err)
	}
	if ls := runGit(t, f.dir, "ls-tree", "-r", "-t", "--name-only", root.String()); ls != "a\na/c\nd" {
		t.Errorf("tree after removal:\n%s", ls)
	}
	if root, err = b.applyEdits(root, []edit{del("a", "c"), del("d")}); err != nil || !root.IsZero() {
		t.Errorf("removing everything = %s, %v; want the zero hash", root, err)
	}
}
