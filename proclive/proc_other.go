//go:build !linux && !darwin && !windows && !(freebsd && (amd64 || arm64))

package proclive

import (
	"fmt"
	"runtime"
)

// reader is never usable here: newReader fails, so Capture and
// ResolveOwner return ErrUnsupported and Check says Unknown.
type reader struct{}

func newReader() (reader, error) {
	return reader{}, fmt.Errorf("%w (%s/%s)", ErrUnsupported, runtime.GOOS, runtime.GOARCH)
}

func (reader) proc(int) (procInfo, error)  { return procInfo{}, ErrUnsupported }
func (reader) argv(int) ([]string, error)  { return nil, ErrUnsupported }
func (reader) verifyLeader(procInfo) error { return ErrUnsupported }
func machine() (boot, pidns string)        { return "", "" }
