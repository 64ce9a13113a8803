package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tetherdev/tether/state"
)

func TestCondenseReadableByGit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.agent(t, "sess-1")
	a.write(`{"type":"summary"}`) // before the first turn: not part of it
	before := a.size()
	a.turn("add a README")
	a.turn("fix the typo")

	res := f.condense(t, "sess-1")
	if len(res) != 1 || res[0].Session != "sess-1" || res[0].Turns != 2 || res[0].Skipped {
		t.Fatalf("Condense = %+v, want one checkpoint of 2 turns", res)
	}
	id := res[0].Checkpoint
	if want := checkpointID("sess-1", a.load().Incarnation, 0); id != want {
		t.Errorf("checkpoint ID %s, want %s", id, want)
	}

	if log := runGit(t, f.dir, "log", "--format=%an %s", "tether/checkpoints/v1"); log != "tether tether: 1 checkpoint" {
		t.Errorf("git log = %q", log)
	}
	if n := runGit(t, f.dir, "rev-list", "--count", "--max-parents=0", "tether/checkpoints/v1"); n != "1" {
		t.Errorf("branch has %s root commits, want an orphan branch with 1", n)
	}
	path := "tether/checkpoints/v1:" + id[:2] + "/" + id[2:] + "/"
	if ls := runGit(t, f.dir, "ls-tree", "--name-only", path); ls != "checkpoint.json\nprompts.md" {
		t.Errorf("checkpoint files:\n%s", ls)
	}
	var cp Checkpoint
	if err := json.Unmarshal([]byte(runGit(t, f.dir, "show", path+"checkpoint.json")), &cp); err != nil {
		t.Fatal(err)
	}
	// The transcript is on the ref checkpoint.json names: this clone's,
	// for the month of the first turn.
	clone, err := f.st.CloneID()
	if err != nil {
		t.Fatal(err)
	}
	if want := "refs/tether/transcripts/v1/2026-05/" + clone; cp.Transcript.Ref != want {
		t.Errorf("transcript ref %q, want %q", cp.Transcript.Ref, want)
	}
	tpath := cp.Transcript.Ref + ":" + id[:2] + "/" + id[2:] + "/"
	if ls := runGit(t, f.dir, "ls-tree", "--name-only", tpath); ls != "transcript.jsonl" {
		t.Errorf("transcript files:\n%s", ls)
	}
	whole := readFile(t, a.transcript)
	if got := runGit(t, f.dir, "show", tpath+"transcript.jsonl") + "\n"; got != whole[before:] {
		t.Errorf("transcript.jsonl = %q, want %q", got, whole[before:])
	}
	var stored strings.Builder
	if err := f.repo.WriteTranscript(&stored, &cp); err != nil || stored.String() != whole[before:] {
		t.Errorf("WriteTranscript = %q, %v; want %q", stored.String(), err, whole[before:])
	}
	if log := runGit(t, f.dir, "log", "--format=%an %s", cp.Transcript.Ref); log != "tether tether: 1 transcript" {
		t.Errorf("git log of the transcripts = %q", log)
	}
	sum := sha256.Sum256([]byte(whole[before:]))
	if cp.ID != id || cp.Session != "sess-1" || cp.Agent != "claude-code" || len(cp.Turns) != 2 ||
		cp.Turns[0].Prompt != "add a README" || cp.Turns[1].Prompt != "fix the typo" ||
		cp.Turns[1].HeadBefore != "head-before" || cp.Turns[1].HeadAfter != "head-after" ||
		cp.Transcript.From != before || cp.Transcript.To != int64(len(whole)) || cp.Transcript.Bytes != int64(len(whole))-before ||
		cp.Transcript.SHA256 != hex.EncodeToString(sum[:]) || cp.Transcript.Path != a.transcript || cp.Transcript.Unavailable ||
		cp.TurnLog != (LogRange{From: 0, To: a.logSize()}) {
		t.Errorf("checkpoint.json = %+v", cp)
	}
	if md := runGit(t, f.dir, "show", path+"prompts.md"); !strings.Contains(md, "## Turn 1\n") || !strings.Contains(md, "add a README") || !strings.Contains(md, "fix the typo") {
		t.Errorf("prompts.md:\n%s", md)
	}
	if got, err := f.repo.Read(id[:6]); err != nil || got.ID != id || len(got.Turns) != 2 {
		t.Errorf("Read(prefix) = %+v, %v", got, err)
	}

	s := a.load()
	if s.Condensed != a.logSize() || s.CondensedTurns != 2 || len(s.Checkpoints) != 1 || s.Checkpoints[0].ID != id || s.PendingTurns() != 0 {
		t.Errorf("session after condense: condensed %d/%d turns %d, checkpoints %+v", s.Condensed, a.logSize(), s.CondensedTurns, s.Checkpoints)
	}

	head := f.commit(t, "README", "hello\n")
	if err := f.repo.Link(head, []string{id}); err != nil {
		t.Fatal(err)
	}
	if note := runGit(t, f.dir, "notes", "--ref=tether", "show", "HEAD"); note != "Tether-Checkpoint: "+id {
		t.Errorf("git notes show HEAD = %q", note)
	}
	if ids, err := f.repo.Notes("HEAD"); err != nil || len(ids) != 1 || ids[0] != id {
		t.Errorf("Notes(HEAD) = %q, %v", ids, err)
	}
	f.fsck(t)
}

