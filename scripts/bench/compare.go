package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/internal/bgsweep"
	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// comparison is one budget of DESIGN.md (or a figure of an issue),
// measured against its floor; some give more than one row.
type comparison struct {
	name string
	run  func(b *bench) []result
}

// one adapts a comparison of one row.
func one(run func(b *bench) result) func(b *bench) []result {
	return func(b *bench) []result { return []result{run(b)} }
}

var comparisons = []comparison{
	{"hook turn-start vs do-nothing binary", benchHook},
	{"hook turn-start with capture on vs do-nothing binary", one(benchHookCapture)},
	{"capture of 10,000 files with 10 changed vs git add -A && git write-tree", benchCapture(10_000)},
	{"capture of 100,000 files with 10 changed vs git add -A && git write-tree", benchCapture(100_000)},
	{"commit with nothing pending", benchPostCommit},
	{"commit with nothing pending, 10,000 ended sessions", benchPostCommitEnded},
	{"commit with a live session and nothing to sweep vs do-nothing Go hook", one(benchPostCommitVsGoHook)},
	{"commit that condenses 30 ended sessions", benchCommitCondensing30},
	{"condense on a history of 10,000 checkpoints vs 10", one(benchCondense10k)},
	{"push of one checkpoint", benchPush},
	{"fresh-clone fetch of the checkpoints", benchFetch},
	{"sweep with many ended sessions vs none", one(benchSweepEnded)},
	{"hook session-start with 10,000 live sessions vs none", one(benchSessionStart)},
	{"first commit with 10,000 running turns pending vs plain commit", benchRunningTurns},
	{"match of 1,000 arriving commits against 10,000 linked", one(benchInherit)},
	{"hook wait signals vs do-nothing binary", benchWaitHooks},
	{"status --all-repos over 50 repositories", benchAllRepos},
	{"status --watch: a change on disk to its line", one(benchWatch)},
}

func ratioResult(name, cand, floor string, c, f time.Duration, rounds int, budget string, ok func(ratio, deltaMs float64) bool) result {
	r := result{Name: name, Candidate: cand, Floor: floor, CandMs: ms(c), FloorMs: ms(f), Rounds: rounds, Budget: budget, Tool: "built-in"}
	if f > 0 {
		r.Ratio = float64(c) / float64(f)
	}
	r.DeltaMs = r.CandMs - r.FloorMs
	r.OK = ok(r.Ratio, r.DeltaMs)
	return r
}

// benchHook times tether-hook on a real turn-start payload against the
// floor binary, both through /bin/sh -c as agents run them. Each timed
// turn start follows an untimed turn end, as in a real session: the
// session goes from idle to active and the hook logs the transition.
// Captures are off (git config tether.snapshots false): this is the hook's
// own cost; benchHookCapture prices starting them. A second row prices it
// against a floor that also appends the payload to a file and fsyncs it,
// the durable write any hook keeping a record pays (tether's turn record).
func benchHook(b *bench) []result {
	repo := b.newRepo("hook")
	git(repo, "config", "tether.snapshots", "false")
	payload, stop, done := b.hookPayloads(repo)
	defer done()
	hook := filepath.Join(b.bin, "tether-hook") + " claude-code"
	floor := filepath.Join(b.bin, "floor")
	c, f := interleavePrep(b.rounds,
		func() { sh(repo, hook, stop) },
		func() { sh(repo, hook, payload) },
		func() { sh(repo, floor, payload) })
	r := ratioResult("hook turn-start vs do-nothing binary", "tether-hook claude-code", "floor", c, f, b.rounds,
		"<= 1.5x", func(ratio, _ float64) bool { return ratio <= 1.5 })
	if path, err := exec.LookPath("hyperfine"); err == nil {
		// A second opinion. hyperfine runs the commands one after the
		// other, not interleaved, and subtracts the shell's own start.
		pf := filepath.Join(b.work, "payload.json")
		check(os.WriteFile(pf, payload, 0o600))
		sf := filepath.Join(b.work, "stop.json")
		check(os.WriteFile(sf, stop, 0o600))
		hc, hf := hyperfine(path, repo, b.rounds,
			[2]string{hook + " < " + pf, hook + " < " + sf},
			[2]string{floor + " < " + pf, "true"})
		r.Tool = fmt.Sprintf("built-in; hyperfine: %.3f ms vs %.3f ms = %.2fx", ms(hc), ms(hf), float64(hc)/float64(hf))
	}
	durable := floor + " -append " + filepath.Join(repo, ".git", "floor.jsonl")
	c, f = interleavePrep(b.rounds,
		func() { sh(repo, hook, stop) },
		func() { sh(repo, hook, payload) },
		func() { sh(repo, durable, payload) })
	return []result{r, ratioResult("hook turn-start vs a binary that appends stdin and fsyncs", "tether-hook claude-code",
		"floor -append", c, f, b.rounds, "reported", func(float64, float64) bool { return true })}
}

