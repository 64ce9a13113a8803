package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"unicode"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tetherdev/tether/state"
)

// Sharing runs the git CLI: it is the one part of this package that talks
// to remotes, and git is what knows the user's remotes, transports,
// credentials and proxies.

// TrackingRefs names the refs Fetch keeps a remote's checkpoints branch and
// notes in: refs/remotes/<remote>/tether/checkpoints/v1 (where git's
// default fetch refspec would put that branch too) and
// refs/notes/tether-remotes/<remote>. A remote given as a URL or path, or
// with a name that is not a plain ref component, is named url-<hash>.
func TrackingRefs(remote string) (branch, notes plumbing.ReferenceName) {
	name := trackingName(remote)
	return plumbing.ReferenceName("refs/remotes/" + name + "/" + strings.TrimPrefix(Branch, "refs/heads/")),
		plumbing.ReferenceName("refs/notes/tether-remotes/" + name)
}

// trackingName turns a remote (a configured name, a URL or a path) into
// one ref name component.
func trackingName(remote string) string {
	plain := remote != "" && !strings.HasPrefix(remote, ".") && !strings.HasPrefix(remote, "-") &&
		!strings.Contains(remote, "..") && !strings.HasSuffix(remote, ".lock")
	for _, c := range []byte(remote) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			plain = false
			break
		}
	}
	if plain {
		return remote
	}
	sum := sha256.Sum256([]byte(remote))
	return "url-" + hex.EncodeToString(sum[:8])
}

// FetchResult is what Fetch did.
type FetchResult struct {
	Remote string `json:"remote"`
	// Empty: the remote has neither the branch nor the notes.
	Empty bool `json:"empty,omitempty"`
	MergeResult
}

// Fetch fetches the remote's checkpoints branch and notes into their
// tracking refs (TrackingRefs) and merges them into ours (Merge). A remote
// without them is not an error: the result is Empty.
func (r *Repo) Fetch(st *state.Store, remote string) (FetchResult, error) {
	res := FetchResult{Remote: remote, MergeResult: MergeResult{Branch: Absent, Notes: Absent}}
	out, err := r.git("ls-remote", "--", remote, Branch, NotesRef)
	if err != nil {
		return res, fmt.Errorf("fetch checkpoints from %s: %w", remote, err)
	}
	advertised := map[string]bool{}
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) == 2 {
			advertised[f[1]] = true
		}
	}
	trackBranch, trackNotes := TrackingRefs(remote)
	var specs []string
	for _, p := range [][2]string{{Branch, trackBranch.String()}, {NotesRef, trackNotes.String()}} {
		if advertised[p[0]] {
			specs = append(specs, "+"+p[0]+":"+p[1])
		}
	}
	if len(specs) == 0 {
		res.Empty = true
		return res, nil
	}
	args := append([]string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--", remote}, specs...)
	if _, err := r.git(args...); err != nil {
		return res, fmt.Errorf("fetch checkpoints from %s: %w", remote, err)
	}
	var theirs [2]plumbing.Hash
	for i, p := range [][2]string{{Branch, trackBranch.String()}, {NotesRef, trackNotes.String()}} {
		if !advertised[p[0]] {
			continue // a tracking ref left from an earlier fetch is stale
		}
		if theirs[i], err = r.readRef(plumbing.ReferenceName(p[1])); err != nil {
			return res, fmt.Errorf("fetch checkpoints from %s: %w", remote, err)
		}
	}
	m, err := r.Merge(st, theirs[0], theirs[1])
	res.MergeResult = m
	if err != nil {
		return res, fmt.Errorf("fetch checkpoints from %s: %w", remote, err)
	}
	return res, nil
}

// PushResult is what Push did.
type PushResult struct {
	Remote string `json:"remote"`
	// Nothing: there is no checkpoints branch to push yet.
	Nothing bool `json:"nothing,omitempty"`
	// Refs is the status git reported for each ref, from the last attempt.
	Refs []PushStatus `json:"refs,omitempty"`
	// Merge is set when the remote had moved: what fetching and merging it
	// did before the second attempt.
	Merge *MergeResult `json:"merge,omitempty"`
}

// ErrPushRejected reports a push the remote refused for a reason fetching
// and merging cannot fix (a server hook, a protected ref), or refused
// again after a merge.
var ErrPushRejected = errors.New("push rejected")

// Push pushes the checkpoints branch and the notes to the remote, never
// forcing. When the remote moved (another clone pushed first), it fetches,
// merges and pushes once more. The user's pre-push hooks are not run
// (--no-verify): Push is itself run from one, and the checkpoints are not
// the code those hooks check.
func (r *Repo) Push(st *state.Store, remote string) (PushResult, error) {
	res := PushResult{Remote: remote}
	if err := r.refresh(); err != nil {
		return res, fmt.Errorf("push checkpoints to %s: %w", remote, err)
	}
	var specs []string
	for _, name := range []plumbing.ReferenceName{Branch, NotesRef} {
		tip, err := r.readRef(name)
		if err != nil {
			return res, fmt.Errorf("push checkpoints to %s: %w", remote, err)
		}
		if !tip.IsZero() {
			specs = append(specs, name.String()+":"+name.String())
		}
	}
	if len(specs) == 0 {
		res.Nothing = true
		return res, nil
	}
	for attempt := 0; ; attempt++ {
		statuses, err := r.push(remote, specs)
		res.Refs = statuses
		if err != nil {
			return res, fmt.Errorf("push checkpoints to %s: %w", remote, err)
		}
		var refused []string
		moved := false
		for _, s := range statuses {
			switch {
			case s.Flag != '!':
			case s.RemoteMoved() && attempt == 0:
				moved = true
			default:
				refused = append(refused, s.String())
			}
		}
		if len(refused) > 0 {
			return res, fmt.Errorf("push checkpoints to %s: %w: %s", remote, ErrPushRejected, strings.Join(refused, "; "))
		}
		if !moved {
			return res, nil
		}
		fr, err := r.Fetch(st, remote)
		res.Merge = &fr.MergeResult
		if err != nil {
			return res, fmt.Errorf("push checkpoints to %s: the remote moved: %w", remote, err)
		}
	}
}

