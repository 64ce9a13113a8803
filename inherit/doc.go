// Package inherit gives a commit that carries the same change as commits
// linked to checkpoints their links: a squash merge on GitHub, a rebase
// merge, a cherry-pick onto a release branch, a local merge --squash. Git
// carries notes across amend and rebase itself (notes.rewriteRef); nothing
// carries them to these.
//
// What it promises:
//
//   - Matching is by content, never by message. An arriving commit (not a
//     merge) inherits from a linked commit C when its `git patch-id
//     --stable` equals C's (a replay: "cherry-pick of C", "rebase of C");
//     and from the linked range B..C, B where C left the default branch,
//     when its tree equals C's or its change equals the combined change of
//     B..C file for file, the same content before and after at every path
//     ("squash of B..C"), taking the checkpoints of every linked commit in
//     the range. A revert, a partial squash, a commit with an equal message
//     and another change inherit nothing. Where GitHub is asked (Forge), a
//     merged pull request whose merge commit is the arriving one gives it
//     the links of its commits ("PR #N"), which settles a squash whose
//     content drifted in review.
//   - What matching needs of linked commits (tree, patch-id, range and its
//     change and checkpoints) is computed once, when the link is made or its
//     note arrives, and kept in an index in the store (<store>/links/index,
//     rewritten whole under the store's "links" lock, temp file and
//     rename), so matching costs what arrived, not what is linked: one
//     git log of the arriving commits (their trees, raw diffs and patches)
//     whose output goes on to one git patch-id, each looked up in maps.
//   - An inherited link is a note line like any other (checkpoint.Inherit):
//     the checkpoint lines, then "Tether-Via: <how>"; git notes show reads
//     it, and tether-sweep show prints how each came.
package inherit
