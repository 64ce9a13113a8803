package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"unicode"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tetherdev/tether/state"
)

// Sharing runs the git CLI: it is the one part of this package that talks
// to remotes, and git is what knows the user's remotes, transports,
// credentials and proxies.

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

// advertised lists the remote's tether refs: refs/tether/*, the notes and
// LegacyBranch, with their commits. Only those refs travel: git ls-remote
// sends the patterns to servers that filter (protocol v2).
func (r *Repo) advertised(remote string) (map[plumbing.ReferenceName]plumbing.Hash, error) {
	out, err := r.git("ls-remote", "--", remote, "refs/tether/*", NotesRef, LegacyBranch)
	if err != nil {
		return nil, err
	}
	refs := map[plumbing.ReferenceName]plumbing.Hash{}
	for line := range strings.Lines(out) {
		h, name, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if !ok || !plumbing.IsHash(h) {
			continue
		}
		ref := plumbing.ReferenceName(name)
		if ref == CheckpointsRef || ref == NotesRef || ref == LegacyBranch || isTranscriptRef(ref) {
			refs[ref] = plumbing.NewHash(h)
		}
	}
	return refs, nil
}

// FetchOptions say what Fetch brings besides the checkpoints and notes.
type FetchOptions struct {
	// Transcripts selects the transcript refs to fetch; nil fetches none.
	Transcripts Transcripts
	// TranscriptsRemote is where the transcripts are, when not with the
	// checkpoints (git config tether.transcriptsRemote); "" for the same
	// remote.
	TranscriptsRemote string
}

// FetchResult is what Fetch did.
type FetchResult struct {
	Remote string `json:"remote"`
	// TranscriptsRemote is where the transcripts came from, when not
	// Remote.
	TranscriptsRemote string `json:"transcripts_remote,omitempty"`
	// Empty: the remote has nothing of tether's.
	Empty bool `json:"empty,omitempty"`
	MergeResult
}

// Fetch fetches the remote's checkpoints and notes, and the transcript
// refs opts select (from opts.TranscriptsRemote when set), into their
// tracking refs (Tracking) and merges them into ours (Merge). What a fresh
// clone fetches this way grows with the number of checkpoints, never with
// the size of their transcripts. A remote still holding LegacyBranch has
// it fetched and migrated too, as is a remote-tracking copy of it that a
// plain git fetch left here. A remote without anything of tether's is not
// an error: the result is Empty.
func (r *Repo) Fetch(st *state.Store, remote string, opts FetchOptions) (FetchResult, error) {
	res := FetchResult{Remote: remote, MergeResult: MergeResult{Checkpoints: Absent, Notes: Absent}}
	fail := func(err error) (FetchResult, error) {
		return res, fmt.Errorf("fetch checkpoints from %s: %w", remote, err)
	}
	elsewhere := opts.TranscriptsRemote != "" && opts.TranscriptsRemote != remote
	adv, err := r.advertised(remote)
	if err != nil {
		return fail(err)
	}
	tips, err := r.fetchRefs(remote, adv, func(ref plumbing.ReferenceName) bool {
		return !isTranscriptRef(ref) || !elsewhere && opts.Transcripts != nil && opts.Transcripts(ref)
	})
	if err != nil {
		return fail(err)
	}
	if elsewhere && opts.Transcripts != nil {
		res.TranscriptsRemote = opts.TranscriptsRemote
		their, err := r.fetchTranscripts(opts.TranscriptsRemote, opts.Transcripts)
		if err != nil {
			return fail(err)
		}
		tips.Transcripts = their
	}
	stale := plumbing.ReferenceName("refs/remotes/" + remote + legacyCopySuffix)
	staleTip := plumbing.ZeroHash
	if trackingName(remote) == remote {
		if staleTip, err = r.readRef(stale); err != nil {
			return fail(err)
		}
		if !staleTip.IsZero() {
			tips.Legacy = append(tips.Legacy, staleTip)
		}
	}
	if tips.none() {
		res.Empty = len(adv) == 0
		return res, nil
	}
	m, err := r.Merge(st, tips)
	res.MergeResult = m
	if err == nil && !staleTip.IsZero() {
		err = r.deleteRef(stale, staleTip)
	}
	if err != nil {
		return fail(err)
	}
	return res, nil
}

// FetchTranscripts fetches the transcript refs which selects from remote,
// and nothing else, and merges them into ours: what show --transcript
// needs of a remote that keeps them.
func (r *Repo) FetchTranscripts(st *state.Store, remote string, which Transcripts) (MergeResult, error) {
	fail := func(err error) (MergeResult, error) {
		return MergeResult{Checkpoints: Absent, Notes: Absent}, fmt.Errorf("fetch transcripts from %s: %w", remote, err)
	}
	their, err := r.fetchTranscripts(remote, which)
	if err != nil {
		return fail(err)
	}
	if len(their) == 0 {
		return MergeResult{Checkpoints: Absent, Notes: Absent}, nil
	}
	m, err := r.Merge(st, Tips{Transcripts: their})
	if err != nil {
		return fail(err)
	}
	return m, nil
}

