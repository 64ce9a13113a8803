package checkpoint

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tetherdev/tether/state"
)

// gitEnv isolates the git CLI from the machine's configuration.
func gitEnv(home string) []string {
	return append(os.Environ(), isolation(home)...)
}

// isolation is the environment that keeps git away from the machine's
// configuration, with HOME at home.
func isolation(home string) []string {
	return []string{
		"HOME=" + home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_EDITOR=true",
	}
}

// runGit runs git in dir and returns its trimmed stdout.
func runGit(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	out, err := gitCmd(dir, args...).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return strings.TrimRight(string(out), "\n")
}

func gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(filepath.Dir(dir))
	return cmd
}

// fixture is a real git repository with a real session store.
type fixture struct {
	dir    string // worktree
	common string // git common dir
	st     *state.Store
	repo   *Repo
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "work")
	if err := os.Mkdir(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	runGit(tb, dir, "init", "-q", "-b", "main")
	return attach(tb, dir)
}

// attach opens the store and the Repo of the worktree at dir; the git
// commands the Repo runs see the same isolated configuration as runGit.
func attach(tb testing.TB, dir string) *fixture {
	tb.Helper()
	f := &fixture{dir: dir, common: filepath.Join(dir, ".git")}
	var err error
	if f.st, err = state.Open(f.common, state.Options{}); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.st.Close() })
	if f.repo, err = Open(f.common); err != nil {
		tb.Fatal(err)
	}
	f.repo.env = isolation(filepath.Dir(dir))
	return f
}

// commit makes a real commit in the worktree and returns its hash.
func (f *fixture) commit(tb testing.TB, file, content string) string {
	tb.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, file), []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
	runGit(tb, f.dir, "add", file)
	runGit(tb, f.dir, "commit", "-q", "-m", "edit "+file)
	return runGit(tb, f.dir, "rev-parse", "HEAD")
}

// agent plays an agent's hooks against the store: it writes a transcript
// and appends turn records the way tether-hook does.
type agent struct {
	tb         testing.TB
	st         *state.Store
	id         string
	transcript string
	clock      time.Time
}

func (f *fixture) agent(tb testing.TB, id string) *agent {
	tb.Helper()
	a := &agent{tb: tb, st: f.st, id: id, transcript: filepath.Join(tb.TempDir(), id+".jsonl"),
		clock: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	a.mutate(func(tx *state.Tx) error {
		s := tx.Session
		s.Agent, s.Phase, s.StartedAt, s.TranscriptPath = "claude-code", state.PhaseIdle, a.now(), a.transcript
		s.TranscriptRoot = filepath.Dir(a.transcript) // where this agent keeps transcripts, as the hook records it
		s.Worktree, s.Branch = f.dir, "main"
		return nil
	})
	return a
}

func (a *agent) now() time.Time {
	a.clock = a.clock.Add(time.Second)
	return a.clock
}

func (a *agent) mutate(fn func(tx *state.Tx) error) *state.Session {
	a.tb.Helper()
	s, err := a.st.MutateTx(a.id, fn)
	if err != nil {
		a.tb.Fatal(err)
	}
	return s
}

// write appends lines to the transcript.
func (a *agent) write(lines ...string) {
	a.tb.Helper()
	f, err := os.OpenFile(a.transcript, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		a.tb.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			a.tb.Fatal(err)
		}
	}
}

func (a *agent) size() int64 {
	fi, err := os.Stat(a.transcript)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func (a *agent) turnStart(prompt string) {
	a.tb.Helper()
	a.mutate(func(tx *state.Tx) error {
		s := tx.Session
		s.Turns++
		s.Phase, s.LastPrompt, s.LastTurnStartedAt = state.PhaseActive, prompt, a.now()
		return tx.AppendTurn(state.TurnRecord{T: state.RecTurnStart, Turn: s.Turns, At: s.LastTurnStartedAt, Prompt: prompt, Head: "head-before", TranscriptSize: a.size()})
	})
}

func (a *agent) turnEnd() {
	a.tb.Helper()
	a.mutate(func(tx *state.Tx) error {
		s := tx.Session
		s.Phase, s.LastTurnEndedAt = state.PhaseIdle, a.now()
		return tx.AppendTurn(state.TurnRecord{T: state.RecTurnEnd, Turn: s.Turns, At: s.LastTurnEndedAt, Head: "head-after", TranscriptSize: a.size()})
	})
}

// turn is a whole turn: the prompt line, the answer, and the end.
func (a *agent) turn(prompt string) {
	a.tb.Helper()
	a.turnStart(prompt)
	a.write(`{"type":"user","text":"`+prompt+`"}`, `{"type":"assistant","text":"done: `+prompt+`"}`)
	a.turnEnd()
}

// end finalizes the session the way the sweep does.
func (a *agent) end(reason string, interrupted bool) {
	a.tb.Helper()
	a.mutate(func(tx *state.Tx) error {
		s := tx.Session
		s.Phase, s.EndedAt, s.EndReason, s.Interrupted = state.PhaseEnded, a.now(), reason, interrupted
		return nil
	})
}

func (a *agent) load() *state.Session {
	a.tb.Helper()
	s, err := a.st.Load(a.id)
	if err != nil {
		a.tb.Fatal(err)
	}
	return s
}

// logSize is the size of the session's turn log, wherever it lives.
func (a *agent) logSize() int64 {
	a.tb.Helper()
	_, next, err := a.st.ReadTurns(a.id, 0)
	if err != nil {
		a.tb.Fatal(err)
	}
	return next
}

func readFile(tb testing.TB, path string) string {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

// condense runs Condense and fails the test on error.
func (f *fixture) condense(tb testing.TB, ids ...string) []Result {
	tb.Helper()
	res, err := f.repo.Condense(f.st, ids, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// show reads a file of a checkpoint with the git CLI: a transcript file
// from the ref its checkpoint.json names, any other from CheckpointsRef.
func (f *fixture) show(tb testing.TB, id, name string) string {
	tb.Helper()
	ref := "tether/checkpoints/v1"
	if isTranscriptFile(name) {
		var cp Checkpoint
		if err := json.Unmarshal([]byte(f.show(tb, id, "checkpoint.json")), &cp); err != nil {
			tb.Fatal(err)
		}
		ref = cp.TranscriptRef().String()
	}
	out, err := gitCmd(f.dir, "cat-file", "blob", ref+":"+id[:2]+"/"+id[2:]+"/"+name).Output()
	if err != nil {
		tb.Fatalf("git cat-file %s/%s: %v", id, name, err)
	}
	return string(out)
}

// fsck fails the test unless git fsck --strict is clean.
func (f *fixture) fsck(tb testing.TB) {
	tb.Helper()
	fsckAt(tb, f.dir)
}

// fsckAt fails the test unless git fsck --strict is clean in the
// repository at dir (a worktree or a bare repository).
func fsckAt(tb testing.TB, dir string) {
	tb.Helper()
	out, err := gitCmd(dir, "fsck", "--strict", "--no-dangling").CombinedOutput()
	var problems []string
	for line := range strings.Lines(string(out)) {
		if !strings.HasPrefix(line, "notice:") { // e.g. "HEAD points to an unborn branch"
			problems = append(problems, line)
		}
	}
	if err != nil || len(problems) > 0 {
		tb.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

// mustBlob stores a blob.
func mustBlob(tb testing.TB, b *batch, content string) plumbing.Hash {
	tb.Helper()
	h, err := b.writeBytes(plumbing.BlobObject, []byte(content))
	if err != nil {
		tb.Fatal(err)
	}
	return h
}
