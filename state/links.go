package state

// SquashPending is the file, in the store, that says a `git merge --squash`
// was made and its commit is to come: the post-merge hook creates it, and
// the post-commit hook, seeing it, has the commit matched against linked
// commits (package inherit) before removing it.
const SquashPending = "links/squash-pending"
