package proclive

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func TestSelfIsAlive(t *testing.T) {
	id, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	pidns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	want := Identity{OS: "linux", PID: os.Getpid(), Boot: strings.TrimSpace(string(boot)), Host: host, PIDNS: pidns, Name: "proclive.test"}
	got := id
	got.Start = 0
	if got != want || id.Start == 0 {
		t.Errorf("Self() = %+v, want %+v with a start time", id, want)
	}
	if v := Check(id); v.Liveness != Alive {
		t.Errorf("Check(self) = %+v", v)
	}
}

func TestChildAliveThenZombieThenReaped(t *testing.T) {
	cmd := exec.Command(standin(t, "codex"), "standin:block")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	id, err := Capture(pid)
	if err != nil {
		t.Fatal(err)
	}
	if id.Name != "codex" || id.PID != pid {
		t.Errorf("Capture(child) = %+v", id)
	}
	if v := Check(id); v.Liveness != Alive {
		t.Fatalf("running child: %+v", v)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// While SIGKILL takes the threads down one by one, the leader already
	// shows Z with live threads beside it (Alive, rightly): wait for the
	// last one.
	eventually(t, "the killed child to become a zombie", func() bool {
		st, _ := stat(t, pid)
		return st.state == 'Z' && st.threads <= 1
	})
	// Not reaped: the PID still answers signals, yet the program is over.
	if err := unix.Kill(pid, 0); err != nil {
		t.Fatalf("kill(zombie, 0) = %v, want success", err)
	}
	if v := Check(id); v.Liveness != Dead || !strings.Contains(v.Reason, "zombie") {
		t.Errorf("zombie child: %+v", v)
	}
	if _, err := Capture(pid); err == nil {
		t.Error("Capture(zombie) succeeded")
	}

	cmd.Wait()
	if v := Check(id); v.Liveness != Dead || !strings.Contains(v.Reason, "no longer exists") {
		t.Errorf("reaped child: %+v", v)
	}
	if _, err := Capture(pid); err == nil {
		t.Error("Capture(reaped pid) succeeded")
	}
}

// TestRecordedElsewhere checks real observations against records that differ
// in one respect each, as DESIGN.md lays down.
func TestRecordedElsewhere(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	// A PID nothing runs under: a reaped child's.
	cmd := exec.Command(standin(t, "codex"), "standin:block")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	gone, err := Capture(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()

	tests := []struct {
		name   string
		id     Identity
		change func(*Identity)
		want   Liveness
	}{
		{"pid reused: start differs", self, func(id *Identity) { id.Start++ }, Dead},
		{"same host rebooted", self, func(id *Identity) { id.Boot = "00000000-0000-4000-8000-000000000000" }, Dead},
		{"other host", self, func(id *Identity) { id.Host = "elsewhere" }, Unknown},
		{"other host, other boot", self, func(id *Identity) { id.Host, id.Boot = "elsewhere", "x" }, Unknown},
		{"other host, pid gone here", gone, func(id *Identity) { id.Host = "elsewhere" }, Unknown},
		{"other pid namespace", self, func(id *Identity) { id.PIDNS = "pid:[1]" }, Unknown},
		{"other pid namespace, pid gone here", gone, func(id *Identity) { id.PIDNS = "pid:[1]" }, Unknown},
		{"other os", self, func(id *Identity) { id.OS = "darwin" }, Unknown},
		{"no boot id recorded", gone, func(id *Identity) { id.Boot = "" }, Unknown},
		{"name is display only", self, func(id *Identity) { id.Name = "something else" }, Alive},
		{"gone", gone, func(*Identity) {}, Dead},
		{"no pid", self, func(id *Identity) { id.PID = 0 }, Unknown},
		{"negative pid", self, func(id *Identity) { id.PID = -1 }, Unknown},
	}
	for _, tt := range tests {
		id := tt.id
		tt.change(&id)
		if v := Check(id); v.Liveness != tt.want {
			t.Errorf("%s: Check = %+v, want %v", tt.name, v, tt.want)
		}
	}
}

// TestRenamedChildStaysAlive: a process that renames itself to something
// that looks like stat syntax keeps its identity.
func TestRenamedChildStaysAlive(t *testing.T) {
	names := []string{"npm exec x", "a) R 1 2 3", ") Z 1 1", "((((", "))))))", "new\nline", "",
		"héllo wörld ✓", "\xff\xfe\x80 bad", "2.1.97", "x) S 1 1 1 1 1 1 1 1 1 1 1 1"}
	for _, name := range names {
		t.Run(strconv.Quote(name), func(t *testing.T) {
			r := start(t, nil, standin(t, "node"), "standin:rename", name)
			if l := r.line(t); l != "ready" {
				t.Fatalf("got %q", l)
			}
			pid := r.cmd.Process.Pid
			before, err := Capture(pid)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(r.stdin, "go")
			if l := r.line(t); l != "renamed" {
				t.Fatalf("got %q", l)
			}
			after, err := Capture(pid)
			if err != nil {
				t.Fatal(err)
			}
			comm := name[:min(len(name), 15)] // TASK_COMM_LEN - 1
			if after.Name != comm || before.Name != "node" {
				t.Errorf("names %q then %q, want node then %q", before.Name, after.Name, comm)
			}
			if after.Start != before.Start || after.PID != pid {
				t.Errorf("identity moved with the rename: %+v then %+v", before, after)
			}
			for _, id := range []Identity{before, after} {
				if v := Check(id); v.Liveness != Alive {
					t.Errorf("Check(%q) = %+v", id.Name, v)
				}
			}
		})
	}
}

func TestZombieLeaderWithLiveThreadIsAlive(t *testing.T) {
	r := start(t, nil, standin(t, "claude"), "standin:zombie-leader")
	pid, _ := r.ready(t)
	eventually(t, "the leader thread to exit", func() bool {
		st, _ := stat(t, pid)
		return st.state == 'Z'
	})
	if st, _ := stat(t, pid); st.threads < 2 {
		t.Fatalf("zombie leader has %d threads, want a live one besides it", st.threads)
	}
	id, err := Capture(pid)
	if err != nil {
		t.Fatalf("Capture(zombie leader): %v", err)
	}
	if v := Check(id); v.Liveness != Alive {
		t.Errorf("zombie leader with a live thread: %+v", v)
	}

	syscall.Kill(pid, syscall.SIGKILL)
	eventually(t, "the whole thread group to exit", func() bool {
		st, ok := stat(t, pid)
		return ok && st.threads <= 1
	})
	if v := Check(id); v.Liveness != Dead {
		t.Errorf("killed thread group: %+v", v)
	}
}

func TestCaptureRefusesThreadID(t *testing.T) {
	r := start(t, nil, standin(t, "claude"), "standin:block")
	pid, _ := r.ready(t)
	var tid int
	eventually(t, "a second thread", func() bool {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			if n, _ := strconv.Atoi(task.Name()); n != pid {
				tid = n
				return true
			}
		}
		return false
	})
	if id, err := Capture(tid); err == nil || !strings.Contains(err.Error(), "thread of process") {
		t.Errorf("Capture(thread %d) = %+v, %v; want a refusal", tid, id, err)
	}
	if _, err := Capture(pid); err != nil {
		t.Errorf("Capture(leader): %v", err)
	}
	// A walk started at a thread ID would otherwise own it as "claude".
	if id, err := ResolveOwner(Hints{From: tid, Self: "tether-hook"}); err == nil || !strings.Contains(err.Error(), "thread of process") {
		t.Errorf("ResolveOwner(from thread %d) = %+v, %v; want a refusal", tid, id, err)
	}
}

// TestTimeNamespace captures this process from inside a time namespace
// whose boot time is shifted by 1000 s: stat field 22 reads differently
// there, the fingerprint must not.
func TestTimeNamespace(t *testing.T) {
	needTools(t, "unshare")
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("unshare", "--time", "--boottime", "1000", "--fork", "--",
		standin(t, "claude"), "standin:capture", strconv.Itoa(os.Getpid())).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && strings.Contains(string(exit.Stderr), "unshare failed") {
		t.Skipf("no time namespaces here: %s", exit.Stderr)
	}
	if err != nil {
		t.Fatalf("unshare: %v", err)
	}
	var got struct {
		ID       Identity `json:"id"`
		RawStart string   `json:"raw_start"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if raw, _ := strconv.ParseUint(got.RawStart, 10, 64); raw != self.Start+1000*100 {
		t.Fatalf("inside the namespace field 22 reads %s, want %d shifted by 1000 s", got.RawStart, self.Start)
	}
	if got.ID != self {
		t.Errorf("captured inside the time namespace: %+v\nfrom outside: %+v", got.ID, self)
	}
}

// needTools skips a test that needs a util-linux tool the system lacks.
func needTools(t *testing.T, tools ...string) {
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s here", tool)
		}
	}
}

// TestHidepid checks from a /proc mounted with hidepid=2, as nobody: a
// root process is invisible there but answers kill(0) with EPERM, so it is
// Unknown; a PID nothing runs under is still Dead.
func TestHidepid(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting /proc needs root")
	}
	needTools(t, "unshare", "setpriv")
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(standin(t, "codex"), "standin:block")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	gone, err := Capture(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	selfJSON, _ := json.Marshal(self)
	goneJSON, _ := json.Marshal(gone)

	script := `mount -t proc -o hidepid=2 proc /proc && exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"`
	out, err := exec.Command("unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh",
		standin(t, "codex"), "standin:check", string(selfJSON), string(goneJSON)).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && (strings.Contains(string(exit.Stderr), "unshare failed") || strings.Contains(string(exit.Stderr), "mount")) {
		t.Skipf("cannot mount a private /proc here: %s", exit.Stderr)
	}
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var verdicts []struct{ Liveness, Reason string }
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var v struct{ Liveness, Reason string }
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		verdicts = append(verdicts, v)
	}
	if len(verdicts) != 2 {
		t.Fatalf("got %s", out)
	}
	if v := verdicts[0]; v.Liveness != "unknown" || !strings.Contains(v.Reason, "hidden") {
		t.Errorf("root process under hidepid, seen by nobody: %+v, want unknown (hidden)", v)
	}
	if v := verdicts[1]; v.Liveness != "dead" {
		t.Errorf("vanished process under hidepid: %+v, want dead", v)
	}
}

// TestArgs: a process's command line, read back as it was given, and an
// error for a process that has gone.
func TestArgs(t *testing.T) {
	args, err := Args(os.Getpid())
	if err != nil || !slices.Equal(args, os.Args) {
		t.Fatalf("Args(self) = %q, %v; want %q", args, err, os.Args)
	}
	cmd := exec.Command("/bin/sh", "-c", "sleep 30; :", "sh", "-p", "an argument with spaces")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	args, err = Args(cmd.Process.Pid)
	cmd.Process.Kill()
	cmd.Wait()
	if err != nil || !slices.Equal(args, cmd.Args) {
		t.Fatalf("Args(child) = %q, %v; want %q", args, err, cmd.Args)
	}
	if args, err := Args(cmd.Process.Pid); err == nil {
		t.Fatalf("Args of a reaped process = %q, want an error", args)
	}
}
