package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tetherdev/tether/agent"
	"github.com/tetherdev/tether/state"
)

// driver is one stress run: the scratch repository, the binaries, and the
// ledger of everything started.
type driver struct {
	cfg      config
	work     string   // scratch root
	hookBin  string   // tether-hook
	sweepBin string   // tether-sweep
	agentBin string   // the stand-in, built as "claude"
	repo     string   // main worktree
	slots    []string // one worktree per agent slot; slots[0] is the main worktree
	gitDir   string   // the git common dir
	env      []string // environment of every child: isolated from the user's git config
	// transcripts is where the stand-ins keep their transcripts: where
	// Claude Code does, under the scratch HOME, the one place tether reads.
	transcripts string
	st          *state.Store
	log         *logFollower

	// gate is held for reading while starting or killing anything, and for
	// writing by a live check, which needs everything to hold still.
	gate sync.RWMutex

	mu         sync.Mutex
	runs       []*agentRun
	stats      stats
	liveChecks int
}

// stats counts what the chaos did, for the summary.
type stats struct {
	sweeps, sweepsOK, sweepsKilled int
	sweepErrors                    map[string]int // shape of the error -> count
	status, statusOK, statusKilled int
	commits, commitsKilled         int
	commitsFailed                  map[string]int // shape of git's complaint -> count
	hooksSeen, hooksKilled         int
	sweepsSeen, sweepsKilledByKind map[string]int // by kind: run, status, post-commit, self-heal
	lockHolderKills                int            // sweeps killed while holding locks/checkpoints.lock
	lockHogs                       int            // session locks the driver held, its hooks spooling meanwhile
	staleGitLocks                  int            // git lock files the person removed after a killed commit
	agentKills                     map[string]int // by activity at the kill
	sweepWarnings                  map[string]int // shape of a warning printed by a sweep -> count
	statusBad                      []string       // status --json answers that broke the contract
	driverErrors                   []string       // the driver's own failures (starting processes)
}

func newDriver(cfg config) (*driver, error) {
	work, err := os.MkdirTemp("", "tether-stress-")
	if err != nil {
		return nil, err
	}
	// /proc shows resolved paths (cwd), so the driver uses them too.
	if work, err = filepath.EvalSymlinks(work); err != nil {
		return nil, err
	}
	d := &driver{
		cfg:      cfg,
		work:     work,
		hookBin:  filepath.Join(work, "bin", "tether-hook"),
		sweepBin: filepath.Join(work, "bin", "tether-sweep"),
		agentBin: filepath.Join(work, "bin", "claude"),
		repo:     filepath.Join(work, "repo"),
		stats: stats{
			sweepErrors: map[string]int{}, sweepsSeen: map[string]int{},
			sweepsKilledByKind: map[string]int{}, agentKills: map[string]int{}, sweepWarnings: map[string]int{},
			commitsFailed: map[string]int{},
		},
	}
	d.gitDir = filepath.Join(d.repo, ".git")
	home := filepath.Join(work, "home")
	d.transcripts = filepath.Join(home, ".claude", "projects", "stress")
	for _, dir := range []string{home, d.transcripts} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return d, err
		}
	}
	d.env = childEnv(home)
	if err := d.build(); err != nil {
		return d, err
	}
	if err := d.makeRepo(); err != nil {
		return d, err
	}
	if d.st, err = state.Open(d.gitDir, state.Options{Apply: agent.ApplySpooled}); err != nil {
		return d, err
	}
	return d, nil
}

// childEnv is the environment of everything the driver starts: no GIT_*
// or agent variables from outside, a scratch HOME so the user's git config
// (hooksPath, signing) stays out, and a fixed identity for commits.
func childEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GIT_") || strings.HasPrefix(name, "CLAUDE") ||
			name == "HOME" || name == "XDG_CONFIG_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Stress Person", "GIT_AUTHOR_EMAIL=person@stress.invalid",
		"GIT_COMMITTER_NAME=Stress Person", "GIT_COMMITTER_EMAIL=person@stress.invalid",
		"NO_COLOR=1",
	)
}

// build compiles the binaries under test from this module.
func (d *driver) build() error {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("find the module: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	for _, b := range []struct{ out, pkg string }{
		{d.hookBin, "./cmd/hook"}, {d.sweepBin, "./cmd/sweep"}, {d.agentBin, "./internal/standin"},
	} {
		cmd := exec.Command("go", "build", "-o", b.out, b.pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return nil
}

// makeRepo makes the scratch repository, a linked worktree per further
// agent slot, and installs tether's git hook.
func (d *driver) makeRepo() error {
	if _, err := d.git(d.work, "init", "-q", "-b", "main", d.repo); err != nil {
		return err
	}
	if _, err := d.git(d.repo, "config", "commit.gpgsign", "false"); err != nil {
		return err
	}
	if _, err := d.git(d.repo, "commit", "-q", "--allow-empty", "-m", "initial"); err != nil {
		return err
	}
	d.slots = []string{d.repo}
	for i := 1; i < d.cfg.agents; i++ {
		wt := filepath.Join(d.work, fmt.Sprintf("wt%d", i))
		if _, err := d.git(d.repo, "worktree", "add", "-q", "-b", fmt.Sprintf("wt%d", i), wt); err != nil {
			return err
		}
		d.slots = append(d.slots, wt)
	}
	cmd := exec.Command(d.sweepBin, "install", "--agent", "claude-code")
	cmd.Dir, cmd.Env = d.repo, d.env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("tether-sweep install: %v\n%s", err, out)
	}
	return nil
}

// git runs git in dir and returns its stdout.
func (d *driver) git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, d.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// command prepares a child that dies with the driver, so a crashed run
// leaves no hanging agent behind.
func (d *driver) command(dir, bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, d.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// rng returns an independent random stream of the run's seed: each
// goroutine has its own, so none waits on a shared lock.
func (d *driver) rng(stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(d.cfg.seed, stream))
}

// pause sleeps a random time in [lo, hi) unless stop is closed first; it
// reports whether to go on.
func pause(r *rand.Rand, stop <-chan struct{}, lo, hi time.Duration) bool {
	t := time.NewTimer(lo + time.Duration(r.Int64N(int64(hi-lo))))
	defer t.Stop()
	select {
	case <-stop:
		return false
	case <-t.C:
		return true
	}
}

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
