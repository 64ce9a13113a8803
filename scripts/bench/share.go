package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/state"
)

// sharing is a bare remote holding a history of checkpoints, and the clone
// that pushed them there and goes on condensing and pushing.
type sharing struct {
	size          int
	remote, clone string
	store         *state.Store
	repo          gitdir.Repo
	n             int // sessions condensed so far
}

// remotes builds, once per run, a remote holding b.bigHistory() checkpoints
// and one holding 10.
func (b *bench) remotes() [2]*sharing {
	if b.shared[0] != nil {
		return b.shared
	}
	for i, size := range []int{b.bigHistory(), 10} {
		t0 := time.Now()
		s := &sharing{size: size, remote: filepath.Join(b.work, fmt.Sprintf("remote%d.git", size))}
		s.clone = b.newRepo(fmt.Sprintf("clone%d", size))
		history(s.clone, size)
		// The remote gets the history as a local mirror (hard links): a
		// first push of it would have git deltify it all for minutes.
		git(b.work, "clone", "-q", "--mirror", s.clone, s.remote)
		git(s.clone, "remote", "add", "origin", s.remote)
		// Counts what each push sends (the whole stream git push writes).
		counter := filepath.Join(b.work, "count-receive-pack")
		check(os.WriteFile(counter, []byte("#!/bin/sh\ntee -a \"$BENCH_PUSH_BYTES\" | git-receive-pack \"$@\"\n"), 0o755))
		git(s.clone, "config", "remote.origin.receivepack", counter)
		repo, err := gitdir.Find(s.clone)
		check(err)
		st, err := state.Open(repo.CommonDir, state.Options{})
		check(err)
		s.repo, s.store = repo, st
		s.condenseOne(b)
		s.push(b) // this clone's first transcript ref: created, not measured
		fmt.Fprintf(os.Stderr, "bench: a history of %d checkpoints, pushed, in %v\n", size, time.Since(t0).Round(time.Second))
		b.shared[i] = s
	}
	return b.shared
}

// condenseOne ends one more session with one turn and condenses it, as a
// sweep does.
func (s *sharing) condenseOne(b *bench) {
	s.n++
	id := fmt.Sprintf("share-%05d", s.n)
	transcript := filepath.Join(b.work, id+".jsonl")
	check(os.WriteFile(transcript, fixtureTranscript(1_000_000+s.n), 0o600))
	_, err := s.store.MutateTx(id, func(tx *state.Tx) error {
		ss, now := tx.Session, time.Now().UTC()
		ss.Agent, ss.Worktree, ss.TranscriptPath = "claude-code", s.repo.WorkTree, transcript
		ss.StartedAt, ss.LastHookAt, ss.Turns = now, now, 1
		ss.Phase, ss.EndedAt, ss.EndReason = state.PhaseEnded, now, state.EndSessionEnd
		return tx.AppendTurn(state.TurnRecord{T: state.RecTurnStart, Turn: 1, At: now, Prompt: "one more"})
	})
	check(err)
	sh(s.clone, filepath.Join(b.bin, "tether-sweep")+" run --quiet", nil)
}

// push runs tether-sweep push and returns the bytes it sent.
func (s *sharing) push(b *bench) int64 {
	count := filepath.Join(b.work, "push-bytes")
	check(os.WriteFile(count, nil, 0o600))
	sh(s.clone, filepath.Join(b.bin, "tether-sweep")+" push --quiet origin", nil, "BENCH_PUSH_BYTES="+count)
	fi, err := os.Stat(count)
	check(err)
	return fi.Size()
}

