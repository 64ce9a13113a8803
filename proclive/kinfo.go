package proclive

import (
	"encoding/binary"
	"fmt"
)

// FreeBSD struct kinfo_proc (sys/user.h) as returned by sysctl kern.proc.pid
// on amd64 and arm64: both are little-endian LP64 with KINFO_PROC_SIZE 1088,
// and the fields read here sit in the prefix that FreeBSD keeps stable
// across releases for binary compatibility. kinfo_test.go rebuilds the
// prefix field by field from the header to check these offsets.
const (
	kinfoProcSize   = 1088
	kiStructsizeOff = 0   // int ki_structsize
	kiPidOff        = 72  // pid_t ki_pid
	kiPpidOff       = 76  // pid_t ki_ppid
	kiStartOff      = 336 // struct timeval ki_start: int64 tv_sec, int64 tv_usec
	kiStatOff       = 388 // char ki_stat
	kiCommOff       = 447 // char ki_comm[COMMLEN+1]
	kiCommLen       = 20
	kiStatZombie    = 5 // SZOMB
)

// kinfo holds the kinfo_proc fields proclive uses.
type kinfo struct {
	pid, ppid int
	startUsec int64 // ki_start in microseconds since the epoch, as of the boottime the kernel used
	stat      byte
	comm      string
}

// decodeKinfoProc reads one kinfo_proc record.
func decodeKinfoProc(b []byte) (kinfo, error) {
	if len(b) < kinfoProcSize {
		return kinfo{}, fmt.Errorf("kinfo_proc: %d bytes, want %d", len(b), kinfoProcSize)
	}
	le := binary.LittleEndian
	if size := int32(le.Uint32(b[kiStructsizeOff:])); size != kinfoProcSize {
		return kinfo{}, fmt.Errorf("kinfo_proc: ki_structsize %d, want %d", size, kinfoProcSize)
	}
	sec := int64(le.Uint64(b[kiStartOff:]))
	usec := int64(le.Uint64(b[kiStartOff+8:]))
	const maxSec = (1<<63 - 1) / 1_000_000
	if sec < 0 || sec > maxSec || usec < 0 || usec >= 1e6 {
		return kinfo{}, fmt.Errorf("kinfo_proc: bad ki_start %d.%06d", sec, usec)
	}
	return kinfo{
		pid:       int(int32(le.Uint32(b[kiPidOff:]))),
		ppid:      int(int32(le.Uint32(b[kiPpidOff:]))),
		startUsec: sec*1e6 + usec,
		stat:      b[kiStatOff],
		comm:      cString(b[kiCommOff : kiCommOff+kiCommLen]),
	}, nil
}