// hookPayloads sets up a Claude Code session in repo and returns the
// payloads of its turn start and turn end; done undoes the setup.
func (b *bench) hookPayloads(repo string) (payload, stop []byte, done func()) {
	// Where Claude Code keeps its transcripts, which is where tether reads
	// them: the hook measures this one at every turn.
	config := filepath.Join(b.work, "claude")
	transcript := filepath.Join(config, "projects", "bench", "transcript.jsonl")
	check(os.MkdirAll(filepath.Dir(transcript), 0o700))
	check(os.WriteFile(transcript, []byte(`{"type":"user"}`+"\n"), 0o600))
	check(os.Setenv("CLAUDE_CONFIG_DIR", config))
	event := func(name string, extra map[string]any) []byte {
		p := map[string]any{
			"session_id": "bench-0001", "transcript_path": transcript, "cwd": repo,
			"permission_mode": "default", "hook_event_name": name,
		}
		maps.Copy(p, extra)
		data, err := json.Marshal(p)
		check(err)
		return data
	}
	payload = event("UserPromptSubmit", map[string]any{"prompt": "say hi"})
	stop = event("Stop", map[string]any{"stop_hook_active": false})
	return payload, stop, func() { os.Unsetenv("CLAUDE_CONFIG_DIR") }
}

// hyperfine times two commands with hyperfine and returns their medians.
// Each comes with the command to prepare every run of it.
func hyperfine(bin, dir string, runs int, a, b [2]string) (time.Duration, time.Duration) {
	out := filepath.Join(dir, "..", "hyperfine.json")
	cmd := exec.Command(bin, "--warmup", "10", "--runs", strconv.Itoa(runs), "--style", "none", "--export-json", out,
		"--prepare", a[1], "--prepare", b[1], a[0], b[0])
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: hyperfine: %v\n%s", err, msg)
		os.Exit(1)
	}
	data, err := os.ReadFile(out)
	check(err)
	var res struct {
		Results []struct {
			Median float64 `json:"median"`
		} `json:"results"`
	}
	check(json.Unmarshal(data, &res))
	if len(res.Results) != 2 {
		fmt.Fprintf(os.Stderr, "bench: hyperfine reported %d results\n", len(res.Results))
		os.Exit(1)
	}
	sec := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	return sec(res.Results[0].Median), sec(res.Results[1].Median)
}

// benchPostCommit times `git commit` in a repo with tether's post-commit
// hook and nothing pending against the same commit in a repo with no hooks
// and in one whose post-commit hook is an empty shell script.
func benchPostCommit(b *bench) []result {
	hooked := b.newRepo("hooked")
	b.install(hooked)
	return b.postCommitRows(hooked, "plain", 0, "commit with nothing pending")
}