// fetchTranscripts fetches the transcript refs which selects from remote
// into their tracking refs, and returns their tips.
func (r *Repo) fetchTranscripts(remote string, which Transcripts) (map[plumbing.ReferenceName]plumbing.Hash, error) {
	adv, err := r.advertised(remote)
	if err != nil {
		return nil, err
	}
	tips, err := r.fetchRefs(remote, adv, func(ref plumbing.ReferenceName) bool { return isTranscriptRef(ref) && which(ref) })
	return tips.Transcripts, err
}

// fetchRefs fetches the advertised refs that want selects into their
// tracking refs, and returns what those hold: what git fetched, which may
// be newer than what ls-remote said.
func (r *Repo) fetchRefs(remote string, adv map[plumbing.ReferenceName]plumbing.Hash, want func(plumbing.ReferenceName) bool) (Tips, error) {
	var tips Tips
	var wanted []plumbing.ReferenceName
	for ref := range adv {
		if want(ref) {
			wanted = append(wanted, ref)
		}
	}
	if len(wanted) == 0 {
		return tips, nil
	}
	slices.Sort(wanted)
	args := []string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--", remote}
	for _, ref := range wanted {
		args = append(args, "+"+ref.String()+":"+Tracking(remote, ref).String())
	}
	if _, err := r.git(args...); err != nil {
		return tips, err
	}
	for _, ref := range wanted {
		h, err := r.readRef(Tracking(remote, ref))
		if err != nil {
			return tips, err
		}
		switch {
		case ref == CheckpointsRef:
			tips.Checkpoints = h
		case ref == NotesRef:
			tips.Notes = h
		case ref == LegacyBranch:
			tips.Legacy = append(tips.Legacy, h)
		default:
			if tips.Transcripts == nil {
				tips.Transcripts = map[plumbing.ReferenceName]plumbing.Hash{}
			}
			tips.Transcripts[ref] = h
		}
	}
	return tips, nil
}

// PushResult is what Push did.
type PushResult struct {
	Remote string `json:"remote"`
	// Nothing: there are no checkpoints to push yet.
	Nothing bool `json:"nothing,omitempty"`
	// Refs is the status git reported for each ref, from the last attempt
	// (and the deletion of the remote's LegacyBranch, once migrated).
	Refs []PushStatus `json:"refs,omitempty"`
	// TranscriptsRemote received the transcript refs, when not Remote;
	// TranscriptRefs are their statuses.
	TranscriptsRemote string       `json:"transcripts_remote,omitempty"`
	TranscriptRefs    []PushStatus `json:"transcript_refs,omitempty"`
	// TranscriptsKept: the transcripts stayed in this clone (git config
	// tether.pushTranscripts false).
	TranscriptsKept bool `json:"transcripts_kept,omitempty"`
	// Merge is set when the remote had moved, or still held LegacyBranch:
	// what fetching and merging it did before pushing again.
	Merge *MergeResult `json:"merge,omitempty"`
}

// PushOptions say where the transcripts go.
type PushOptions struct {
	// TranscriptsRemote receives the transcript refs instead of the
	// checkpoints' remote, which then gets the checkpoints and notes only
	// (git config tether.transcriptsRemote); "" sends them along.
	TranscriptsRemote string
	// KeepTranscripts pushes no transcript ref anywhere (git config
	// tether.pushTranscripts false).
	KeepTranscripts bool
}

// ErrPushRejected reports a push the remote refused for a reason fetching
// and merging cannot fix (a server hook, a protected ref), or refused
// again after a merge.
var ErrPushRejected = errors.New("push rejected")