// push runs git push --porcelain and returns the status of each ref. A
// refused ref is not an error here; a push that reports no status (no such
// remote, network failure) is.
func (r *Repo) push(remote string, specs []string) ([]PushStatus, error) {
	args := append([]string{"push", "--porcelain", "--no-verify", "--", remote}, specs...)
	cmd := r.gitCmd(args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	statuses, err := ParsePushPorcelain(stdout.String())
	if err != nil {
		return nil, fmt.Errorf("git push: %w", err)
	}
	if len(statuses) < len(specs) {
		if runErr == nil {
			runErr = errors.New("no status for some refs")
		}
		return statuses, &GitError{Command: "push", Err: runErr, Stderr: stderr.String()}
	}
	return statuses, nil
}

// git runs git on this repository and returns its stdout.
func (r *Repo) git(args ...string) (string, error) {
	cmd := r.gitCmd(args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", &GitError{Command: args[0], Err: err, Stderr: stderr.String()}
	}
	return stdout.String(), nil
}

// GitError is a git command of Push or Fetch that failed. Its message is
// one line, the command and the line of git's that says what went wrong;
// Stderr keeps all git said (hints, the remote's messages) for the log, or
// for a person who asks.
type GitError struct {
	Command string // git's subcommand: push, fetch, ls-remote
	Err     error  // how it ended: *exec.ExitError, or what failed to start it
	Stderr  string
}

func (e *GitError) Error() string {
	msg := "git " + e.Command + ": " + e.Err.Error()
	if line := gitMessage(e.Stderr); line != "" {
		msg += ": " + line
	}
	return msg
}

func (e *GitError) Unwrap() error { return e.Err }

// gitMessage is the line of git's stderr that says what went wrong: its
// first "fatal:" or "error:" line, else its first line; control characters
// (a remote's message may carry any) become spaces.
func gitMessage(stderr string) string {
	first := ""
	for line := range strings.Lines(stderr) {
		line = strings.TrimSpace(line)
		if first == "" {
			first = line
		}
		if strings.HasPrefix(line, "fatal:") || strings.HasPrefix(line, "error:") {
			first = line
			break
		}
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, first)
}

// gitCmd prepares git on the common dir, where the remotes are configured,
// with no input: when run from a pre-push hook, stdin holds git's ref list
// for the hook, not for us.
func (r *Repo) gitCmd(args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"--git-dir=" + r.dir}, args...)...)
	cmd.Env = append(os.Environ(), r.env...)
	return cmd
}

// PushStatus is one ref line of git push --porcelain:
// "<flag>\t<from>:<to>\t<summary> (<reason>)".
type PushStatus struct {
	// Flag: ' ' fast-forward, '+' forced, '-' deleted, '*' new, '!'
	// rejected, '=' up to date.
	Flag    byte   `json:"-"`
	From    string `json:"from"`
	To      string `json:"to"`
	Summary string `json:"summary"`          // "[up to date]", "[rejected]", "1a2b..3c4d", ...
	Reason  string `json:"reason,omitempty"` // "fetch first", "non-fast-forward", a server's message
}

// RemoteMoved reports a rejection that fetching and merging fixes: the
// remote ref has commits ours lacks.
func (s PushStatus) RemoteMoved() bool {
	return s.Flag == '!' && s.Summary == "[rejected]" && (s.Reason == "fetch first" || s.Reason == "non-fast-forward")
}

func (s PushStatus) String() string {
	text := s.To + " " + s.Summary
	if s.Reason != "" {
		text += " (" + s.Reason + ")"
	}
	return text
}

// ParsePushPorcelain parses the output of git push --porcelain: a "To
// <url>" line, a status line per ref, and "Done". Other lines (none are
// expected on stdout) are skipped; a malformed status line is an error.
func ParsePushPorcelain(out string) ([]PushStatus, error) {
	var statuses []PushStatus
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\r\n")
		if len(line) < 2 || line[1] != '\t' || strings.HasPrefix(line, "To ") {
			continue
		}
		if !strings.ContainsRune(" +-*!=", rune(line[0])) {
			return nil, fmt.Errorf("push status %q: unknown flag %q", line, line[0])
		}
		refs, summary, ok := strings.Cut(line[2:], "\t")
		if !ok {
			return nil, fmt.Errorf("push status %q: no summary", line)
		}
		from, to, ok := strings.Cut(refs, ":")
		if !ok || to == "" {
			return nil, fmt.Errorf("push status %q: want <from>:<to>", line)
		}
		s := PushStatus{Flag: line[0], From: from, To: to, Summary: summary}
		if i := strings.Index(summary, " ("); i >= 0 && strings.HasSuffix(summary, ")") {
			s.Summary, s.Reason = summary[:i], summary[i+2:len(summary)-1]
		}
		statuses = append(statuses, s)
	}
	return statuses, nil
}