func TestCondenseNothingPending(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.agent(t, "idle")
	if res := f.condense(t, "idle"); len(res) != 0 {
		t.Fatalf("Condense of a session without turns = %+v", res)
	}
	a.turn("one")
	f.condense(t, "idle")
	tip := runGit(t, f.dir, "rev-parse", "tether/checkpoints/v1")
	if res := f.condense(t, "idle", "idle"); len(res) != 0 {
		t.Fatalf("second Condense = %+v, want nothing", res)
	}
	if got := runGit(t, f.dir, "rev-parse", "tether/checkpoints/v1"); got != tip {
		t.Error("a Condense with nothing pending moved the branch")
	}
}

func TestCondenseRetryAfterStateLoss(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.agent(t, "retry")
	a.turn("one")
	a.turn("two")
	first := f.condense(t, "retry")
	tip := runGit(t, f.dir, "rev-parse", "tether/checkpoints/v1")
	// The state of a crash between the ref update and the state update.
	a.mutate(func(tx *state.Tx) error {
		tx.Session.Condensed, tx.Session.CondensedTurns, tx.Session.Checkpoints = 0, 0, nil
		return nil
	})
	again := f.condense(t, "retry")
	if len(again) != 1 || again[0].Checkpoint != first[0].Checkpoint || !again[0].Skipped {
		t.Fatalf("retry = %+v, want the same checkpoint skipped", again)
	}
	if got := runGit(t, f.dir, "rev-parse", "tether/checkpoints/v1"); got != tip {
		t.Error("the retry wrote a new commit for identical content")
	}
	s := a.load()
	if s.Condensed != a.logSize() || s.CondensedTurns != 2 || len(s.Checkpoints) != 1 {
		t.Errorf("retry left condensed=%d turns=%d checkpoints=%+v", s.Condensed, s.CondensedTurns, s.Checkpoints)
	}
}

func TestCondenseRetrySeesMoreTurns(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.agent(t, "grow")
	a.turn("one")
	first := f.condense(t, "grow")[0].Checkpoint
	a.mutate(func(tx *state.Tx) error {
		tx.Session.Condensed, tx.Session.CondensedTurns, tx.Session.Checkpoints = 0, 0, nil
		return nil
	})
	a.turn("two") // arrives before the retry
	res := f.condense(t, "grow")
	if len(res) != 1 || res[0].Checkpoint != first || res[0].Skipped || res[0].Turns != 2 {
		t.Fatalf("retry = %+v, want checkpoint %s rewritten with 2 turns", res, first)
	}
	if n := runGit(t, f.dir, "ls-tree", "-d", "-r", "--name-only", "tether/checkpoints/v1"); strings.Count(n, "\n") != 1 {
		t.Errorf("branch trees:\n%s\nwant exactly one checkpoint", n)
	}
	if s := a.load(); s.CondensedTurns != 2 || len(s.Checkpoints) != 1 {
		t.Errorf("session: %d turns condensed, checkpoints %+v", s.CondensedTurns, s.Checkpoints)
	}
}

