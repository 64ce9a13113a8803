package checkpoint

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// The refs tether writes. They live outside refs/heads, so no forge lists
// them as branches or offers them as a default branch, and a clone's
// default refspec (refs/heads/*) never fetches them; every ref under refs/
// keeps its objects reachable for git gc and git fsck, and
// `git log tether/checkpoints/v1` finds the first one (git tries refs/<name>
// before refs/heads/<name>). Push and Fetch name each ref in an explicit
// refspec.
const (
	// CheckpointsRef holds what status, show and the notes need of every
	// checkpoint, without transcripts: checkpoint.json and prompts.md at
	// <id[0:2]>/<id[2:]>/. A fresh clone fetches this and the notes only.
	CheckpointsRef = "refs/tether/checkpoints/v1"

	// NotesRef holds the notes linking commits to checkpoints.
	NotesRef = "refs/notes/tether"

	// transcriptsPrefix starts the transcript refs (TranscriptRef): one per
	// generation (the UTC month of a checkpoint's first turn) and clone,
	// each holding transcript.jsonl (and transcript.001.jsonl, ...) at
	// <id[0:2]>/<id[2:]>/. Old months are archived generations: a clone
	// fetches them only when asked (fetch --transcripts=all, or show
	// --transcript of a checkpoint of theirs).
	transcriptsPrefix = "refs/tether/transcripts/v1/"

	// LegacyTranscripts keeps the whole history of LegacyBranch once it is
	// migrated, transcripts included: the checkpoints that came from it find
	// their transcripts there.
	LegacyTranscripts = transcriptsPrefix + "legacy"

	// LegacyBranch is the branch earlier tethers kept checkpoints on,
	// transcripts and all; it is migrated once (see migrate).
	LegacyBranch = "refs/heads/tether/checkpoints/v1"

	// trackingPrefix starts the refs Fetch keeps a remote's copies in (see
	// Tracking): outside refs/remotes, where git fetch --prune would delete
	// them.
	trackingPrefix = "refs/tether/remotes/"
)

// generationLayout formats a generation: the UTC month.
const generationLayout = "2006-01"

// TranscriptRef names the ref holding the transcripts clone wrote for the
// checkpoints of generation gen.
func TranscriptRef(gen, clone string) plumbing.ReferenceName {
	return plumbing.ReferenceName(transcriptsPrefix + gen + "/" + clone)
}

// transcriptRefPattern matches the transcript refs of clones (not
// LegacyTranscripts): generation, then clone.
var transcriptRefPattern = regexp.MustCompile(`^refs/tether/transcripts/v1/([0-9]{4}-[0-9]{2})/([0-9a-f]{12})$`)

// parseTranscriptRef splits a clone's transcript ref.
func parseTranscriptRef(ref plumbing.ReferenceName) (gen, clone string, ok bool) {
	m := transcriptRefPattern.FindStringSubmatch(ref.String())
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// generation is the generation of a checkpoint: the UTC month its first
// turn started (or ended, or its session started). It depends on nothing
// but what the checkpoint records, so a retry picks the same.
func (c *Checkpoint) generation() string {
	var at time.Time
	if len(c.Turns) > 0 {
		at = c.Turns[0].StartedAt
		if at.IsZero() {
			at = c.Turns[0].EndedAt
		}
	}
	if at.IsZero() {
		at = c.StartedAt
	}
	return at.UTC().Format(generationLayout)
}

// Transcripts selects transcript refs, for Fetch.
type Transcripts func(ref plumbing.ReferenceName) bool

// RecentTranscripts selects the generations of the current month and the
// one before (by now): what a clone fetches with fetch --transcripts. The
// older ones are archived.
func RecentTranscripts(now time.Time) Transcripts {
	this := now.UTC().Format(generationLayout)
	last := now.UTC().AddDate(0, 0, -now.UTC().Day()).Format(generationLayout)
	return func(ref plumbing.ReferenceName) bool {
		gen, _, ok := parseTranscriptRef(ref)
		return ok && (gen == this || gen == last)
	}
}

// Generation selects the transcript refs of one month ("2026-05").
func Generation(month string) (Transcripts, error) {
	if t, err := time.Parse(generationLayout, month); err != nil || t.Format(generationLayout) != month {
		return nil, fmt.Errorf("generation %q: not a month like 2026-05", month)
	}
	return func(ref plumbing.ReferenceName) bool {
		gen, _, ok := parseTranscriptRef(ref)
		return ok && gen == month
	}, nil
}

// AllTranscripts selects every transcript ref, archived ones and
// LegacyTranscripts included.
func AllTranscripts(ref plumbing.ReferenceName) bool {
	return isTranscriptRef(ref)
}

// TheseTranscripts selects the given refs.
func TheseTranscripts(refs ...plumbing.ReferenceName) Transcripts {
	return func(ref plumbing.ReferenceName) bool {
		for _, r := range refs {
			if r == ref {
				return true
			}
		}
		return false
	}
}

func isTranscriptRef(ref plumbing.ReferenceName) bool {
	_, _, ok := parseTranscriptRef(ref)
	return ok || ref == LegacyTranscripts
}

// Tracking names the ref Fetch keeps the remote's copy of ref in:
// refs/tether/remotes/<remote>/... for tether's refs (checkpoints/v1,
// transcripts/v1/...), refs/tether/remotes/<remote>/legacy-branch for the
// remote's LegacyBranch, and refs/notes/tether-remotes/<remote> for the
// notes (a notes ref, so git notes --ref can read it). A remote given as a
// URL or path, or with a name that is not a plain ref component, is named
// url-<hash>.
func Tracking(remote string, ref plumbing.ReferenceName) plumbing.ReferenceName {
	name := trackingName(remote)
	switch {
	case ref == NotesRef:
		return plumbing.ReferenceName("refs/notes/tether-remotes/" + name)
	case ref == LegacyBranch:
		return plumbing.ReferenceName(trackingPrefix + name + "/legacy-branch")
	}
	return plumbing.ReferenceName(trackingPrefix + name + "/" + strings.TrimPrefix(ref.String(), "refs/tether/"))
}
