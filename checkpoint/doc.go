// Package checkpoint condenses the turns of agent sessions into
// checkpoints, under refs of tether's own (refs/tether/..., see refs.go),
// and links them to commits through git notes (refs/notes/tether), writing
// git objects with go-git plumbing and no git process; and shares them
// with other clones through a git remote (Push, Fetch, Merge), where the
// git CLI does the talking so the user's remotes and credentials apply.
//
// What it promises:
//
//   - Checkpoints are not a branch. What status, show and the notes need
//     (checkpoint.json, prompts.md) is on CheckpointsRef; the transcripts
//     are on refs of their own, one per month (of a checkpoint's first turn)
//     and clone (TranscriptRef), named in checkpoint.json. A clone fetches
//     the checkpoints and notes; a transcript when asked for, recent months'
//     with FetchOptions.Transcripts, older ones (archived generations) only
//     on demand. Everything reads back with plain git (git log
//     tether/checkpoints/v1, git show <ref>:<path>, git fsck --strict).
//   - An earlier tether's branch (LegacyBranch), and remote-tracking or
//     remote copies of it, are migrated once, losslessly (see migrate.go):
//     the checkpoints keep their paths, so the notes keep naming them, and
//     the old history, transcripts and all, moves to LegacyTranscripts.
//   - Nothing reaches a ref without passing redaction (package
//     redact, one Redactor per Repo): prompts, the transcript slice (redacted
//     whole, streamed through a temporary file in the store's directory,
//     before it is cut into chunks, so a secret across a chunk boundary is
//     still caught), checkpoint.json and prompts.md as a whole (so a secret
//     in a branch or path name is masked too) and commit messages.
//     checkpoint.json counts what each rule replaced ("redactions", also per
//     turn and for the transcript), never the secret. Redaction is
//     deterministic, so a retry still writes the same bytes.
//   - A session whose agent keeps no transcript file (state.Session.AgentDB:
//     OpenCode) gets, in place of a transcript slice, the messages of the
//     checkpoint's turns as the agent answers when asked (SetConversations:
//     `opencode export`), each turn known by its prompt's ID, redacted and
//     stored as a transcript is. The agent is asked before the checkpoints
//     lock is taken, within a bound; an agent that cannot answer leaves the
//     transcript unavailable, with the reason.
//   - Everything it writes is plain git: the refs, their trees and the
//     notes read back with the git CLI, and git fsck --strict is clean.
//   - Every turn record and transcript byte is stored once (a turn
//     condensed while running is finished by a "continued" turn in the next
//     checkpoint, which starts where the first slice stopped). A checkpoint's
//     ID is derived from the session ID, the incarnation of the session's
//     record (state.Session.Incarnation) and the turn-log offset it starts
//     at, so a retry after a crash rewrites the same path (replacing a
//     partial attempt) instead of adding a second checkpoint, and turn-log
//     offsets in the session state only move forward.
//   - A checkpoint ID is never reused for other content: a session ID that
//     comes back after `clean`, a quarantine or a lost state file, or in
//     another clone, comes with a new record and so a new incarnation.
//     Should two clones still hold different content under one ID (a store
//     copied by hand), merging keeps both and ReadVariants returns both.
//   - One Condense call writes at most one commit per ref (the checkpoints,
//     and the transcript refs of the months its checkpoints start in),
//     however many sessions it condenses, all its objects in one pack, and
//     records every session's progress in one grouped state write
//     (state.MutateEach); CondenseEnding records it in the caller's write
//     that ends the sessions (state.MutateEachThen). Tree updates rewrite
//     only the trees on the path to the new entries, so their cost does not
//     grow with the number of checkpoints. Transcripts move before the
//     checkpoints that name them.
//   - Objects and refs are durable before they are referenced: the objects
//     of one write go into one pack, which with its index is fsynced and
//     moved into objects/pack before a ref points at them (git gc --auto
//     folds the packs together as it does loose objects), and refs move with
//     git's own lock-file protocol (<ref>.lock, compare, rename), so they
//     interoperate with concurrent git commands and never end up
//     half-written.
//   - Condensing is serialized across processes by the store's
//     "checkpoints" lock (taken first, session locks inside it), so two
//     condensers never write the same turns. Every ref also moves only by
//     compare-and-swap, rebuilt on the new tip when another writer (tether,
//     git notes, a rebase copying notes) moved it first: no update is lost.
//   - Notes live in refs/notes/tether as "Tether-Checkpoint: <id>" lines,
//     merged into whatever note the commit already has, found at any fanout
//     depth, so git notes show finds them and git itself carries them
//     across amend and rebase when notes.rewriteRef names the ref.
//     A checkpoint a commit inherited from commits carrying the same
//     change (Inherit, package inherit) is named in a block of its own
//     under a "Tether-Via: <how>" line; a direct link wins over an
//     inherited one, and each checkpoint is named once (NoteLinks reads
//     them, TidyNote rewrites what git concatenated).
//   - Only the agent's own transcript is read: a regular file inside the
//     directory the hook recorded as where the agent keeps transcripts
//     (state.Session.TranscriptRoot), opened by agent.OpenTranscript, never
//     an arbitrary path a payload names, never a FIFO it would wait on. The
//     redacted slice is staged through the store's os.Root
//     (state.Store.StagingFile), so nothing planted in the store leads the
//     write elsewhere.
//   - A missing, refused or shortened transcript never blocks condensing: the
//     checkpoint is still written with the prompts and turn data and records
//     why the transcript is unavailable. Transcripts are streamed, never read
//     whole into memory, and large slices are split into several files. The
//     transcript's from/to are offsets in the agent's file; bytes and sha256
//     describe the stored, redacted slice.
//   - Sharing never forces and never loses a checkpoint, and costs what
//     changed, not the size of the history. Push pushes the checkpoints,
//     the notes, LegacyTranscripts and this clone's transcript refs without
//     --force; a transcript ref is written by one clone only, so it never
//     waits on another's; when the remote's checkpoints or notes moved, Push
//     fetches and merges those (never another clone's transcripts) and
//     pushes once more. The transcript refs go where PushOptions say:
//     along, to a remote of their own (TranscriptsRemote: the checkpoints'
//     remote then receives no transcript ref), or nowhere; Fetch and
//     FetchTranscripts read them from there. A remote still holding LegacyBranch has it migrated
//     and then deleted, only if nobody pushed to it since. Fetch keeps the
//     remote's refs in tracking refs (Tracking: refs/tether/remotes/<remote>/
//     and refs/notes/tether-remotes/<remote>) and merges them in. Merge
//     fast-forwards when it can, else writes a merge commit with both tips
//     as parents: trees merge three-way against the merge bases (in effect a
//     union, checkpoint IDs being unique; a checkpoint purged by hand on one
//     side stays purged), reusing unchanged subtrees by hash; a file with
//     different bytes on each side keeps ours in place and theirs beside it
//     (checkpoint.theirs-<hash>.json) and is reported as a Conflict; notes
//     changed on both sides merge line by line per commit, whatever the
//     fanout on either side.
//
// Layout, at <id[0:2]>/<id[2:]>/: on CheckpointsRef, checkpoint.json (the
// Checkpoint type) and prompts.md; on the transcript ref checkpoint.json
// names, transcript.jsonl followed by transcript.001.jsonl,
// transcript.002.jsonl, ... when the slice is split.
//
// CheckpointsRef rolls: its tip's tree holds the checkpoints written since
// the last roll (the commit's Tether-Recent trailer counts them) and, once
// it has rolled, an archive file naming the commits whose trees hold the
// older ones (whose trees may name older ones in turn). Once the tip holds
// rollAt checkpoints, the next condense starts a tree with only the new
// ones and an archive naming the old tip, its parent. Readers look an ID
// up in the tip, then along the archive chain; a merge of two rolled tips
// names both. The git that receives a push reads the whole tree of the
// pushed ref's old tip and none of its ancestors', so a push costs at most
// rollAt checkpoints' trees, whatever the history.
package checkpoint
