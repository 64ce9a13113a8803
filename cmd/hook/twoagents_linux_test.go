package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tetherdev/tether/capture"
	"github.com/tetherdev/tether/internal/bgsweep"
)

// Two agents work in one worktree at once: one writes a.txt while the
// other's turn, which writes nothing, runs. A turn's captures see a.txt
// appear in both turns, but only the agent whose own tool wrote it gets
// it: the commit of a.txt is linked to the writer's checkpoint alone, and
// the idle turn changed nothing. Twenty runs, the same links every time.
func TestTwoAgentsInOneWorktree(t *testing.T) {
	const runs = 20
	var first string
	for i := range runs {
		links, idleChanged := twoAgentsRun(t)
		if i == 0 {
			first = links
			t.Logf("links: %s", links)
		}
		if links != first {
			t.Fatalf("run %d: links %s; run 0: %s", i, links, first)
		}
		// What the idle turn changed: nothing, or, where the sweep found
		// its end capture not landed yet (a loaded machine), unknown;
		// never the other agent's file.
		if idleChanged != "changed no files" && idleChanged != "unknown" {
			t.Fatalf("run %d: the idle turn changed %s", i, idleChanged)
		}
	}
	if first != "writer: 1 checkpoint (turn 1: A a.txt); idle: none" {
		t.Fatalf("links %s", first)
	}
}

// twoAgentsRun plays the two agents once in a fresh repository and says
// which sessions' checkpoints the commit of a.txt is linked to (with what
// the writer's turn changed), and what the idle turn changed.
func twoAgentsRun(t *testing.T) (links, idleChanged string) {
	t.Helper()
	r := newRepo(t)
	install := exec.Command(bins.sweep, "install", "--agent", "claude-code")
	install.Dir, install.Env = r.dir, cleanEnv()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	git(t, r.dir, "add", "-A")
	git(t, r.dir, "commit", "-qm", "tether")

	// The idle agent's turn starts, and stays open while the writer works.
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	idle := exec.CommandContext(ctx, bins.claude, agentArgs(r, bins.hook+" claude-code", "idle-session", "start", "begin=look around", "sleep=1500ms", "stop")...)
	idle.Dir, idle.Env = r.dir, cleanEnv()
	var idleOut bytes.Buffer
	idle.Stdout, idle.Stderr = &idleOut, &idleOut
	if err := idle.Start(); err != nil {
		t.Fatal(err)
	}
	captured := func(session, what string) func() bool {
		return func() bool {
			cmd := exec.Command("git", "log", "-1", "--format=%s", capture.Ref(session), "--")
			cmd.Dir, cmd.Env = r.dir, cleanEnv()
			out, _ := cmd.Output()
			return strings.TrimSpace(string(out)) == what
		}
	}
	waitFor(t, "the idle turn's start capture", captured("idle-session", "tether: turn 1 start"))
	// Neither says its session ended: the commit's sweep finds their
	// agents gone and condenses both, their end captures in (a sweep at a
	// session end could run before an end capture lands on a loaded
	// machine, and count that turn's changes unknown).
	runAgent(t, r, "writer-session", "start", "begin=write a", "write=a.txt:alpha", "stop")
	if err := idle.Wait(); err != nil {
		t.Fatalf("idle agent: %v\n%s", err, idleOut.String())
	}

	// The user commits once the turns' end captures are in (on a loaded
	// machine one may land later than the sweep waits for it: that turn's
	// changes would be unknown, which is not what this test is about).
	waitFor(t, "the idle turn's end capture", captured("idle-session", "tether: turn 1 end"))
	waitFor(t, "the writer's end capture", captured("writer-session", "tether: turn 1 end"))
	git(t, r.dir, "add", "a.txt")
	git(t, r.dir, "commit", "-qm", "a.txt")
	// The commit's sweep may go on after the commit returned.
	bgsweep.Wait(filepath.Join(r.common, "tether"), hangGuard)
	show := exec.Command(bins.sweep, "show", "HEAD", "--json")
	show.Dir, show.Env = r.dir, cleanEnv()
	out, err := show.Output()
	if err != nil {
		t.Fatalf("show: %v", err)
	}
	var linked []struct{ Session string }
	if err := json.Unmarshal(out, &linked); err != nil && !strings.Contains(string(out), "no checkpoints") {
		t.Fatalf("show --json: %v\n%s", err, out)
	}
	count := map[string]int{}
	for _, c := range linked {
		count[c.Session]++
	}
	linkedTo := func(id string) string {
		if n := count[id]; n > 0 {
			return fmt.Sprintf("%d checkpoint", n)
		}
		return "none"
	}
	links = fmt.Sprintf("writer: %s (turn 1: %s); idle: %s", linkedTo("writer-session"), turnChanged(t, r, "writer-session"), linkedTo("idle-session"))
	return links, turnChanged(t, r, "idle-session")
}

// turnChanged says what the session's first turn changed, by its
// checkpoints, as show prints it.
func turnChanged(t *testing.T, r testRepo, id string) string {
	t.Helper()
	s := r.load(t, id)
	var changed []string
	for _, c := range s.Checkpoints {
		show := exec.Command(bins.sweep, "show", c.ID)
		show.Dir, show.Env = r.dir, cleanEnv()
		out, err := show.Output()
		if err != nil {
			t.Fatalf("show %s: %v", c.ID, err)
		}
		for line := range strings.Lines(string(out)) {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "A ") || strings.HasPrefix(line, "M ") || strings.HasPrefix(line, "D ") || line == "changed no files" {
				changed = append(changed, line)
			}
		}
	}
	slices.Sort(changed)
	changed = slices.Compact(changed)
	if len(changed) == 0 {
		return "unknown"
	}
	return strings.Join(changed, ", ")
}