func TestCondenseMissingTranscript(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.agent(t, "gone")
	a.turn("one")
	if err := os.Remove(a.transcript); err != nil {
		t.Fatal(err)
	}
	id := f.condense(t, "gone")[0].Checkpoint
	cp, err := f.repo.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	if !cp.Transcript.Unavailable || cp.Transcript.Reason != "transcript file is missing" || cp.Transcript.Files != nil || cp.Turns[0].Prompt != "one" {
		t.Errorf("checkpoint = %+v", cp)
	}
	if ls := runGit(t, f.dir, "ls-tree", "--name-only", "tether/checkpoints/v1:"+id[:2]+"/"+id[2:]); ls != "checkpoint.json\nprompts.md" {
		t.Errorf("files: %q", ls)
	}
	if s := a.load(); s.PendingTurns() != 0 {
		t.Error("turns with a missing transcript stayed pending")
	}
	f.fsck(t)
}

func TestCondenseShortTranscript(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.agent(t, "short")
	a.write(`{"old":1}`, `{"old":2}`)
	a.turn("one")
	if err := os.WriteFile(a.transcript, []byte("{}\n"), 0o600); err != nil { // rewritten by the agent
		t.Fatal(err)
	}
	cp, err := f.repo.Read(f.condense(t, "short")[0].Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if !cp.Transcript.Unavailable || !strings.Contains(cp.Transcript.Reason, "fewer than the recorded offset") {
		t.Errorf("transcript = %+v", cp.Transcript)
	}
}

func TestCondenseInterruptedTurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.agent(t, "killed")
	a.turn("one")
	a.turnStart("two")
	a.write(`{"type":"user","text":"two"}`, `{"type":"assistant","partial":true}`)
	a.end(state.EndInterrupted, true)
	id := f.condense(t, "killed")[0].Checkpoint
	cp, err := f.repo.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(cp.Turns) != 2 || cp.Turns[0].Interrupted || !cp.Turns[1].Interrupted || cp.Turns[1].Running ||
		!cp.Interrupted || cp.EndReason != state.EndInterrupted || cp.EndedAt.IsZero() {
		t.Errorf("checkpoint = %+v", cp)
	}
	if got, want := f.show(t, id, "transcript.jsonl"), readFile(t, a.transcript); got != want {
		t.Errorf("an interrupted turn's transcript must run to EOF:\n got %q\nwant %q", got, want)
	}
	if md := f.show(t, id, "prompts.md"); !strings.Contains(md, "## Turn 2 (interrupted)") {
		t.Errorf("prompts.md:\n%s", md)
	}
}