// benchPostCommitEnded is benchPostCommit with a long history behind: the
// store holds 10,000 sessions ended, condensed and linked, and both
// repositories hold 10,000 checkpoints. Nothing on a commit's path may
// grow with them.
func benchPostCommitEnded(b *bench) []result {
	hooked := b.newRepo("hooked-ended")
	history(hooked, 10_000)
	b.install(hooked)
	writeEndedStore(hooked, 10_000)
	sh(hooked, filepath.Join(b.bin, "tether-sweep")+" run --quiet", nil) // settles the store, as the last real sweep did
	return b.postCommitRows(hooked, "plain-ended", 10_000, "commit with nothing pending, 10,000 ended sessions,")
}

// emptyHook is the cheapest post-commit hook git can run: what any hook
// costs a commit before it does anything.
const emptyHook = "#!/bin/sh\nexit 0\n"

// postCommitRows times commits in hooked (tether installed, nothing
// pending, ended sessions ended) against a plain repository and one with
// emptyHook, both made now with that many checkpoints, all interleaved. The
// issue's budget, +2.5 ms over a plain commit, was set where the empty
// hook cost +1.9 ms: the second row holds tether's own part to the
// difference, +0.6 ms, on machines where starting any hook costs more.
func (b *bench) postCommitRows(hooked, plainName string, ended int, what string) []result {
	plain, empty := b.newRepo(plainName), b.newRepo(plainName+"-empty-hook")
	hookFile := filepath.Join(empty, ".git", "hooks", "post-commit")
	check(os.WriteFile(hookFile, []byte(emptyHook), 0o755))
	if ended > 0 {
		for _, dir := range []string{plain, empty} {
			history(dir, ended)
		}
	}
	commit := b.committer()
	rounds := b.rounds / 2
	t := interleaveAll(rounds, commit(hooked), commit(plain), commit(empty))
	cand := "git commit (tether hook)"
	if ended > 0 {
		cand = fmt.Sprintf("git commit (tether hook, %d ended)", ended)
	}
	return []result{
		ratioResult(what+" vs plain commit", cand, "git commit (no hook)", t[0], t[1], rounds,
			"<= +2.5 ms", func(_, delta float64) bool { return delta <= 2.5 }),
		ratioResult(what+" vs commit with an empty hook", cand, "git commit (empty sh hook)", t[0], t[2], rounds,
			"<= +0.6 ms", func(_, delta float64) bool { return delta <= 0.6 }),
	}
}

// benchCommitCondensing30 times a commit whose post-commit sweep finds 30
// sessions whose agents died since the last commit: it finalizes them and
// condenses their turns into one checkpoints commit. The floor is a plain
// commit, interleaved; setup is outside the timing.
func benchCommitCondensing30(b *bench) []result {
	plain := b.newRepo("plain30")
	hooked := b.newRepo("hooked30")
	b.install(hooked)
	repo, err := gitdir.Find(hooked)
	check(err)
	st, err := state.Open(repo.CommonDir, state.Options{})
	check(err)
	env := "PATH=" + b.bin + string(os.PathListSeparator) + os.Getenv("PATH")
	rounds := max(b.rounds/10, 5)
	var cand, floor []time.Duration
	for i := range rounds {
		for j := range 30 {
			seedDeadSession(st, repo, fmt.Sprintf("r%03d-s%02d", i, j), b.work)
		}
		for _, dir := range []string{hooked, plain} {
			check(os.WriteFile(filepath.Join(dir, "f"), fmt.Appendf(nil, "round %d\n", i), 0o644))
			t0 := time.Now()
			sh(dir, "git commit -qam change", nil, env)
			if dir == hooked {
				cand = append(cand, time.Since(t0))
			} else {
				floor = append(floor, time.Since(t0))
			}
		}
		if live, _, _ := st.List(); len(live) != 0 {
			fmt.Fprintf(os.Stderr, "bench: the post-commit sweep left %d sessions live\n", len(live))
			os.Exit(1)
		}
	}
	// DESIGN.md states the budget both ways, for machines where a plain
	// commit takes 10 ms: 80 ms, and 8 times a plain commit. Where starting
	// a process costs more (a plain commit is itself a few), the ratio is
	// the figure that carries over; both are reported.
	c, f := median(cand), median(floor)
	return []result{
		ratioResult("commit that condenses 30 ended sessions vs plain commit", "git commit (30 sessions to condense)", "git commit (no hook)",
			c, f, rounds, "<= 80 ms", func(float64, float64) bool { return ms(c) <= 80 }),
		ratioResult("commit that condenses 30 ended sessions, ratio to a plain commit", "git commit (30 sessions to condense)", "git commit (no hook)",
			c, f, rounds, "<= 8x", func(ratio, _ float64) bool { return ratio <= 8 }),
	}
}

