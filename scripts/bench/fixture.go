package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/state"
)

// fixtureClone names the clone that wrote a fixture's transcripts.
const fixtureClone = "0123456789ab"

// history writes n checkpoints into the repository at dir the way tether
// lays them out, with git fast-import, so that a history of 100,000 takes
// a minute rather than the hours 100,000 condenses would:
// checkpoints/v1 gets one commit per checkpoint, as a sweep condensing one
// session writes, with a realistic checkpoint.json and prompts.md; the
// transcripts (about 4 KiB of JSON lines each) go to one ref per month
// over a year, in commits of 100 (they are never what is measured: a
// fresh clone does not fetch them, and a push sends only its own). The two
// kinds are written by two fast-import processes at once.
func history(dir string, n int) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	step := 365 * 24 * time.Hour / time.Duration(n)
	var wg sync.WaitGroup
	for _, write := range []func(io.Writer){
		func(w io.Writer) { writeCheckpoints(w, n, start, step) },
		func(w io.Writer) { writeTranscripts(w, n, start, step) },
	} {
		wg.Go(func() {
			cmd := exec.Command("git", "fast-import", "--quiet")
			cmd.Dir = dir
			// fast-import grows and shrinks its heap all the time; with
			// glibc's default trimming that costs minutes of brk calls on
			// some VMs, and padded, seconds.
			cmd.Env = append(os.Environ(), "MALLOC_TOP_PAD_=268435456", "MALLOC_TRIM_THRESHOLD_=268435456")
			in, err := cmd.StdinPipe()
			check(err)
			cmd.Stderr = os.Stderr
			check(cmd.Start())
			bw := bufio.NewWriterSize(in, 1<<20)
			write(bw)
			check(bw.Flush())
			check(in.Close())
			check(cmd.Wait())
		})
	}
	wg.Wait()
}

func fixtureID(i int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "bench-checkpoint-%d", i))
	return hex.EncodeToString(sum[:8])
}

func fixtureRef(at time.Time) string {
	return checkpoint.TranscriptRef(at.Format("2006-01"), fixtureClone).String()
}

func dataBlock(w io.Writer, mark int, data []byte) {
	fmt.Fprintf(w, "blob\nmark :%d\ndata %d\n", mark, len(data))
	w.Write(data)
	io.WriteString(w, "\n")
}

func writeCheckpoints(w io.Writer, n int, start time.Time, step time.Duration) {
	for i := range n {
		id, at := fixtureID(i), start.Add(time.Duration(i)*step)
		cp := checkpoint.Checkpoint{
			Version: checkpoint.FormatVersion, ID: id, Session: fmt.Sprintf("5f0c%04d-1b2c-4d5e-8f90-%012d", i%10000, i/3),
			Incarnation: fmt.Sprintf("%016x%016x", i*7919, i*104729), Agent: "claude-code",
			Worktree: "/home/dev/src/project", Branch: fmt.Sprintf("feature/work-%d", i%50),
			StartedAt: at.Add(-time.Hour), EndedAt: at, EndReason: "session-end",
			TurnLog: checkpoint.LogRange{From: 0, To: 412},
			Turns: []checkpoint.Turn{{Turn: 1, Prompt: fmt.Sprintf("fix the flaky test in package %d and explain why it failed", i%300),
				StartedAt: at.Add(-3 * time.Minute), EndedAt: at, HeadBefore: fmt.Sprintf("%040x", i*31), HeadAfter: fmt.Sprintf("%040x", i*37)}},
			Transcript: checkpoint.Transcript{Path: "/home/dev/.claude/projects/-home-dev-src-project/session.jsonl", Ref: fixtureRef(at),
				From: int64(i) * 4096, To: int64(i+1) * 4096, Bytes: 4096, SHA256: fmt.Sprintf("%064x", i), Files: []string{"transcript.jsonl"}},
		}
		data, err := json.MarshalIndent(&cp, "", "  ")
		check(err)
		dataBlock(w, 1, append(data, '\n'))
		dataBlock(w, 2, fmt.Appendf(nil, "# Session %s (claude-code)\n\nCheckpoint %s, turn 1.\n\n## Turn 1\n\n%s\n", cp.Session, id, cp.Turns[0].Prompt))
		fmt.Fprintf(w, "commit %s\ncommitter tether <tether@localhost> %d +0000\ndata <<EOM\ntether: 1 checkpoint\n\n%s  session %s, 1 turn\nEOM\n",
			checkpoint.CheckpointsRef, at.Unix(), id, cp.Session)
		dir := id[:2] + "/" + id[2:]
		fmt.Fprintf(w, "M 100644 :1 %s/checkpoint.json\nM 100644 :2 %s/prompts.md\n\n", dir, dir)
	}
}

