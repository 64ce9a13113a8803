//go:build !windows

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/proclive"
	"github.com/tetherdev/tether/state"
)

// gateWithFakeSweep puts a copy of tether-hook beside a fake tether-sweep
// (a shell script), installs a post-commit hook that runs the gate, and
// leaves a turn pending in the repository so the gate has a reason to
// start the sweep. It returns the repository.
func gateWithFakeSweep(t *testing.T, sweep string) testRepo {
	t.Helper()
	dir := t.TempDir()
	hook := filepath.Join(dir, "tether-hook")
	data, err := os.ReadFile(bins.hook)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hook, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tether-sweep"), []byte("#!/bin/sh\n"+sweep), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newRepo(t)
	script := "#!/bin/sh\nexec " + hook + " git post-commit\n"
	if err := os.WriteFile(filepath.Join(r.common, "hooks", "post-commit"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := proclive.Self()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store(t).MutateTx("pending", func(tx *state.Tx) error {
		s, now := tx.Session, time.Now().UTC()
		s.Agent, s.Phase, s.Owner, s.Worktree = "claude-code", state.PhaseActive, &self, r.dir
		s.StartedAt, s.LastHookAt = now, now
		return tx.AppendTurn(state.TurnRecord{T: state.RecTurnStart, Turn: 1, At: now})
	}); err != nil {
		t.Fatal(err)
	}
	return r
}

// commit runs git commit with a hang guard and returns its stderr.
func commit(t *testing.T, r testRepo) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "commit", "-q", "--allow-empty", "-m", "work")
	cmd.Dir, cmd.Env = r.dir, cleanEnv()
	cmd.WaitDelay = time.Second // a hung hook may hold git's stderr open
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git commit: %v (a hung post-commit sweep held it)\n%s", err, stderr.String())
	}
	return stderr.String()
}

func waitForFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		} else if !errors.Is(err, fs.ErrNotExist) || time.Now().After(deadline) {
			t.Fatalf("%s never appeared: %v", path, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A post-commit sweep that hangs does not hang the commit: git commit
// returns once tether.commitWait is up, and the sweep goes on by itself,
// detached, and finishes its work when it can.
func TestCommitDoesNotWaitForAHungSweep(t *testing.T) {
	scratch := t.TempDir()
	started, release, finished := filepath.Join(scratch, "started"), filepath.Join(scratch, "release"), filepath.Join(scratch, "finished")
	r := gateWithFakeSweep(t, `echo "$@" > `+started+`
while [ ! -e `+release+` ]; do sleep 0.05; done
echo "swept after the commit" >&2
touch `+finished+`
`)
	t.Cleanup(func() { os.WriteFile(release, nil, 0o644) }) // never left waiting, even by a failure
	git(t, r.dir, "config", "tether.commitWait", "100ms")
	stderr := commit(t, r)
	waitForFile(t, started)
	if args, _ := os.ReadFile(started); strings.TrimSpace(string(args)) != "run --hook post-commit --quiet" {
		t.Errorf("the sweep ran with %q", args)
	}
	if _, err := os.Stat(finished); err == nil {
		t.Fatal("the sweep finished before it was released: the commit did wait for it")
	}
	if strings.Contains(stderr, "swept after") {
		t.Errorf("the commit printed what the sweep wrote after it returned: %q", stderr)
	}
	var detached bool
	for _, l := range r.logLines(t) {
		detached = detached || l.Msg == sweepDetachedMsg
	}
	if !detached {
		t.Error("the log does not say the sweep went on in the background")
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitForFile(t, finished) // detached, it carried on
}

// A sweep done within the wait has its output shown by the commit, as
// git shows a hook's; a bad tether.commitWait is said and the default
// used.
func TestCommitShowsTheSweepsOutput(t *testing.T) {
	r := gateWithFakeSweep(t, `echo "tether-sweep: warning: something to see" >&2
`)
	git(t, r.dir, "config", "tether.commitWait", "soon")
	stderr := commit(t, r)
	if !strings.Contains(stderr, "tether-sweep: warning: something to see") {
		t.Errorf("commit stderr %q lacks the sweep's warning", stderr)
	}
	if !strings.Contains(stderr, `tether.commitWait: "soon" is not a duration`) {
		t.Errorf("commit stderr %q does not name the bad setting", stderr)
	}
}

// The gate's own look at the store counts against the wait: past it, in
// doubt, the sweep starts and the commit returns, however many sessions
// there are to look at.
func TestCommitWaitBoundsTheGate(t *testing.T) {
	scratch := t.TempDir()
	started := filepath.Join(scratch, "started")
	r := gateWithFakeSweep(t, `touch `+started+`
`)
	st := r.store(t)
	self, err := proclive.Self()
	if err != nil {
		t.Fatal(err)
	}
	// Live sessions with nothing pending: a gate that looked at them all
	// would start nothing.
	var ids []string
	for i := range 500 {
		ids = append(ids, fmt.Sprintf("idle-%03d", i))
	}
	_, errs := st.MutateEach(append(ids, "pending"), func(tx *state.Tx) error {
		s, now := tx.Session, time.Now().UTC()
		s.Agent, s.Phase, s.Owner, s.Worktree = "claude-code", state.PhaseIdle, &self, r.dir
		s.StartedAt, s.LastHookAt, s.CondensedTurns, s.Condensed = now, now, s.Turns, s.TurnLogSize
		return nil
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	git(t, r.dir, "config", "tether.commitWait", "1ns")
	commit(t, r)
	waitForFile(t, started)
}
