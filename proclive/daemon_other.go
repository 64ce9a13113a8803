//go:build !linux

package proclive

// clients is not implemented off Linux: a session under a shared daemon
// has no owner there (Unknown liveness), never the daemon.
func (reader) clients(procInfo) ([]client, error) { return nil, ErrUnsupported }