// seedDeadSession records a session with one turn whose owner has exited,
// as a hook would have left it before the agent was killed.
func seedDeadSession(st *state.Store, repo gitdir.Repo, id, work string) {
	cmd := exec.Command("sleep", "60")
	check(cmd.Start())
	owner, err := proclive.Capture(cmd.Process.Pid)
	check(err)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	transcript := filepath.Join(work, id+".jsonl")
	check(os.WriteFile(transcript, []byte(`{"type":"user","message":"bench"}`+"\n"), 0o600))
	_, err = st.MutateTx(id, func(tx *state.Tx) error {
		s, now := tx.Session, time.Now().UTC()
		s.Agent, s.Worktree, s.Owner, s.TranscriptPath, s.TranscriptRoot = "claude-code", repo.WorkTree, &owner, transcript, work
		s.StartedAt, s.LastHookAt, s.LastTurnStartedAt = now, now, now
		s.Phase, s.Turns = state.PhaseActive, 1
		return tx.AppendTurn(state.TurnRecord{T: state.RecTurnStart, Turn: 1, At: now, Prompt: "bench turn"})
	})
	check(err)
}

// benchSweepEnded times `tether-sweep run` over 10 live sessions with
// 100,000 ended sessions (10,000 with --short) in the store against the
// same sweep with none.
func benchSweepEnded(b *bench) result {
	many := 100_000
	if b.short {
		many = 10_000
	}
	var dirs []string
	for _, ended := range []int{many, 0} {
		dir := b.newRepo(fmt.Sprintf("ended%d", ended))
		repo, err := gitdir.Find(dir)
		check(err)
		st, err := state.Open(repo.CommonDir, state.Options{})
		check(err)
		self, err := proclive.Self()
		check(err)
		for i := range 10 {
			_, err := st.Mutate(fmt.Sprintf("live-%02d", i), func(s *state.Session) error {
				now := time.Now().UTC()
				s.Agent, s.Worktree, s.Owner, s.Phase = "claude-code", repo.WorkTree, &self, state.PhaseIdle
				s.StartedAt, s.LastHookAt = now, now
				return nil
			})
			check(err)
		}
		writeEndedStore(dir, ended)
		dirs = append(dirs, dir)
	}
	sweepBin := filepath.Join(b.bin, "tether-sweep")
	c, f := interleave(b.rounds/4,
		func() { sh(dirs[0], sweepBin+" run --quiet", nil) },
		func() { sh(dirs[1], sweepBin+" run --quiet", nil) })
	return ratioResult("sweep with "+count(many)+" ended sessions vs none", "tether-sweep run ("+count(many)+" ended)", "tether-sweep run (0 ended)",
		c, f, b.rounds/4, "~1x (ended cost nothing)", func(ratio, _ float64) bool { return ratio <= 1.2 })
}

