package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/state"
)

// hangGuard turns a hang into a failure; nothing is asserted about time.
const hangGuard = 30 * time.Second

// hostileMarker is what a file tether must never read starts with: as long
// as a real secret, and found by assertNoSecret in any git object.
const hostileMarker = "root:$6$NOT-FOR-THE-BRANCH$h0st1leM4rkerThatMustNeverBeStored:19000:0:99999:7:::"

// TestTranscriptReadOnlyInItsDirectory: a payload names the transcript, but
// only a regular file inside the directory the agent keeps transcripts in
// is read. Everything else is recorded as unavailable, and not a byte of
// it reaches a git object, as in the issue: a turn starts with no
// transcript, and its end names another file.
func TestTranscriptReadOnlyInItsDirectory(t *testing.T) {
	t.Parallel()
	elsewhere := t.TempDir()
	secret := filepath.Join(elsewhere, "shadow")
	if err := os.WriteFile(secret, []byte(hostileMarker+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		path   func(root string) string
		reason string
	}{
		{"a file elsewhere", func(string) string { return secret }, "is outside"},
		{"a path climbing out", func(root string) string {
			rel, err := filepath.Rel(root, secret)
			if err != nil {
				t.Fatal(err)
			}
			return root + string(filepath.Separator) + rel // ../../x/shadow, as written
		}, "is outside"},
		{"the root itself", func(root string) string { return root }, "is outside"},
		{"a symlink in the directory to a file elsewhere", func(root string) string {
			link := filepath.Join(root, "t.jsonl")
			if err := os.Symlink(secret, link); err != nil {
				t.Fatal(err)
			}
			return link
		}, "cannot open transcript"},
		{"a file under a symlinked folder leading elsewhere", func(root string) string {
			if err := os.Symlink(elsewhere, filepath.Join(root, "project")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(root, "project", "shadow")
		}, "cannot open transcript"},
		{"a directory", func(root string) string {
			dir := filepath.Join(root, "dir.jsonl")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			a := f.agent(t, "hostile")
			a.hostileTurn("read this", tc.path(filepath.Dir(a.transcript)))
			res := f.condense(t, "hostile")
			if len(res) != 1 {
				t.Fatalf("condensed %+v, want one checkpoint", res)
			}
			cp, err := f.repo.Read(res[0].Checkpoint)
			if err != nil {
				t.Fatal(err)
			}
			if !cp.Transcript.Unavailable || !strings.Contains(cp.Transcript.Reason, tc.reason) || len(cp.Transcript.Files) != 0 {
				t.Errorf("transcript %+v, want unavailable because it %s", cp.Transcript, tc.reason)
			}
			if len(cp.Turns) != 1 || cp.Turns[0].Prompt != "read this" {
				t.Errorf("turns %+v: the rest of the checkpoint is kept", cp.Turns)
			}
			assertNoSecret(t, f.dir, hostileMarker)
			f.fsck(t)
		})
	}
}

// hostileTurn is a turn that starts with no transcript and whose end names
// path, with its size as an unconfined hook would have measured it: all of
// the file is then the turn's.
func (a *agent) hostileTurn(prompt, path string) {
	a.tb.Helper()
	a.mutate(func(tx *state.Tx) error {
		s := tx.Session
		s.Turns++
		s.Phase, s.TranscriptPath = state.PhaseActive, ""
		return tx.AppendTurn(state.TurnRecord{T: state.RecTurnStart, Turn: s.Turns, At: a.now(), Prompt: prompt})
	})
	var size int64
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	a.mutate(func(tx *state.Tx) error {
		s := tx.Session
		s.Phase, s.TranscriptPath = state.PhaseIdle, path
		return tx.AppendTurn(state.TurnRecord{T: state.RecTurnEnd, Turn: s.Turns, At: a.now(), TranscriptSize: size})
	})
}

// TestStagingSymlinkLeadsNowhere: a symlink planted at <store>/tmp would
// have the sweep stage the redacted transcript, and delete old files,
// wherever it points. Condensing refuses to follow it, touches nothing
// there, and succeeds once the store is sound again: nothing is lost.
func TestStagingSymlinkLeadsNowhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.repo.inMemory = 0 // staged in a file, as a large slice is
	a := f.agent(t, "staged")
	a.turn("one")
	elsewhere := t.TempDir()
	victim := filepath.Join(elsewhere, tempPrefix+"precious")
	if err := os.WriteFile(victim, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-72 * time.Hour)
	if err := os.Chtimes(victim, past, past); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(f.st.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(f.st.Dir(), "tmp")
	if err := os.Symlink(elsewhere, tmp); err != nil {
		t.Fatal(err)
	}

	res, err := f.repo.Condense(f.st, []string{"staged"}, nil)
	if err == nil || len(res) != 0 {
		t.Fatalf("Condense through a planted tmp symlink = %+v, %v; want an error and nothing written", res, err)
	}
	entries, err := os.ReadDir(elsewhere)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != filepath.Base(victim) {
		t.Errorf("the symlink's target holds %v, want only the file it held", entries)
	}

	if err := os.Remove(tmp); err != nil {
		t.Fatal(err)
	}
	if res := f.condense(t, "staged"); len(res) != 1 || res[0].Turns != 1 {
		t.Errorf("Condense once tmp is gone = %+v, want the turn", res)
	}
}

// TestSessionNamedLikeALock: an agent may call its session anything valid,
// "checkpoints" too; its lock is not the checkpoints lock.
func TestSessionNamedLikeALock(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, id := range []string{lockName, "self-heal"} {
		a := f.agent(t, id)
		a.turn("a turn")
		a.end(state.EndSessionEnd, false)
	}
	done := make(chan error, 1)
	var res []Result
	go func() {
		var err error
		res, err = f.repo.Condense(f.st, []string{lockName, "self-heal"}, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hangGuard):
		t.Fatal("Condense did not return")
	}
	if len(res) != 2 {
		t.Fatalf("condensed %+v, want both sessions", res)
	}
	for _, r := range res {
		if _, err := f.repo.Read(r.Checkpoint); err != nil {
			t.Error(err)
		}
	}
	if s, err := f.st.Load(lockName); err != nil || len(s.Checkpoints) != 1 {
		t.Errorf("session %q after condensing: %+v, %v", lockName, s, err)
	}
}
