//go:build linux

// Command standin plays the processes of the proclive tests — agents,
// wrappers, a subreaper, the hook — under whatever name it is linked as
// (claude, codex, node, systemd, tether-hook), so that process names and
// argv look like the real thing.
//
// Its mode is the first argument of the form "standin:<mode>"; arguments
// before it are decoration (node's script path), arguments after it belong
// to the mode:
//
//	standin:agent CMD ARGS...  run CMD as a child and exit with its status;
//	                           writes $STANDIN_PIDDIR/<name>.pid, exports
//	                           CLAUDE_PID if $STANDIN_EXPORT_PID is set
//	standin:block              print "ready PID PPID", then sleep forever
//	standin:rename NAME        print "ready", wait for a line on stdin,
//	                           set the thread name to NAME, print "renamed"
//	standin:zombie-leader      keep a locked thread running, print "ready",
//	                           then end the main thread alone (SYS_EXIT)
//	standin:hook OUT           resolve the owner and write it as JSON to OUT;
//	                           with $HOOK_WAIT, first write OUT.ready and
//	                           wait for the file $HOOK_WAIT to exist
//	standin:reaper CMD ARGS... become a child subreaper, run CMD, reap every
//	                           orphan until none is left
//	standin:capture PID        print Capture(PID) as JSON and the raw stat
//	                           field 22 this process sees
//	standin:check JSON...      print Check of each identity as JSON lines
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tetherdev/tether/proclive"
)

// Keep main on the main thread: rename names the thread group leader, and
// zombie-leader ends exactly that thread.
func init() { runtime.LockOSThread() }

func main() {
	mode, args := "", []string(nil)
	for i, a := range os.Args[1:] {
		if m, ok := strings.CutPrefix(a, "standin:"); ok {
			mode, args = m, os.Args[i+2:]
			break
		}
	}
	var err error
	switch mode {
	case "agent":
		err = agent(args)
	case "block":
		fmt.Println("ready", os.Getpid(), os.Getppid())
		sleepForever()
	case "rename":
		err = rename(args)
	case "zombie-leader":
		zombieLeader()
	case "hook":
		err = hook(args)
	case "reaper":
		err = reaper(args)
	case "capture":
		err = capture(args)
	case "check":
		err = check(args)
	default:
		err = fmt.Errorf("no standin:<mode> in %q", os.Args)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(1)
	}
}

func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

func agent(args []string) error {
	if len(args) == 0 {
		return errors.New("agent: no command")
	}
	if os.Getenv("STANDIN_EXPORT_PID") != "" {
		os.Setenv("CLAUDE_PID", strconv.Itoa(os.Getpid()))
		os.Unsetenv("STANDIN_EXPORT_PID") // nested agents keep the outer one's
	}
	if dir := os.Getenv("STANDIN_PIDDIR"); dir != "" {
		name := filepath.Base(os.Args[0])
		if err := writeAtomic(filepath.Join(dir, name+".pid"), []byte(strconv.Itoa(os.Getpid()))); err != nil {
			return err
		}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	return err
}

func rename(args []string) error {
	if len(args) != 1 {
		return errors.New("rename: want one name")
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return err
	}
	name := append([]byte(args[0]), 0)
	if err := unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0); err != nil {
		return fmt.Errorf("prctl PR_SET_NAME: %w", err)
	}
	fmt.Println("renamed")
	sleepForever()
	return nil
}

func zombieLeader() {
	running := make(chan struct{})
	go func() {
		runtime.LockOSThread() // this goroutine's thread outlives the leader
		close(running)
		sleepForever()
	}()
	<-running
	fmt.Println("ready", os.Getpid(), os.Getppid())
	// exit(2), not exit_group(2): only the leader thread ends.
	syscall.Syscall(syscall.SYS_EXIT, 0, 0, 0)
}

// hookResult is what the hook stand-in reports.
type hookResult struct {
	Owner   *proclive.Identity `json:"owner,omitempty"`
	Error   string             `json:"error,omitempty"`
	NoOwner bool               `json:"no_owner,omitempty"`
	Broken  bool               `json:"broken,omitempty"`
	Daemon  bool               `json:"daemon,omitempty"` // under a shared daemon, client not found
	Via     []string           `json:"via"`              // names of the ancestors below the owner
}

func hook(args []string) error {
	if len(args) != 1 {
		return errors.New("hook: want the output path")
	}
	out := args[0]
	if wait := os.Getenv("HOOK_WAIT"); wait != "" {
		if err := writeAtomic(out+".ready", nil); err != nil {
			return err
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Millisecond) {
			if _, err := os.Stat(wait); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return errors.New("hook: nobody said go")
			}
		}
	}
	hint, _ := strconv.Atoi(os.Getenv("CLAUDE_PID")) // as the real hook reads it
	var res hookResult
	id, err := proclive.ResolveOwner(proclive.Hints{AgentPID: hint, Dir: os.Getenv("HOOK_DIR"), Session: os.Getenv("HOOK_SESSION")})
	if err != nil {
		res.Error = err.Error()
		res.NoOwner = errors.Is(err, proclive.ErrNoOwner)
		res.Daemon = errors.Is(err, proclive.ErrSharedDaemon)
		res.Broken = errors.Is(err, proclive.ErrChainBroken)
	} else {
		res.Owner = &id
		if res.Via, err = ancestors(os.Getppid(), id.PID); err != nil {
			return err
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return writeAtomic(out, b)
}

// ancestors names the processes from pid up to, not including, owner, read
// independently of proclive.
func ancestors(pid, owner int) ([]string, error) {
	var names []string
	for pid != owner && pid > 1 && len(names) < 32 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return nil, err
		}
		s := string(b)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		names = append(names, s[open+1:closing])
		if pid, err = strconv.Atoi(strings.Fields(s[closing+1:])[1]); err != nil {
			return nil, err
		}
	}
	return names, nil
}

func reaper(args []string) error {
	if len(args) == 0 {
		return errors.New("reaper: no command")
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl PR_SET_CHILD_SUBREAPER: %w", err)
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		return err
	}
	if _, err := os.StartProcess(path, args, &os.ProcAttr{Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}}); err != nil {
		return err
	}
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.ECHILD):
			return nil
		case err != nil && !errors.Is(err, syscall.EINTR):
			return err
		}
	}
}

func capture(args []string) error {
	if len(args) != 1 {
		return errors.New("capture: want a pid")
	}
	pid, err := strconv.Atoi(args[0])
	if err != nil {
		return err
	}
	id, err := proclive.Capture(pid)
	if err != nil {
		return err
	}
	stat, err := os.ReadFile("/proc/" + args[0] + "/stat")
	if err != nil {
		return err
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return json.NewEncoder(os.Stdout).Encode(struct {
		ID       proclive.Identity `json:"id"`
		RawStart string            `json:"raw_start"`
	}{id, fields[19]})
}

func check(args []string) error {
	enc := json.NewEncoder(os.Stdout)
	for _, a := range args {
		var id proclive.Identity
		if err := json.Unmarshal([]byte(a), &id); err != nil {
			return err
		}
		v := proclive.Check(id)
		if err := enc.Encode(struct {
			Liveness string `json:"liveness"`
			Reason   string `json:"reason"`
		}{v.Liveness.String(), v.Reason}); err != nil {
			return err
		}
	}
	return nil
}

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