// benchPush times tether-sweep push of one new checkpoint to a remote
// holding the big history against the same push to a remote holding 10,
// interleaved, and compares the bytes each sent.
func benchPush(b *bench) []result {
	rs := b.remotes()
	rounds := max(b.rounds/10, 5)
	var times [2][]time.Duration
	var sent [2][]time.Duration // bytes, carried as durations to reuse median
	for i := range rounds {
		for k := range 2 {
			s := rs[(k+i)%2] // alternate which goes first
			s.condenseOne(b)
			t0 := time.Now()
			n := s.push(b)
			times[(k+i)%2] = append(times[(k+i)%2], time.Since(t0))
			sent[(k+i)%2] = append(sent[(k+i)%2], time.Duration(n))
		}
	}
	big := fmt.Sprintf("%s checkpoints", count(rs[0].size))
	timeRow := ratioResult("push of one checkpoint to a remote of "+big+" vs 10", "tether-sweep push ("+big+")", "tether-sweep push (10)",
		median(times[0]), median(times[1]), rounds, "~1x (<= 1.5x)", func(ratio, _ float64) bool { return ratio <= 1.5 })
	bytesRow := result{Name: "bytes sent by that push", Candidate: big, Floor: "10 checkpoints", Unit: "bytes",
		CandMs: float64(median(sent[0])), FloorMs: float64(median(sent[1])), Rounds: rounds, Budget: "~1x (<= 1.5x)", Tool: "git-receive-pack input"}
	bytesRow.Ratio = bytesRow.CandMs / bytesRow.FloorMs
	bytesRow.DeltaMs = bytesRow.CandMs - bytesRow.FloorMs
	bytesRow.OK = bytesRow.Ratio <= 1.5
	return []result{timeRow, bytesRow}
}

// fetchBudget bounds what a fresh clone fetches per checkpoint: its
// checkpoint.json and prompts.md, compressed, and its share of the
// history's commits and trees; never a transcript.
const fetchBudget = 1536

// benchFetch times tether-sweep fetch in a fresh clone of the remote
// holding the big history (the checkpoints and notes, no transcript)
// against the same fetch from the remote of 10, and reports the size of
// what arrived against the budget per checkpoint.
func benchFetch(b *bench) []result {
	rs := b.remotes()
	rounds := 3
	var times [2][]time.Duration
	var sizes [2][]time.Duration
	for i := range rounds {
		for k, s := range rs {
			dir := filepath.Join(b.work, fmt.Sprintf("fresh%d-%d", s.size, i))
			check(os.MkdirAll(dir, 0o755))
			git(dir, "init", "-q", "-b", "main")
			git(dir, "remote", "add", "origin", s.remote)
			t0 := time.Now()
			sh(dir, filepath.Join(b.bin, "tether-sweep")+" fetch --quiet origin", nil)
			times[k] = append(times[k], time.Since(t0))
			sizes[k] = append(sizes[k], time.Duration(packBytes(dir)))
			check(os.RemoveAll(dir))
		}
	}
	big := count(rs[0].size)
	timeRow := ratioResult("fresh-clone fetch of the checkpoints of "+big+" vs 10", "tether-sweep fetch ("+big+")", "tether-sweep fetch (10)",
		median(times[0]), median(times[1]), rounds, "report", func(float64, float64) bool { return true })
	perCheckpoint := float64(median(sizes[0])) / float64(rs[0].size)
	sizeRow := result{Name: "what that fetch brought, per checkpoint", Candidate: fmt.Sprintf("%s: %.1f MiB", big, float64(median(sizes[0]))/(1<<20)),
		Floor: "budget", Unit: "bytes", CandMs: perCheckpoint, FloorMs: fetchBudget, Rounds: rounds,
		Budget: fmt.Sprintf("<= %d bytes", fetchBudget), Tool: "size-pack"}
	sizeRow.Ratio = sizeRow.CandMs / sizeRow.FloorMs
	sizeRow.DeltaMs = sizeRow.CandMs - sizeRow.FloorMs
	sizeRow.OK = perCheckpoint <= fetchBudget
	return []result{timeRow, sizeRow}
}

// packBytes is the size of the packs of the repository at dir.
func packBytes(dir string) int64 {
	for line := range strings.Lines(git(dir, "count-objects", "-v")) {
		if kib, ok := strings.CutPrefix(strings.TrimSpace(line), "size-pack: "); ok {
			n, err := strconv.ParseInt(kib, 10, 64)
			check(err)
			return n << 10
		}
	}
	return 0
}

// count writes a number with thousands separators: 100,000.
func count(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
