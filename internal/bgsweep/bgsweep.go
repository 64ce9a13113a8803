// Package bgsweep lets tests wait for the background sweeps that
// tether-hook launches, at a session start (self-heal) or from a commit
// that did not wait for its post-commit sweep, and for the captures it
// starts at turn boundaries: they are detached, so
// nothing else waits for them, and they write to the store of a test's
// scratch repository until they exit.
package bgsweep

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The log messages tether-hook writes, with the process's pid, when it
// launches a sweep, when a post-commit sweep goes on by itself, when it
// starts a capture of the worktree (tether-hook capture), and when it or a
// sweep starts a notification (tether-sweep notify).
var startedMsgs = []string{"self-heal: background sweep started", "post-commit: sweep goes on in the background", "capture started", "notify started"}

// Wait reads the tether log of the store at storeDir (<common>/tether) and
// waits, up to timeout in all, until every sweep it started has exited.
func Wait(storeDir string, timeout time.Duration) {
	data, err := os.ReadFile(filepath.Join(storeDir, "log", "tether.log"))
	if err != nil {
		return
	}
	deadline := time.Now().Add(timeout)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var l struct {
			Msg string `json:"msg"`
			PID int    `json:"pid"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || !slices.Contains(startedMsgs, l.Msg) || l.PID <= 0 {
			continue
		}
		for time.Now().Before(deadline) && running(l.PID) {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// running reports whether pid is a process that may still write: not gone,
// not a zombie. Where /proc is missing it reports false.
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !bytes.Contains(stat, []byte(") Z "))
}
