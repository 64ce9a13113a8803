package proclive

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// hookRun is one hook stand-in run through a real process chain.
type hookRun struct {
	t      *testing.T
	dir    string
	out    string // where the hook writes its result
	goFile string // created to let the hook walk
}

func newHookRun(t *testing.T) *hookRun {
	dir := t.TempDir()
	return &hookRun{t: t, dir: dir, out: filepath.Join(dir, "result.json"), goFile: filepath.Join(dir, "go")}
}

// hook is the shell command that runs the hook stand-in.
func (h *hookRun) hook() string {
	return fmt.Sprintf("%s standin:hook %s", standin(h.t, "tether-hook"), h.out)
}

// env makes agents write pid files into the run's directory and the hook
// wait for the go file.
func (h *hookRun) env(extra ...string) []string {
	return append([]string{"STANDIN_PIDDIR=" + h.dir, "HOOK_WAIT=" + h.goFile}, extra...)
}

// waitReady waits until the hook is running and holding.
func (h *hookRun) waitReady() {
	eventually(h.t, "the hook to start", func() bool {
		_, err := os.Stat(h.out + ".ready")
		return err == nil
	})
}

// pid reads the pid file an agent stand-in wrote.
func (h *hookRun) pid(name string) int {
	b, err := os.ReadFile(filepath.Join(h.dir, name+".pid"))
	if err != nil {
		h.t.Fatal(err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		h.t.Fatal(err)
	}
	return pid
}

// hookResult is what the hook stand-in reports.
type hookResult struct {
	Owner   *Identity `json:"owner"`
	Error   string    `json:"error"`
	NoOwner bool      `json:"no_owner"`
	Broken  bool      `json:"broken"`
	Daemon  bool      `json:"daemon"`
	Via     []string  `json:"via"` // the hook's ancestors below the owner
}

// result lets the hook walk and returns what it found.
func (h *hookRun) result() hookResult {
	if err := os.WriteFile(h.goFile, nil, 0o644); err != nil {
		h.t.Fatal(err)
	}
	var res hookResult
	eventually(h.t, "the hook's result", func() bool {
		b, err := os.ReadFile(h.out)
		if err != nil {
			return false
		}
		if err := json.Unmarshal(b, &res); err != nil {
			h.t.Fatal(err)
		}
		return true
	})
	return res
}

// expectOwner lets the hook walk and checks that it names want, having
// passed through each of via on the way.
func (h *hookRun) expectOwner(want Identity, via ...string) {
	h.t.Helper()
	res := h.result()
	if res.Owner == nil {
		h.t.Fatalf("no owner: %s; want %s (pid %d)", res.Error, want.Name, want.PID)
	}
	h.t.Logf("walked %q to %s", res.Via, res.Owner.Name)
	if *res.Owner != want {
		h.t.Errorf("owner = %+v\nwant    %+v", *res.Owner, want)
	}
	for _, v := range via {
		if !slices.Contains(res.Via, v) {
			h.t.Errorf("the chain %q lacks %q: the test does not exercise what it claims", res.Via, v)
		}
	}
}

func capture(t *testing.T, pid int) Identity {
	t.Helper()
	id, err := Capture(pid)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestResolveOwnerChains(t *testing.T) {
	tests := []struct {
		name  string
		agent string   // the pid file naming the expected owner
		via   []string // processes the walk must pass
		env   []string
		argv  func(h *hookRun) []string
	}{
		{"agent, sh -c, hook", "claude", []string{"sh"}, nil, func(h *hookRun) []string {
			return []string{standin(t, "claude"), "standin:agent", "sh", "-c", h.hook() + "; true"}
		}},
		{"agent, bash -lc, hook", "claude", []string{"bash"}, []string{"HOME=" + t.TempDir()}, func(h *hookRun) []string {
			return []string{standin(t, "claude"), "standin:agent", "bash", "-lc", h.hook() + "; true"}
		}},
		{"agent, env, timeout, nice, sh -c, hook", "claude", []string{"timeout", "sh"}, nil, func(h *hookRun) []string {
			// env and nice exec what they run; timeout stays as a parent.
			return []string{standin(t, "claude"), "standin:agent",
				"env", "TETHER_X=1", "timeout", "300", "nice", "-n", "1", "sh", "-c", h.hook() + "; true"}
		}},
		{"agent, git alias, hook", "codex", []string{"git"}, []string{"HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1"}, func(h *hookRun) []string {
			return []string{standin(t, "codex"), "standin:agent", "git", "-C", h.dir, "-c", "alias.tetherx=!" + h.hook(), "tetherx"}
		}},
		{"agent, node npx, sh -c, hook", "claude", []string{"node", "sh"}, nil, func(h *hookRun) []string {
			return []string{standin(t, "claude"), "standin:agent",
				standin(t, "node"), "/usr/lib/node_modules/npm/bin/npx-cli.js", "standin:agent", "sh", "-c", h.hook() + "; true"}
		}},
		{"node agent without hint", "node", []string{"sh"}, nil, func(h *hookRun) []string {
			return []string{standin(t, "claude"), "standin:agent",
				standin(t, "node"), "/opt/gemini/cli.js", "standin:agent", "sh", "-c", h.hook() + "; true"}
		}},
		{"hinted agent above a node agent", "claude", []string{"node", "sh"}, []string{"STANDIN_EXPORT_PID=1"}, func(h *hookRun) []string {
			return []string{standin(t, "claude"), "standin:agent",
				standin(t, "node"), "/opt/gemini/cli.js", "standin:agent", "sh", "-c", h.hook() + "; true"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHookRun(t)
			start(t, h.env(tt.env...), tt.argv(h)...)
			h.waitReady()
			h.expectOwner(capture(t, h.pid(tt.agent)), tt.via...)
		})
	}
}

// TestResolveOwnerIgnoresForeignHint: a hint naming a live process that is
// not an ancestor is not trusted.
func TestResolveOwnerIgnoresForeignHint(t *testing.T) {
	other := start(t, nil, standin(t, "claude"), "standin:block")
	otherPID, _ := other.ready(t)
	h := newHookRun(t)
	start(t, h.env("CLAUDE_PID="+strconv.Itoa(otherPID)), standin(t, "claude"), "standin:agent",
		standin(t, "node"), "/opt/gemini/cli.js", "standin:agent", "sh", "-c", h.hook()+"; true")
	h.waitReady()
	h.expectOwner(capture(t, h.pid("node")), "sh")
}

// TestResolveOwnerRefusesRootHint: CLAUDE_PID=1 names init, an ancestor of
// every process, which no session root in the walk would let through: the
// hint is refused and the walk finds the agent.
func TestResolveOwnerRefusesRootHint(t *testing.T) {
	h := newHookRun(t)
	start(t, h.env("CLAUDE_PID=1"), standin(t, "claude"), "standin:agent", "sh", "-c", h.hook()+"; true")
	h.waitReady()
	h.expectOwner(capture(t, h.pid("claude")), "sh")
}

func TestResolveOwnerInteractiveShell(t *testing.T) {
	h := newHookRun(t)
	r := start(t, h.env("HOME="+h.dir), "bash", "--norc", "--noprofile", "-i")
	fmt.Fprintf(r.stdin, "%s\nexit\n", h.hook())
	h.waitReady()
	want := capture(t, r.cmd.Process.Pid)
	want.Interactive = true
	h.expectOwner(want)
}

// TestResolveOwnerAgentKilled: the agent dies before the hook walks. The
// hook is reparented to the nearest subreaper — here a stand-in named
// systemd, as on a desktop session — and must not report the dead agent.
func TestResolveOwnerAgentKilled(t *testing.T) {
	h := newHookRun(t)
	start(t, h.env(), standin(t, "systemd"), "standin:reaper",
		standin(t, "claude"), "standin:agent", "sh", "-c", h.hook()+"; true")
	h.waitReady()
	agent := capture(t, h.pid("claude"))
	if err := syscall.Kill(agent.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the killed agent to be reaped", func() bool { return Check(agent).Liveness == Dead })

	res := h.result()
	if res.Owner != nil || !res.NoOwner || res.Broken {
		t.Fatalf("after the agent died: %+v; want ErrNoOwner", res)
	}
	if !strings.Contains(res.Error, "systemd") {
		t.Errorf("error %q does not name the session root", res.Error)
	}
}

// chainForBench starts claude → sh -c → a sleeping stand-in and returns the
// sh PID, from which ResolveOwner finds claude.
func chainForBench(t testing.TB, env ...string) (from int, agent int) {
	dir := t.TempDir()
	r := start(t, append(env, "STANDIN_PIDDIR="+dir), standin(t, "claude"), "standin:agent",
		"sh", "-c", standin(t, "codex")+" standin:block; true")
	_, from = r.ready(t)
	b, err := os.ReadFile(filepath.Join(dir, "claude.pid"))
	if err != nil {
		t.Fatal(err)
	}
	agent, err = strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return from, agent
}

func TestResolveOwnerFrom(t *testing.T) {
	from, agentPID := chainForBench(t)
	want := capture(t, agentPID)
	for _, hint := range []int{0, agentPID} {
		got, err := ResolveOwner(Hints{From: from, AgentPID: hint, Self: "/usr/local/bin/tether-hook"})
		if err != nil || got != want {
			t.Errorf("hint %d: ResolveOwner = %+v, %v; want %+v", hint, got, err, want)
		}
	}

	cmd := exec.Command(standin(t, "codex"), "standin:block")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if got, err := ResolveOwner(Hints{From: cmd.Process.Pid}); !errors.Is(err, ErrChainBroken) {
		t.Errorf("from a vanished pid: %+v, %v; want ErrChainBroken", got, err)
	}
}

func BenchmarkCapture(b *testing.B) {
	pid := os.Getpid()
	for b.Loop() {
		if _, err := Capture(pid); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	id, err := Self()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if v := Check(id); v.Liveness != Alive {
			b.Fatal(v)
		}
	}
}

func BenchmarkResolveOwner(b *testing.B) {
	from, agent := chainForBench(b)
	for _, bc := range []struct {
		name string
		hint int
	}{{"walk", 0}, {"hint", agent}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if id, err := ResolveOwner(Hints{From: from, AgentPID: bc.hint, Self: "tether-hook"}); err != nil || id.PID != agent {
					b.Fatal(id, err)
				}
			}
		})
	}
}