// benchSessionStart times tether-hook on a session start in a store holding
// 10,000 live sessions (their agent running) against the same session start
// in a store holding none: a session start must not pay for the other
// sessions of the repository. Each run is the once-a-minute one that may
// launch the background sweep (the throttle stamp is removed before it);
// the hook runs from a directory without tether-sweep, so that launch is
// not timed, and no sweep loads the machine.
func benchSessionStart(b *bench) result {
	owner, stop := runningAgent() // the running agent of every seeded session
	defer stop()
	alone := filepath.Join(b.work, "hook-alone")
	check(os.MkdirAll(alone, 0o755))
	data, err := os.ReadFile(filepath.Join(b.bin, "tether-hook"))
	check(err)
	hook := filepath.Join(alone, "tether-hook")
	check(os.WriteFile(hook, data, 0o755))
	var dirs, stamps []string
	for _, live := range []int{10_000, 0} {
		dir := b.newRepo(fmt.Sprintf("live%d", live))
		repo, err := gitdir.Find(dir)
		check(err)
		st, err := state.Open(repo.CommonDir, state.Options{})
		check(err)
		writeLive(st, repo, &owner, live)
		dirs, stamps = append(dirs, dir), append(stamps, filepath.Join(st.Dir(), "sweep.throttle"))
	}
	start := func(dir string) func() {
		payload, err := json.Marshal(map[string]any{
			"session_id": "bench-start", "cwd": dir, "hook_event_name": "SessionStart", "source": "startup",
		})
		check(err)
		return func() { sh(dir, hook+" claude-code", payload, "PATH=/usr/bin:/bin") }
	}
	unthrottle := func() {
		for _, s := range stamps {
			if err := os.Remove(s); err != nil && !os.IsNotExist(err) {
				check(err)
			}
		}
	}
	rounds := b.rounds / 4
	c, f := interleavePrep(rounds, unthrottle, start(dirs[0]), start(dirs[1]))
	return ratioResult("hook session-start with 10,000 live sessions vs none", "tether-hook (10,000 live)", "tether-hook (0 live)",
		c, f, rounds, "~1x (flat in sessions)", func(ratio, _ float64) bool { return ratio <= 1.2 })
}

// runningAgent starts a process that stands for a running agent, and
// returns its identity and how to stop it.
func runningAgent() (proclive.Identity, func()) {
	agent := exec.Command("sleep", "3600")
	check(agent.Start())
	owner, err := proclive.Capture(agent.Process.Pid)
	check(err)
	return owner, func() {
		_ = agent.Process.Kill()
		_ = agent.Wait()
	}
}

// writeLive writes n idle sessions owned by a running process straight into
// sessions/ in the store's format.
func writeLive(st *state.Store, repo gitdir.Repo, owner *proclive.Identity, n int) {
	dir := filepath.Join(st.Dir(), "sessions")
	check(os.MkdirAll(dir, 0o700))
	at := time.Now().UTC()
	for i := range n {
		s := state.Session{Version: state.SchemaVersion, ID: fmt.Sprintf("live-%06d", i), Agent: "claude-code",
			Phase: state.PhaseIdle, Worktree: repo.WorkTree, Owner: owner, StartedAt: at, UpdatedAt: at, LastHookAt: at}
		data, err := json.Marshal(&s)
		check(err)
		check(os.WriteFile(filepath.Join(dir, s.ID+".json"), data, 0o600))
	}
}

