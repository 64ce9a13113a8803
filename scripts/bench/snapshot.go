package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tetherdev/tether/capture"
)

// benchHookCapture is benchHook with captures on (the default): the hook
// starts `tether-hook capture` in the background at every turn start and
// end. The captures run untimed after each timed turn start, so neither
// side is timed while one is running.
func benchHookCapture(b *bench) result {
	repo := b.newRepo("hook-capture")
	payload, stop, done := b.hookPayloads(repo)
	defer done()
	hook := filepath.Join(b.bin, "tether-hook") + " claude-code"
	floor := filepath.Join(b.bin, "floor")
	captures := newCaptureWatch(repo, "bench-0001")
	started := false // a turn end captures only after a turn start
	c, f := interleaveAround(b.rounds,
		func() {
			sh(repo, hook, stop)
			if started {
				captures.wait(1)
			}
		},
		func() { captures.wait(1); started = true },
		func() { sh(repo, hook, payload) },
		func() { sh(repo, floor, payload) })
	return ratioResult("hook turn-start with capture on vs do-nothing binary", "tether-hook claude-code (capture on)", "floor", c, f, b.rounds,
		"<= 2x", func(ratio, _ float64) bool { return ratio <= 2 })
}

// captureWatch follows a session's capture ref, read as a file as git
// writes it, to tell when a background capture has landed.
type captureWatch struct {
	file string
	last string
}

func newCaptureWatch(repo, session string) *captureWatch {
	return &captureWatch{file: filepath.Join(repo, ".git", filepath.FromSlash(capture.Ref(session)))}
}

// wait returns once the ref has moved n times since the last wait, and
// how long after the call it moved the last time.
func (w *captureWatch) wait(n int) time.Duration {
	t0 := time.Now()
	for moved := 0; moved < n; {
		data, _ := os.ReadFile(w.file)
		if cur := string(data); cur != w.last && cur != "" {
			w.last = cur
			moved++
			continue
		}
		if time.Since(t0) > time.Minute {
			fmt.Fprintf(os.Stderr, "bench: no capture landed on %s within a minute\n", w.file)
			os.Exit(1)
		}
		time.Sleep(200 * time.Microsecond)
	}
	return time.Since(t0)
}

// benchCapture times `tether-hook capture` (capture and record), as the
// hook starts it, in a
// worktree of n files with 10 of them changed since the last capture,
// against the floor: `git add -A && git write-tree` on a private index of
// its own, as warm. A second row is the delay between the hook's return at
// a turn start and its background capture landing on the session's ref:
// what the agent's first tool call must not come before.
func benchCapture(n int) func(b *bench) []result {
	return func(b *bench) []result {
		name := fmt.Sprintf("capture-%d", n)
		repo := b.newRepo(name)
		dirs := n / 1000
		for d := range dirs {
			dir := filepath.Join(repo, "src", strconv.Itoa(d))
			check(os.MkdirAll(dir, 0o755))
			for f := range 1000 {
				check(os.WriteFile(filepath.Join(dir, strconv.Itoa(f)+".go"), []byte(fmt.Sprintf("package p%d // %d\n", d, f)), 0o644))
			}
		}
		git(repo, "add", "-A")
		git(repo, "commit", "-qm", "files")
		round := 0
		touch := func() {
			round++
			for i := range 10 {
				p := filepath.Join(repo, "src", strconv.Itoa(i%dirs), strconv.Itoa(i)+".go")
				check(os.WriteFile(p, []byte(fmt.Sprintf("package changed // round %d\n", round)), 0o644))
			}
		}
		floorIndex := filepath.Join(b.work, name+".floor-index")
		check(copyFile(filepath.Join(repo, ".git", "index"), floorIndex))
		hookBin := filepath.Join(b.bin, "tether-hook")
		turn := 0
		rounds := b.rounds / 4
		if n >= 100_000 {
			rounds = max(b.rounds/20, 10)
		}
		c, f := interleavePrep(rounds, touch,
			func() {
				turn++
				sh(repo, hookBin+" capture bench "+strconv.Itoa(turn)+" start "+time.Now().UTC().Format(time.RFC3339Nano), nil)
			},
			func() { sh(repo, "git add -A && git write-tree", nil, "GIT_INDEX_FILE="+floorIndex) })
		capture := ratioResult(fmt.Sprintf("capture of %d files with 10 changed vs git add -A && git write-tree", n),
			"tether-hook capture", "git add -A && git write-tree (warm private index)", c, f, rounds,
			"<= 1.5x", func(ratio, _ float64) bool { return ratio <= 1.5 })

		// The hook's background capture: from its return to the ref moving.
		payload, stop, done := b.hookPayloads(repo)
		defer done()
		hook := filepath.Join(b.bin, "tether-hook") + " claude-code"
		captures := newCaptureWatch(repo, "bench-0001")
		var delays []time.Duration
		for i := range rounds + 3 {
			touch()
			sh(repo, hook, stop)
			if i > 0 {
				captures.wait(1) // the turn end's, after the first turn
			}
			sh(repo, hook, payload)
			if d := captures.wait(1); i >= 3 {
				delays = append(delays, d)
			}
		}
		latency := ratioResult(fmt.Sprintf("capture landed after the hook returned, %d files, vs git add -A && git write-tree", n),
			"hook return to capture on its ref", "git add -A && git write-tree (warm private index)", median(delays), f, rounds,
			"reported", func(float64, float64) bool { return true })
		return []result{capture, latency}
	}
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o600)
}