// Push pushes the checkpoints and the notes to the remote, and the
// transcripts this clone wrote with LegacyTranscripts where opts say
// (along, to another remote, or nowhere), never forcing. A transcript ref
// is written by one clone only, so pushing it never waits on anyone
// else's; the checkpoints and notes are shared: when the remote moved
// (another clone pushed first), Push fetches and merges them and pushes
// once more, never fetching other clones' transcripts. A remote still
// holding LegacyBranch has it fetched and migrated first, and deleted once
// everything it held is on the remote under the new refs (only if nobody
// moved it meanwhile). The user's pre-push hooks are not run (--no-verify):
// Push is itself run from one, and the checkpoints are not the code those
// hooks check.
func (r *Repo) Push(st *state.Store, remote string, opts PushOptions) (PushResult, error) {
	res := PushResult{Remote: remote, TranscriptsKept: opts.KeepTranscripts}
	fail := func(err error) (PushResult, error) {
		return res, fmt.Errorf("push checkpoints to %s: %w", remote, err)
	}
	adv, err := r.advertised(remote)
	if err != nil {
		return fail(err)
	}
	legacy := adv[LegacyBranch]
	if !legacy.IsZero() {
		fr, err := r.Fetch(st, remote, FetchOptions{})
		res.Merge = &fr.MergeResult
		if err != nil {
			return fail(err)
		}
	} else if err := r.Locked(st, func() error { return nil }); err != nil { // migrate what is local
		return fail(err)
	}
	specs, transcripts, err := r.pushSpecs(st)
	if err != nil {
		return fail(err)
	}
	if len(specs) == 0 {
		res.Nothing = true
		return res, nil
	}
	elsewhere := opts.TranscriptsRemote != "" && opts.TranscriptsRemote != remote
	if !opts.KeepTranscripts && !elsewhere {
		specs = append(specs, transcripts...)
	}
	if res.Refs, err = r.pushMerging(st, remote, specs, &res.Merge); err != nil {
		return res, fmt.Errorf("push checkpoints to %s: %w", remote, err)
	}
	if elsewhere && !opts.KeepTranscripts && len(transcripts) > 0 {
		res.TranscriptsRemote = opts.TranscriptsRemote
		if res.TranscriptRefs, err = r.pushMerging(st, opts.TranscriptsRemote, transcripts, &res.Merge); err != nil {
			return res, fmt.Errorf("push transcripts to %s: %w", opts.TranscriptsRemote, err)
		}
	}
	if legacy.IsZero() {
		return res, nil
	}
	statuses, err := r.pushArgs(remote, []string{"--force-with-lease=" + LegacyBranch + ":" + legacy.String()}, []string{":" + LegacyBranch})
	res.Refs = append(res.Refs, statuses...)
	if err != nil {
		return fail(fmt.Errorf("delete %s after migrating it: %w", LegacyBranch, err))
	}
	// A refusal (someone pushed to it since) is left for the next push:
	// what they added is migrated then.
	return res, nil
}

// pushMerging pushes specs to remote; when the remote refuses a ref
// because it moved, it fetches and merges that ref (recording what the
// merge did in *merge) and pushes once more. It returns the statuses of
// the last attempt.
func (r *Repo) pushMerging(st *state.Store, remote string, specs []string, merge **MergeResult) ([]PushStatus, error) {
	for attempt := 0; ; attempt++ {
		statuses, err := r.push(remote, specs)
		if err != nil {
			return statuses, err
		}
		var refused []string
		var moved, movedTranscripts []plumbing.ReferenceName
		for _, s := range statuses {
			switch {
			case s.Flag != '!':
			case s.RemoteMoved() && attempt == 0:
				if ref := plumbing.ReferenceName(s.To); isTranscriptRef(ref) {
					movedTranscripts = append(movedTranscripts, ref)
				} else {
					moved = append(moved, ref)
				}
			default:
				refused = append(refused, s.String())
			}
		}
		if len(refused) > 0 {
			return statuses, fmt.Errorf("%w: %s", ErrPushRejected, strings.Join(refused, "; "))
		}
		if len(moved)+len(movedTranscripts) == 0 {
			return statuses, nil
		}
		var fr MergeResult
		if len(moved) > 0 {
			var res FetchResult
			res, err = r.Fetch(st, remote, FetchOptions{Transcripts: TheseTranscripts(movedTranscripts...)})
			fr = res.MergeResult
		} else {
			fr, err = r.FetchTranscripts(st, remote, TheseTranscripts(movedTranscripts...))
		}
		*merge = &fr
		if err != nil {
			return statuses, fmt.Errorf("the remote moved: %w", err)
		}
	}
}

// pushSpecs lists the refspecs of what Push shares: CheckpointsRef and
// the notes, then apart LegacyTranscripts and the transcript refs of this
// clone.
func (r *Repo) pushSpecs(st *state.Store) (specs, transcripts []string, err error) {
	if err := r.refresh(); err != nil {
		return nil, nil, err
	}
	clone, err := st.CloneID()
	if err != nil {
		return nil, nil, err
	}
	refs := []plumbing.ReferenceName{CheckpointsRef, NotesRef, LegacyTranscripts}
	iter, err := r.st.IterReferences()
	if err != nil {
		return nil, nil, err
	}
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		if _, owner, ok := parseTranscriptRef(ref.Name()); ok && owner == clone {
			refs = append(refs, ref.Name())
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for _, ref := range refs {
		tip, err := r.readRef(ref)
		if err != nil {
			return nil, nil, err
		}
		switch spec := ref.String() + ":" + ref.String(); {
		case tip.IsZero():
		case isTranscriptRef(ref):
			transcripts = append(transcripts, spec)
		default:
			specs = append(specs, spec)
		}
	}
	return specs, transcripts, nil
}

// push runs git push --porcelain and returns the status of each ref. A
// refused ref is not an error here; a push that reports no status (no such
// remote, network failure) is.
func (r *Repo) push(remote string, specs []string) ([]PushStatus, error) {
	return r.pushArgs(remote, nil, specs)
}

// pushArgs is push with options for git push.
func (r *Repo) pushArgs(remote string, opts, specs []string) ([]PushStatus, error) {
	args := append(append([]string{"push", "--porcelain", "--no-verify"}, opts...), "--", remote)
	cmd := r.gitCmd(append(args, specs...)...)
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