// benchCondense10k runs the checkpoint package's Go benchmark, which
// condenses one more checkpoint on branches of 10, 1,000 and 10,000, and
// compares the largest with the smallest.
func benchCondense10k(b *bench) result {
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "^BenchmarkCondense$", "-benchtime", "20x", "./checkpoint")
	cmd.Dir = moduleRoot()
	out, err := cmd.CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: go test -bench: %v\n%s", err, out)
		os.Exit(1)
	}
	ns := map[string]float64{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && strings.HasPrefix(f[0], "BenchmarkCondense/branch=") && f[3] == "ns/op" {
			size := strings.TrimPrefix(f[0], "BenchmarkCondense/branch=")
			size, _, _ = strings.Cut(size, "-")
			v, err := strconv.ParseFloat(f[2], 64)
			check(err)
			ns[size] = v
		}
	}
	if ns["10"] == 0 || ns["10000"] == 0 {
		fmt.Fprintf(os.Stderr, "bench: could not read the condense benchmark:\n%s", out)
		os.Exit(1)
	}
	c, f := time.Duration(ns["10000"]), time.Duration(ns["10"])
	r := ratioResult("condense on a branch of 10,000 checkpoints vs 10", "condense #10,001", "condense #11",
		c, f, 20, "<= 2x", func(ratio, _ float64) bool { return ratio <= 2 })
	r.Tool = "go test -bench"
	return r
}

// install puts tether's git hooks (no agent configs) into a repository.
func (b *bench) install(dir string) {
	cmd := exec.Command(filepath.Join(b.bin, "tether-sweep"), "install", "--agent", "none")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+b.bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: install: %v\n%s", err, out)
		os.Exit(1)
	}
}

// benchPostCommitVsGoHook times a commit while a session is live (its
// agent is this process) and has nothing pending: the store is active, so
// the hook script runs tether-hook, whose gate finds nothing to sweep. The
// floor is the cheapest hook a Go tool can have: the same guarded script
// exec'ing the do-nothing floor binary.
func benchPostCommitVsGoHook(b *bench) result {
	goHook := b.newRepo("gohook")
	hooked := b.newRepo("hooked-live")
	b.install(hooked)
	repo, err := gitdir.Find(hooked)
	check(err)
	st, err := state.Open(repo.CommonDir, state.Options{})
	check(err)
	self, err := proclive.Self()
	check(err)
	_, err = st.Mutate("live-session", func(s *state.Session) error {
		now := time.Now().UTC()
		s.Agent, s.Worktree, s.Owner, s.Phase = "claude-code", repo.WorkTree, &self, state.PhaseIdle
		s.StartedAt, s.LastHookAt = now, now
		return nil
	})
	check(err)
	floor := filepath.Join(b.bin, "floor")
	script := "#!/bin/sh\n[ -x " + floor + " ] || exit 0\nexec " + floor + " </dev/null\n"
	check(os.WriteFile(filepath.Join(goHook, ".git", "hooks", "post-commit"), []byte(script), 0o755))
	commit := b.committer()
	rounds := b.rounds / 2
	c, f := interleave(rounds, commit(hooked), commit(goHook))
	return ratioResult("commit with a live session, nothing to sweep, vs do-nothing Go hook", "git commit (tether hook, gate)", "git commit (guarded do-nothing Go hook)", c, f, rounds,
		"<= +1 ms", func(_, delta float64) bool { return delta <= 1 })
}

// committer returns, per repository, one round of "change a file, git
// commit" with our binaries on PATH, as the post-commit hooks need them.
func (b *bench) committer() func(dir string) func() {
	env := "PATH=" + b.bin + string(os.PathListSeparator) + os.Getenv("PATH")
	n := 0
	return func(dir string) func() {
		return func() {
			n++
			check(os.WriteFile(filepath.Join(dir, "f"), fmt.Appendf(nil, "%d\n", n), 0o644))
			sh(dir, "git commit -qam change", nil, env)
		}
	}
}

