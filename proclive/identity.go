package proclive

// Identity names one process across time: the PID alone is not enough,
// because PIDs are reused, so the start fingerprint, the boot and the host
// pin it to a single incarnation.
type Identity struct {
	OS    string `json:"os"`              // runtime.GOOS of the machine that captured it
	PID   int    `json:"pid"`             // process ID (thread-group ID on Linux)
	Start uint64 `json:"start"`           // raw per-OS start fingerprint, compared only for equality
	Boot  string `json:"boot,omitempty"`  // boot ID; differs after a reboot
	Host  string `json:"host,omitempty"`  // hostname at capture time
	PIDNS string `json:"pidns,omitempty"` // PID namespace (Linux), e.g. "pid:[4026531836]"
	Name  string `json:"name,omitempty"`  // process name, for display only

	// Interactive is set when the owner is an interactive shell rather than
	// an agent: the session lives as long as the shell does.
	Interactive bool `json:"interactive,omitempty"`
}

// Liveness is the three-valued answer to "is this process still running?".
type Liveness int

const (
	// Unknown means liveness could not be decided here (other host, other
	// PID namespace, permission denied, unsupported platform). Unknown is
	// never treated as death.
	Unknown Liveness = iota
	Alive
	Dead
)

func (l Liveness) String() string {
	switch l {
	case Alive:
		return "alive"
	case Dead:
		return "dead"
	default:
		return "unknown"
	}
}

// Verdict is the result of Check: the liveness and a short human reason
// ("pid 123 reused", "other host build-7", "zombie").
type Verdict struct {
	Liveness Liveness
	Reason   string
}
