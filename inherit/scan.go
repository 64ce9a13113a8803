package inherit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
)

// scanned is what git says of one commit: its tree, its parents, its
// change file for file (changeID of its raw diff) and its patch-id.
type scanned struct {
	tree    string
	parents []string
	change  string // "" for an empty change, or a merge
	patchID string // "" likewise
}

// scan reads the commits with one git log, whose output (the commits'
// trees and parents, their raw diffs and their patches) is parsed here as
// it goes to one git patch-id --stable: two git processes for them all.
func (m *Matcher) scan(commits []string) (map[string]*scanned, error) {
	out := map[string]*scanned{}
	if len(commits) == 0 {
		return out, nil
	}
	log := m.git("log", "--no-walk=unsorted", "--stdin", "-p", "--raw", "--no-abbrev", "--no-renames", "--no-merges",
		"--no-color", "--no-ext-diff", "--no-textconv", "--format=commit %H %T %P")
	log.Stdin = strings.NewReader(strings.Join(commits, "\n") + "\n")
	pid := m.git("patch-id", "--stable")
	stdout, err := log.StdoutPipe()
	if err != nil {
		return nil, err
	}
	pidIn, err := pid.StdinPipe()
	if err != nil {
		return nil, err
	}
	var pidOut, logErr, pidErr bytes.Buffer
	pid.Stdout, pid.Stderr, log.Stderr = &pidOut, &pidErr, &logErr
	if err := pid.Start(); err != nil {
		return nil, fmt.Errorf("git patch-id: %w", err)
	}
	if err := log.Start(); err != nil {
		pidIn.Close()
		_ = pid.Wait()
		return nil, fmt.Errorf("git log: %w", err)
	}
	raw := map[string][]string{}
	var cur string
	r := bufio.NewReaderSize(io.TeeReader(stdout, pidIn), 64<<10)
	for {
		line, err := r.ReadString('\n')
		switch {
		case strings.HasPrefix(line, "commit "):
			f := strings.Fields(line)
			if len(f) >= 3 && validHex(f[1]) {
				cur = f[1]
				out[cur] = &scanned{tree: f[2], parents: f[3:]}
			}
		case strings.HasPrefix(line, ":") && cur != "":
			raw[cur] = append(raw[cur], strings.TrimRight(line, "\n"))
		}
		if err != nil {
			break
		}
	}
	pidIn.Close()
	lerr := log.Wait()
	perr := pid.Wait()
	if lerr != nil {
		return nil, fmt.Errorf("git log: %s", firstLine(logErr.String(), lerr))
	}
	if perr != nil {
		return nil, fmt.Errorf("git patch-id: %s", firstLine(pidErr.String(), perr))
	}
	for h, lines := range raw {
		out[h].change = changeID(lines)
	}
	sc := bufio.NewScanner(&pidOut)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && out[f[1]] != nil {
			out[f[1]].patchID = f[0]
		}
	}
	return out, nil
}

// rangeChanges reads the change of each tree pair ("from to"), file for
// file, with one git diff-tree.
func (m *Matcher) rangeChanges(pairs []string) (map[string]string, error) {
	out := map[string]string{}
	if len(pairs) == 0 {
		return out, nil
	}
	cmd := m.git("diff-tree", "--stdin", "-r", "--no-abbrev", "--no-renames")
	cmd.Stdin = strings.NewReader(strings.Join(pairs, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git diff-tree: %s", firstLine(stderr.String(), err))
	}
	raw := map[string][]string{}
	var cur string
	for line := range strings.Lines(stdout.String()) {
		line = strings.TrimRight(line, "\n")
		if strings.HasPrefix(line, ":") {
			raw[cur] = append(raw[cur], line)
		} else if line != "" {
			cur = line
		}
	}
	for _, p := range pairs {
		out[p] = changeID(raw[p])
	}
	return out, nil
}

// changeID names a change file for file from git's raw diff lines (every
// path with its mode and content before and after): two changes with the
// same name have the same diff. "" for no change.
func changeID(raw []string) string {
	if len(raw) == 0 {
		return ""
	}
	lines := slices.Clone(raw)
	slices.Sort(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:20])
}