func TestCondenseRunningTurnContinues(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.agent(t, "live")
	a.turnStart("long task")
	a.write(`{"type":"user","text":"long task"}`, `{"step":1}`)
	first := f.condense(t, "live") // e.g. the agent committed mid-turn
	a.write(`{"step":2}`)
	a.turnEnd()
	a.turn("next")
	second := f.condense(t, "live")
	if len(first) != 1 || len(second) != 1 || first[0].Checkpoint == second[0].Checkpoint {
		t.Fatalf("condenses = %+v then %+v", first, second)
	}
	c1, err := f.repo.Read(first[0].Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := f.repo.Read(second[0].Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if !c1.Turns[0].Running || c1.Turns[0].Interrupted {
		t.Errorf("first checkpoint turns %+v, want turn 1 running", c1.Turns)
	}
	if len(c2.Turns) != 2 || !c2.Turns[0].Continued || c2.Turns[0].Turn != 1 || c2.Turns[0].Prompt != "long task" ||
		c2.Turns[0].EndedAt.IsZero() || c2.Turns[1].Prompt != "next" {
		t.Errorf("second checkpoint turns %+v", c2.Turns)
	}
	// Together the two slices are the transcript, each byte once.
	if got, want := f.show(t, c1.ID, "transcript.jsonl")+f.show(t, c2.ID, "transcript.jsonl"), readFile(t, a.transcript); got != want {
		t.Errorf("slices:\n got %q\nwant %q", got, want)
	}
	if c2.Transcript.From != c1.Transcript.To {
		t.Errorf("second slice starts at %d, first ended at %d", c2.Transcript.From, c1.Transcript.To)
	}
	if s := a.load(); s.CondensedTurns != 2 || s.Condensed != a.logSize() || len(s.Checkpoints) != 2 {
		t.Errorf("session: condensed %d turns to %d, checkpoints %+v", s.CondensedTurns, s.Condensed, s.Checkpoints)
	}
}

func TestCondenseRunningTurnThenSessionEnds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.agent(t, "dies")
	a.turnStart("work")
	a.write(`{"type":"user","text":"work"}`)
	id := f.condense(t, "dies")[0].Checkpoint
	a.write(`{"type":"assistant","text":"half"}`) // then kill -9: no turn-end
	a.end(state.EndInterrupted, true)
	res := f.condense(t, "dies")
	if len(res) != 1 || res[0].Checkpoint != id || res[0].Skipped {
		t.Fatalf("Condense after the end = %+v, want %s rewritten", res, id)
	}
	cp, err := f.repo.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(cp.Turns) != 1 || !cp.Turns[0].Interrupted || cp.Turns[0].Running || cp.EndReason != state.EndInterrupted {
		t.Errorf("checkpoint = %+v", cp)
	}
	if got, want := f.show(t, id, "transcript.jsonl"), readFile(t, a.transcript); got != want {
		t.Errorf("transcript %q, want %q", got, want)
	}
	if s := a.load(); len(s.Checkpoints) != 1 || s.CondensedTurns != 1 {
		t.Errorf("session checkpoints %+v, condensed turns %d", s.Checkpoints, s.CondensedTurns)
	}
	if res := f.condense(t, "dies"); len(res) != 0 {
		t.Errorf("third Condense = %+v, want nothing", res)
	}
}

func TestCondenseChunks(t *testing.T) {
	t.Parallel()
	// Staged for redaction in memory, as most slices are, and in a file.
	for name, inMemory := range map[string]int64{"in memory": maxStagedInMemory, "in a file": 0} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.repo.chunk, f.repo.inMemory = 100, inMemory
			a := f.agent(t, "big")
			a.turnStart("big")
			for i := range 20 {
				a.write(`{"n":` + strings.Repeat("1", i) + `}`)
			}
			a.write(strings.Repeat("x", 250)) // one line longer than a chunk
			a.write(`{"tail":true}`)
			a.turnEnd()
			id := f.condense(t, "big")[0].Checkpoint
			cp, err := f.repo.Read(id)
			if err != nil {
				t.Fatal(err)
			}
			if len(cp.Transcript.Files) < 4 || cp.Transcript.Files[0] != "transcript.jsonl" || cp.Transcript.Files[1] != "transcript.001.jsonl" {
				t.Fatalf("files %q", cp.Transcript.Files)
			}
			var joined strings.Builder
			for i, name := range cp.Transcript.Files {
				part := f.show(t, id, name)
				if len(part) > 100 {
					t.Errorf("%s is %d bytes, over the chunk size", name, len(part))
				}
				if i < len(cp.Transcript.Files)-1 && !strings.HasSuffix(part, "\n") && strings.Contains(part, "\n") {
					t.Errorf("%s ends mid-line: %q", name, part)
				}
				joined.WriteString(part)
			}
			whole := readFile(t, a.transcript)
			if joined.String() != whole {
				t.Errorf("chunks joined = %q, want %q", joined.String(), whole)
			}
			sum := sha256.Sum256([]byte(whole))
			if cp.Transcript.SHA256 != hex.EncodeToString(sum[:]) || cp.Transcript.Bytes != int64(len(whole)) {
				t.Errorf("transcript = %+v", cp.Transcript)
			}
			f.fsck(t)
		})
	}
}

func TestCondenseSessionsInOneCommit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var ids []string
	for _, id := range []string{"s-a", "s-b", "s-c"} {
		f.agent(t, id).turn("prompt of " + id)
		ids = append(ids, id)
	}
	res := f.condense(t, append(ids, "s-a")...)
	if len(res) != 3 {
		t.Fatalf("results %+v", res)
	}
	if n := runGit(t, f.dir, "rev-list", "--count", "tether/checkpoints/v1"); n != "1" {
		t.Errorf("%s commits, want 1", n)
	}
	for _, r := range res {
		if md := f.show(t, r.Checkpoint, "prompts.md"); !strings.Contains(md, "prompt of "+r.Session) {
			t.Errorf("checkpoint of %s:\n%s", r.Session, md)
		}
	}
	f.fsck(t)
}

