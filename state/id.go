package state

import (
	"errors"
	"fmt"
)

// ErrInvalidID marks a session ID (or lock name) that ValidateID refuses.
var ErrInvalidID = errors.New("invalid session id")

// maxIDLen bounds session IDs so file names stay well under every
// file system's limit.
const maxIDLen = 128

// ValidateID accepts IDs of 1 to 128 characters from [A-Za-z0-9._-], other
// than "." and "..": safe as a file name on every platform, and unable to
// name a path outside its directory.
func ValidateID(id string) error {
	if len(id) == 0 || len(id) > maxIDLen {
		return fmt.Errorf("%w %s: must be 1 to %d characters, is %d", ErrInvalidID, quoteID(id), maxIDLen, len(id))
	}
	if id == "." || id == ".." {
		return fmt.Errorf("%w %s", ErrInvalidID, quoteID(id))
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w %s: character %q at %d is not one of [A-Za-z0-9._-]", ErrInvalidID, quoteID(id), c, i)
		}
	}
	return nil
}

// quoteID quotes an ID for an error message, shortened if it is long.
func quoteID(id string) string {
	if len(id) > 40 {
		return fmt.Sprintf("%q...", id[:40])
	}
	return fmt.Sprintf("%q", id)
}