func writeTranscripts(w io.Writer, n int, start time.Time, step time.Duration) {
	const perCommit = 100
	for i := 0; i < n; i += perCommit {
		at := start.Add(time.Duration(i) * step)
		var files strings.Builder
		for j := i; j < min(i+perCommit, n); j++ {
			dataBlock(w, j-i+1, fixtureTranscript(j))
			id := fixtureID(j)
			fmt.Fprintf(&files, "M 100644 :%d %s/%s/transcript.jsonl\n", j-i+1, id[:2], id[2:])
		}
		fmt.Fprintf(w, "commit %s\ncommitter tether <tether@localhost> %d +0000\ndata <<EOM\ntether: transcripts\nEOM\n%s\n",
			fixtureRef(at), at.Unix(), files.String())
	}
}

// fixtureTranscript is about 4 KiB of JSON lines, part text, part unique
// tokens, compressing about as a real transcript does.
func fixtureTranscript(i int) []byte {
	var b []byte
	for j := 0; len(b) < 4000; j++ {
		sum := sha256.Sum256(fmt.Appendf(nil, "t-%d-%d", i, j))
		b = fmt.Appendf(b, `{"type":"assistant","uuid":"%s","message":{"content":[{"type":"text","text":"Ran the tests in package %d, step %d: ok"}]}}`+"\n", hex.EncodeToString(sum[:16]), i, j)
	}
	return b
}

// writeEndedStore leaves n sessions in the store of the repository at dir
// the way a long history of real sessions leaves it once everything is
// condensed and linked: ended/<id>.json with its turn log, a lock file per
// session in locks/, no mark, and nothing live. It writes the files
// directly (finalizing 10,000 sessions one by one would take minutes);
// a real sweep then settles the store.
func writeEndedStore(dir string, n int) {
	repo, err := gitdir.Find(dir)
	check(err)
	st, err := state.Open(repo.CommonDir, state.Options{})
	check(err)
	defer st.Close()
	for _, sub := range []string{"ended", "locks"} {
		check(os.MkdirAll(filepath.Join(st.Dir(), sub), 0o700))
	}
	at := time.Now().UTC().Add(-48 * time.Hour)
	for i := range n {
		id := fmt.Sprintf("ended-%06d", i)
		turns := fmt.Appendf(nil, `{"t":"turn-start","turn":1,"at":%q,"prompt":"bench"}`+"\n"+`{"t":"turn-end","turn":1,"at":%q}`+"\n",
			at.Format(time.RFC3339Nano), at.Add(time.Minute).Format(time.RFC3339Nano))
		s := state.Session{Version: state.SchemaVersion, ID: id, Agent: "claude-code", Worktree: repo.WorkTree,
			Phase: state.PhaseEnded, StartedAt: at, UpdatedAt: at, EndedAt: at.Add(2 * time.Minute), EndReason: state.EndSessionEnd,
			Turns: 1, CondensedTurns: 1, Condensed: int64(len(turns)), TurnLogSize: int64(len(turns)),
			Checkpoints: []state.CheckpointRef{{ID: fixtureID(i), Linked: []string{fmt.Sprintf("%040x", i)}}}}
		data, err := json.Marshal(&s)
		check(err)
		check(os.WriteFile(filepath.Join(st.Dir(), "ended", id+".json"), data, 0o600))
		check(os.WriteFile(filepath.Join(st.Dir(), "ended", id+".turns.jsonl"), turns, 0o600))
		check(os.WriteFile(filepath.Join(st.Dir(), "locks", id+".lock"), nil, 0o600))
	}
}