func TestCondenseReportsFailedSessions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.agent(t, "good").turn("fine")
	res, err := f.repo.Condense(f.st, []string{"no-such-session", "good", "bad/id"}, nil)
	if !errors.Is(err, state.ErrNotFound) || !errors.Is(err, state.ErrInvalidID) {
		t.Errorf("error = %v, want the missing and the invalid session reported", err)
	}
	if len(res) != 1 || res[0].Session != "good" {
		t.Errorf("results = %+v, want the good session condensed anyway", res)
	}
}

func TestReadErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if _, err := f.repo.Read("0123456789abcdef"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read on an empty branch: %v", err)
	}
	// A malformed ID names no checkpoint (show falls back to commits), and
	// the error says why.
	if _, err := f.repo.Read("../../etc"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "not a checkpoint ID") {
		t.Errorf("Read of a malformed ID: %v", err)
	}
	// Two checkpoints sharing a prefix: the prefix is ambiguous.
	b := f.repo.newBatch()
	leaf, err := b.writeTree([]object.TreeEntry{blobEntry("checkpoint.json", mustBlob(t, b, "{}"))})
	if err != nil {
		t.Fatal(err)
	}
	root, err := b.applyEdits(plumbing.ZeroHash, []edit{
		{path: []string{"ab", "cd000000000000"}, entry: treeEntry("cd000000000000", leaf)},
		{path: []string{"ab", "cd111111111111"}, entry: treeEntry("cd111111111111", leaf)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.repo.readAt(root, "abcd"); err == nil || !strings.Contains(err.Error(), "matches 2") {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if _, err := f.repo.readAt(root, "abcd0000"); err == nil || !strings.Contains(err.Error(), "missing version") {
		t.Errorf("bad checkpoint.json: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	if _, err := Open(t.TempDir()); err == nil {
		t.Error("Open of a directory that is not a git dir succeeded")
	}
	f := newFixture(t)
	runGit(t, f.dir, "config", "core.repositoryformatversion", "1")
	runGit(t, f.dir, "config", "extensions.objectformat", "sha256")
	if _, err := Open(filepath.Join(f.dir, ".git")); err == nil || !strings.Contains(err.Error(), "object format sha256") {
		t.Errorf("Open of a SHA-256 repository: %v", err)
	}
	runGit(t, f.dir, "config", "--unset", "extensions.objectformat")
	runGit(t, f.dir, "config", "extensions.refstorage", "reftable")
	if _, err := Open(filepath.Join(f.dir, ".git")); err == nil || !strings.Contains(err.Error(), "ref storage reftable") {
		t.Errorf("Open of a reftable repository: %v", err)
	}
	// Extensions that change neither objects nor refs are fine.
	runGit(t, f.dir, "config", "-f", ".git/config", "--unset", "extensions.refstorage")
	runGit(t, f.dir, "config", "extensions.worktreeConfig", "true")
	if _, err := Open(filepath.Join(f.dir, ".git")); err != nil {
		t.Errorf("Open with extensions.worktreeConfig: %v", err)
	}
}

func TestCondenseAfterGC(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.agent(t, "gc")
	a.turn("one")
	first := f.condense(t, "gc")[0].Checkpoint
	head := f.commit(t, "a", "a")
	if err := f.repo.Link(head, []string{first}); err != nil {
		t.Fatal(err)
	}
	// Everything packed, loose objects and refs gone: the same Repo and a
	// fresh one both keep working.
	runGit(t, f.dir, "gc", "-q", "--prune=now")
	if loose, _ := filepath.Glob(filepath.Join(f.common, "objects", "[0-9a-f][0-9a-f]", "*")); len(loose) != 0 {
		t.Fatalf("%d loose objects after gc", len(loose))
	}
	a.turn("two")
	second := f.condense(t, "gc")[0].Checkpoint
	if err := f.repo.Link(head, []string{second}); err != nil {
		t.Fatal(err)
	}
	fresh, err := Open(f.common)
	if err != nil {
		t.Fatal(err)
	}
	if ids, err := fresh.Notes(head); err != nil || len(ids) != 2 {
		t.Errorf("Notes after gc = %q, %v", ids, err)
	}
	if _, err := fresh.Read(first); err != nil {
		t.Error(err)
	}
	f.fsck(t)
}

// A checkpoint's ID is never reused for other content, whatever happens to
// the session's record: the agent resumes the same session ID after the
// record was cleaned away, quarantined or lost, and the new turn gets a
// checkpoint of its own while the old one, and the note linking a commit
// to it, keep what they held.
func TestCheckpointIDNeverReused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		forget func(t *testing.T, f *fixture, a *agent)
	}{
		{"clean", func(t *testing.T, f *fixture, a *agent) {
			a.end("session-end", false)
			f.condense(t, a.id)
			if err := f.st.Remove(a.id); err != nil {
				t.Fatal(err)
			}
		}},
		{"quarantine", func(t *testing.T, f *fixture, a *agent) {
			// A torn state file: the next write quarantines it.
			if err := os.WriteFile(filepath.Join(f.st.Dir(), "sessions", a.id+".json"), []byte(`{"version":1,`), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"state file lost", func(t *testing.T, f *fixture, a *agent) {
			for _, name := range []string{a.id + ".json", a.id + ".turns.jsonl"} {
				if err := os.Remove(filepath.Join(f.st.Dir(), "sessions", name)); err != nil {
					t.Fatal(err)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			a := f.agent(t, "resumed")
			a.turn("the first task")
			first := f.condense(t, a.id)[0].Checkpoint
			commit := f.commit(t, "a.txt", "a")
			if err := f.repo.Link(commit, []string{first}); err != nil {
				t.Fatal(err)
			}
			before := f.show(t, first, "checkpoint.json")

			tc.forget(t, f, a)
			again := f.agent(t, a.id) // the agent resumes the same session ID
			again.turn("the second task")
			res := f.condense(t, a.id)
			if len(res) != 1 || res[0].Checkpoint == first {
				t.Fatalf("Condense = %+v: the new turn must not reuse checkpoint %s", res, first)
			}
			if after := f.show(t, first, "checkpoint.json"); after != before {
				t.Errorf("checkpoint %s was rewritten:\n%s\nwas:\n%s", first, after, before)
			}
			if got := f.show(t, res[0].Checkpoint, "prompts.md"); !strings.Contains(got, "the second task") || strings.Contains(got, "the first task") {
				t.Errorf("new checkpoint's prompts:\n%s", got)
			}
			if ids, err := f.repo.Notes(commit); err != nil || !slices.Equal(ids, []string{first}) {
				t.Errorf("notes of the old commit = %v, %v", ids, err)
			}
			f.fsck(t)
		})
	}
}

// Asked to link to a commit, Condense links the checkpoints Link wants,
// and records the link with the checkpoint in the session's one write.
func TestCondenseLinks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	head := f.commit(t, "a.txt", "a\n")
	mine, other := f.agent(t, "mine"), f.agent(t, "other")
	mine.turn("mine")
	other.turn("elsewhere")
	other.mutate(func(tx *state.Tx) error { tx.Session.Worktree = "/elsewhere"; return nil })
	res, err := f.repo.Condense(f.st, []string{"mine", "other"}, &Link{Commit: head, Wants: func(s *state.Session, c *Checkpoint) bool {
		return s.Worktree == f.dir && c.Session == s.ID
	}})
	if err != nil || len(res) != 2 {
		t.Fatalf("Condense = %+v, %v", res, err)
	}
	linked := map[string]bool{}
	for _, r := range res {
		linked[r.Session] = r.Linked
	}
	if !linked["mine"] || linked["other"] {
		t.Errorf("linked = %v", linked)
	}
	id := mine.load().Checkpoints[0]
	if ids, err := f.repo.Notes(head); err != nil || len(ids) != 1 || ids[0] != id.ID {
		t.Errorf("notes of %s = %v, %v", head, ids, err)
	}
	if len(id.Linked) != 1 || id.Linked[0] != head {
		t.Errorf("mine's checkpoint records links %v, want [%s]", id.Linked, head)
	}
	if c := other.load().Checkpoints[0]; len(c.Linked) != 0 {
		t.Errorf("other's checkpoint records links %v", c.Linked)
	}
	f.fsck(t)
}

// The sweep ends dead sessions and condenses them in one state write:
// CondenseEnding runs between ending them and writing them. A session it
// condenses ends with its progress recorded and no to-condense mark; one
// whose end appends turn records is left to Condense, marked.
func TestCondenseEnding(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	killed := f.agent(t, "killed") // two turns, the second cut off
	killed.turn("one")
	killed.turnStart("two")
	killed.write(`{"type":"user","text":"two"}`, `{"type":"assistant","partial":true}`)
	running := f.agent(t, "running") // condensed mid-turn, then killed
	running.turnStart("work")
	running.write(`{"type":"user","text":"work"}`)
	first := f.condense(t, "running")[0].Checkpoint
	running.write(`{"type":"assistant","text":"half"}`)
	f.agent(t, "quiet")                  // never took a turn
	cancelled := f.agent(t, "cancelled") // its end records the turn's end
	cancelled.turnStart("stop me")

	ids := []string{"cancelled", "killed", "quiet", "running"}
	var results []Result
	var sessions []*state.Session
	var errs []error
	err := f.repo.Locked(f.st, func() error {
		sessions, errs = f.st.MutateEachThen(ids, func(tx *state.Tx) error {
			s := tx.Session
			if s.ID == "cancelled" {
				if err := tx.AppendTurn(state.TurnRecord{T: state.RecTurnEnd, Turn: s.Turns, At: killed.now()}); err != nil {
					return err
				}
			}
			s.Phase, s.EndedAt, s.EndReason, s.Interrupted = state.PhaseEnded, killed.now(), state.EndInterrupted, s.ID != "quiet"
			return nil
		}, func(txs []*state.Tx) {
			if len(txs) != len(ids) {
				t.Errorf("then got %d transactions, want %d", len(txs), len(ids))
			}
			var err error
			if results, err = f.repo.CondenseEnding(f.st, txs, nil); err != nil {
				t.Error(err)
			}
		})
		return nil
	})
	if err != nil || errors.Join(errs...) != nil {
		t.Fatal(err, errs)
	}
	byID := map[string]Result{}
	for _, r := range results {
		byID[r.Session] = r
	}
	if len(results) != 2 || byID["killed"].Turns != 2 || byID["running"].Checkpoint != first {
		t.Fatalf("CondenseEnding = %+v, want killed's 2 turns and running's checkpoint %s rewritten", results, first)
	}
	cp, err := f.repo.Read(byID["killed"].Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if !cp.Interrupted || !cp.Turns[1].Interrupted || cp.EndReason != state.EndInterrupted {
		t.Errorf("killed's checkpoint = %+v", cp)
	}
	if got, want := f.show(t, cp.ID, "transcript.jsonl"), readFile(t, killed.transcript); got != want {
		t.Errorf("killed's transcript %q, want %q", got, want)
	}
	if cp, err := f.repo.Read(first); err != nil || !cp.Turns[0].Interrupted || cp.Turns[0].Running {
		t.Errorf("running's checkpoint after its end = %+v, %v", cp, err)
	}
	for i, s := range sessions {
		if s.Phase != state.PhaseEnded {
			t.Errorf("%s: phase %s, want ended", ids[i], s.Phase)
		}
	}
	if s := killed.load(); s.Condensed != killed.logSize() || s.CondensedTurns != 2 || len(s.Checkpoints) != 1 {
		t.Errorf("killed as stored: condensed %d of %d (%d turns), checkpoints %+v", s.Condensed, killed.logSize(), s.CondensedTurns, s.Checkpoints)
	}
	marked, err := f.st.Marked(state.MarkCondense)
	if err != nil || !slices.Equal(marked, []string{"cancelled"}) {
		t.Errorf("to condense: %v (%v), want only the session whose end appended records", marked, err)
	}
	if res := f.condense(t, "cancelled"); len(res) != 1 || res[0].Turns != 1 {
		t.Errorf("Condense of the one left = %+v", res)
	}
	f.fsck(t)
}
