// Package durable holds the two steps of a crash-safe file replacement that
// tether's git-facing packages share: flushing a directory so a rename in it
// survives a power cut, and replacing a file atomically and durably. (The
// session store keeps its own, confined to its os.Root; the hook may not
// import this package.)
package durable
