package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// parseCmdline splits /proc/<pid>/cmdline: arguments end in NUL bytes.
func parseCmdline(b []byte) []string {
	b = bytes.TrimSuffix(b, []byte{0})
	if len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\x00")
}

// flockHolders returns the PIDs holding a flock on the file with the given
// inode, from the text of /proc/locks:
//
//	1: FLOCK  ADVISORY  WRITE 4242 08:01:1234567 0 EOF
//
// A waiter's line has "->" after the number; it holds nothing.
func flockHolders(procLocks []byte, inode uint64) []int {
	var pids []int
	want := strconv.FormatUint(inode, 10)
	for line := range bytes.Lines(procLocks) {
		f := strings.Fields(string(line))
		if len(f) < 6 || f[1] != "FLOCK" {
			continue
		}
		dev := f[5]
		if i := strings.LastIndexByte(dev, ':'); i < 0 || dev[i+1:] != want {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// treeFile is one entry of `git ls-tree -r -z`.
type treeFile struct {
	kind, hash, path string
}

// parseLsTree reads `git ls-tree -r -z` output: "MODE TYPE HASH\tPATH\0".
// Malformed entries are skipped.
func parseLsTree(out []byte) []treeFile {
	var files []treeFile
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 3 {
			continue
		}
		files = append(files, treeFile{kind: f[1], hash: f[2], path: string(path)})
	}
	return files
}

// noteCheckpoints returns the checkpoint IDs a tether note names on its
// "Tether-Checkpoint: <id>" lines.
func noteCheckpoints(note string) []string {
	var ids []string
	for line := range strings.Lines(note) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "Tether-Checkpoint:")
		if !ok {
			continue
		}
		if f := strings.Fields(rest); len(f) == 1 {
			ids = append(ids, f[0])
		}
	}
	return ids
}

// logEntry is one line of tether.log that matters here.
type logEntry struct {
	Level   string `json:"level"`
	Msg     string `json:"msg"`
	Session string `json:"session"`
	Err     string `json:"err"`
}

// parseLogLine decodes a tether.log line; ok is false for a line that is
// not JSON (torn, or not ours).
func parseLogLine(line []byte) (logEntry, bool) {
	var e logEntry
	if json.Unmarshal(line, &e) != nil || e.Level == "" {
		return logEntry{}, false
	}
	return e, true
}

// text is the entry as one line: message and error.
func (e logEntry) text() string {
	if e.Err == "" {
		return e.Msg
	}
	return e.Msg + ": " + e.Err
}

// shape replaces the digits of a message so that messages differing only
// in PIDs, offsets or times are counted together.
func shape(msg string) string {
	var b strings.Builder
	digits := false
	for _, c := range msg {
		if c >= '0' && c <= '9' {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(c)
	}
	return b.String()
}

// statusFields are the fields DESIGN.md promises for each session of
// `status --json`.
var statusFields = []string{
	"id", "agent", "phase", "liveness", "liveness_reason", "turns", "started_at",
	"last_activity_at", "worktree", "branch", "last_prompt", "pending_turns",
	"end_reason", "interrupted", "resumable", "checkpoints",
}

// statusRow is what the driver reads of one session in `status --json`.
type statusRow struct {
	phase, liveness string
}

// parseStatus checks a `status --json` answer against the contract and
// returns its sessions by ID.
func parseStatus(out []byte) (map[string]statusRow, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	lists := map[string][]json.RawMessage{}
	for _, key := range []string{"sessions", "finalized", "warnings"} {
		var l []json.RawMessage
		if err := json.Unmarshal(doc[key], &l); err != nil || l == nil {
			return nil, fmt.Errorf("%q is not a list", key)
		}
		lists[key] = l
	}
	rows := map[string]statusRow{}
	for i, raw := range lists["sessions"] {
		var s map[string]json.RawMessage
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("session %d: %w", i, err)
		}
		for _, f := range statusFields {
			if _, ok := s[f]; !ok {
				return nil, fmt.Errorf("session %d has no %q", i, f)
			}
		}
		var v struct {
			ID       string `json:"id"`
			Phase    string `json:"phase"`
			Liveness string `json:"liveness"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("session %d: %w", i, err)
		}
		switch {
		case v.ID == "":
			return nil, fmt.Errorf("session %d has an empty id", i)
		case v.Phase != "idle" && v.Phase != "active" && v.Phase != "ended":
			return nil, fmt.Errorf("session %s: phase %q", v.ID, v.Phase)
		case v.Liveness != "alive" && v.Liveness != "dead" && v.Liveness != "unknown":
			return nil, fmt.Errorf("session %s: liveness %q", v.ID, v.Liveness)
		}
		if _, dup := rows[v.ID]; dup {
			return nil, fmt.Errorf("session %s listed twice", v.ID)
		}
		rows[v.ID] = statusRow{phase: v.Phase, liveness: v.Liveness}
	}
	return rows, nil
}

// hookFailureSession returns the session a "hook failed" log line is
// about: its error reads "record EVENT for session ID: ...".
func hookFailureSession(err string) string {
	_, rest, ok := strings.Cut(err, "session ")
	if !ok {
		return ""
	}
	end := strings.IndexFunc(rest, func(c rune) bool {
		return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-')
	})
	if end < 0 {
		end = len(rest)
	}
	return rest[:end]
}

// catFileBatch splits the output of `git cat-file --batch`:
// "HASH TYPE SIZE\n" then SIZE bytes and "\n", or "NAME missing\n".
func catFileBatch(out []byte) (map[string][]byte, error) {
	objs := map[string][]byte{}
	for len(out) > 0 {
		header, rest, ok := bytes.Cut(out, []byte{'\n'})
		if !ok {
			return nil, fmt.Errorf("cat-file: truncated header %q", header)
		}
		f := strings.Fields(string(header))
		if len(f) == 2 && f[1] == "missing" {
			out = rest
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("cat-file: bad header %q", header)
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || size < 0 || size+1 > len(rest) || rest[size] != '\n' {
			return nil, fmt.Errorf("cat-file: bad size in %q", header)
		}
		objs[f[0]] = rest[:size]
		out = rest[size+1:]
	}
	return objs, nil
}