// benchRunningTurns times the first commit in a repository where 10,000
// sessions of this worktree each have a turn running (their agent alive)
// that nothing has condensed yet: the post-commit sweep has all of them to
// condense, far more than a commit may wait for. The commit must return
// once tether.commitWait (1 s by default) is up, the sweep going on by
// itself; the floor is a plain commit. A second row reports how long that
// sweep went on after the commit returned: what the commit would have
// waited without the bound. Each round starts from a fresh repository and
// waits for the previous sweep to exit, so none loads the next.
func benchRunningTurns(b *bench) []result {
	const sessions, wait = 10_000, time.Second
	owner, stop := runningAgent() // the running agent of every session
	defer stop()
	transcripts := filepath.Join(b.work, "running-transcripts")
	check(os.MkdirAll(transcripts, 0o700))
	commit := b.committer()
	rounds := 3
	if b.short {
		rounds = 1
	}
	var cand, floor, after []time.Duration
	for i := range rounds {
		plain := b.newRepo(fmt.Sprintf("plain-running%d", i))
		hooked := b.newRepo(fmt.Sprintf("running%d", i))
		b.install(hooked)
		st := writeRunning(hooked, transcripts, &owner, sessions)
		// Alternate which commits first, as interleave does.
		order := []string{hooked, plain}
		if i%2 == 1 {
			order = []string{plain, hooked}
		}
		for _, dir := range order {
			t0 := time.Now()
			commit(dir)()
			d := time.Since(t0)
			if dir == plain {
				floor = append(floor, d)
				continue
			}
			cand = append(cand, d)
			bgsweep.Wait(st.Dir(), 10*time.Minute)
			after = append(after, time.Since(t0)-d)
		}
		if live, _, err := st.List(); err != nil || pendingTurns(live) != 0 {
			fmt.Fprintf(os.Stderr, "bench: the post-commit sweep left %d running turns uncondensed (%v)\n", pendingTurns(live), err)
			os.Exit(1)
		}
		check(st.Close())
	}
	c, f := median(cand), median(floor)
	row := ratioResult("first commit with 10,000 running turns pending vs plain commit", "git commit (10,000 turns to condense)", "git commit (no hook)",
		c, f, rounds, "<= commitWait (1 s) + 100 ms", func(_, delta float64) bool { return delta <= ms(wait)+100 })
	sweep := result{Name: "the sweep that commit left running, after it returned", Candidate: "tether-sweep run --hook post-commit", Floor: "commitWait",
		CandMs: ms(median(after)), FloorMs: ms(wait), Rounds: rounds, Budget: "report", OK: true, Tool: "built-in"}
	sweep.Ratio, sweep.DeltaMs = sweep.CandMs/sweep.FloorMs, sweep.CandMs-sweep.FloorMs
	return []result{row, sweep}
}

// writeRunning records n sessions of the repository at dir, each with one
// turn started and still running, owned by owner, with a transcript of a
// few KiB in transcripts: what the hooks leave behind 10,000 agents that
// each started a turn. It writes through the store, in groups.
func writeRunning(dir, transcripts string, owner *proclive.Identity, n int) *state.Store {
	repo, err := gitdir.Find(dir)
	check(err)
	st, err := state.Open(repo.CommonDir, state.Options{})
	check(err)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("running-%06d", i)
		path := filepath.Join(transcripts, ids[i]+".jsonl")
		if _, err := os.Stat(path); err != nil {
			check(os.WriteFile(path, fixtureTranscript(2_000_000+i), 0o600))
		}
	}
	now := time.Now().UTC()
	_, errs := st.MutateEach(ids, func(tx *state.Tx) error {
		s := tx.Session
		s.Agent, s.Worktree, s.Owner, s.Phase = "claude-code", repo.WorkTree, owner, state.PhaseActive
		s.TranscriptPath, s.TranscriptRoot = filepath.Join(transcripts, s.ID+".jsonl"), transcripts
		s.StartedAt, s.LastHookAt, s.LastTurnStartedAt, s.Turns = now, now, now, 1
		return tx.AppendTurn(state.TurnRecord{T: state.RecTurnStart, Turn: 1, At: now, Prompt: "a turn still running"})
	})
	check(errors.Join(errs...))
	return st
}

// pendingTurns counts the turns of sessions not yet condensed.
func pendingTurns(live []*state.Session) int {
	n := 0
	for _, s := range live {
		n += s.PendingTurns()
	}
	return n
}
