package proclive

import (
	"encoding/binary"
	"testing"
	"unsafe"
)

// kinfoProcPrefix is the head of FreeBSD's struct kinfo_proc (sys/user.h),
// field by field with the LP64 sizes of amd64 and arm64, up to ki_comm.
// Go lays it out with the same alignment rules as those ABIs' C compilers,
// so its offsets check the constants decodeKinfoProc uses.
type kinfoProcPrefix struct {
	Structsize    int32
	Layout        int32
	Args          uint64 // struct pargs *
	Paddr         uint64 // struct proc *
	Addr          uint64 // struct user *
	Tracep        uint64 // struct vnode *
	Textvp        uint64 // struct vnode *
	Fd            uint64 // struct filedesc *
	Vmspace       uint64 // struct vmspace *
	Wchan         uint64 // const void *
	Pid           int32
	Ppid          int32
	Pgid          int32
	Tpgid         int32
	Sid           int32
	Tsid          int32
	Jobc          int16
	SpareShort1   int16
	TdevFreebsd11 uint32
	Siglist       [4]uint32 // sigset_t
	Sigmask       [4]uint32
	Sigignore     [4]uint32
	Sigcatch      [4]uint32
	UID           uint32
	RUID          uint32
	SvUID         uint32
	RGID          uint32
	SvGID         uint32
	Ngroups       int16
	SpareShort2   int16
	Groups        [16]uint32 // KI_NGROUPS
	Size          uint64     // vm_size_t
	Rssize        int64      // segsz_t
	Swrss         int64
	Tsize         int64
	Dsize         int64
	Ssize         int64
	Xstat         uint16
	Acflag        uint16
	Pctcpu        uint32 // fixpt_t
	Estcpu        uint32
	Slptime       uint32
	Swtime        uint32
	Cow           uint32
	Runtime       uint64
	StartSec      int64 // struct timeval ki_start
	StartUsec     int64
	ChildSec      int64 // struct timeval ki_childtime
	ChildUsec     int64
	Flag          int64 // long
	Kiflag        int64
	Traceflag     int32
	Stat          int8
	Nice          int8
	Lock          int8
	Rqindex       int8
	OncpuOld      uint8
	LastcpuOld    uint8
	Tdname        [17]byte // TDNAMLEN+1
	Wmesg         [9]byte  // WMESGLEN+1
	Login         [18]byte // LOGNAMELEN+1
	Lockname      [9]byte  // LOCKNAMELEN+1
	Comm          [20]byte // COMMLEN+1
}

func TestKinfoProcOffsets(t *testing.T) {
	if unsafe.Alignof(int64(0)) != 8 {
		t.Skip("the mirror struct needs LP64 alignment of 64-bit fields")
	}
	var k kinfoProcPrefix
	for _, c := range []struct {
		field     string
		got, want uintptr
	}{
		{"ki_structsize", unsafe.Offsetof(k.Structsize), kiStructsizeOff},
		{"ki_pid", unsafe.Offsetof(k.Pid), kiPidOff},
		{"ki_ppid", unsafe.Offsetof(k.Ppid), kiPpidOff},
		{"ki_start", unsafe.Offsetof(k.StartSec), kiStartOff},
		{"ki_stat", unsafe.Offsetof(k.Stat), kiStatOff},
		{"ki_comm", unsafe.Offsetof(k.Comm), kiCommOff},
		{"sizeof ki_comm", unsafe.Sizeof(k.Comm), kiCommLen},
	} {
		if c.got != c.want {
			t.Errorf("%s at %d, decoder uses %d", c.field, c.got, c.want)
		}
	}
}

// kinfoRecord builds a kinfo_proc record with the given fields.
func kinfoRecord(pid, ppid int32, sec, usec int64, stat byte, comm string) []byte {
	b := make([]byte, kinfoProcSize)
	le := binary.LittleEndian
	le.PutUint32(b[kiStructsizeOff:], kinfoProcSize)
	le.PutUint32(b[kiPidOff:], uint32(pid))
	le.PutUint32(b[kiPpidOff:], uint32(ppid))
	le.PutUint64(b[kiStartOff:], uint64(sec))
	le.PutUint64(b[kiStartOff+8:], uint64(usec))
	b[kiStatOff] = stat
	copy(b[kiCommOff:kiCommOff+kiCommLen], comm)
	return b
}

func TestDecodeKinfoProc(t *testing.T) {
	k, err := decodeKinfoProc(kinfoRecord(4242, 1, 1_700_000_000, 123456, kiStatZombie, "claude"))
	if err != nil {
		t.Fatal(err)
	}
	want := kinfo{pid: 4242, ppid: 1, startUsec: 1_700_000_000_123456, stat: kiStatZombie, comm: "claude"}
	if k != want {
		t.Errorf("decodeKinfoProc = %+v, want %+v", k, want)
	}
	long, err := decodeKinfoProc(kinfoRecord(7, 1, 1, 0, 2, "a-name-of-19-bytes!"))
	if err != nil || long.comm != "a-name-of-19-bytes!" {
		t.Errorf("19-byte comm = %q, %v", long.comm, err)
	}

	bad := map[string][]byte{
		"short":        kinfoRecord(1, 0, 0, 0, 2, "x")[:kinfoProcSize-1],
		"i386 layout":  func() []byte { b := kinfoRecord(1, 0, 0, 0, 2, "x"); b[0] = 0; b[1] = 3; return b }(), // 768
		"usec too big": kinfoRecord(1, 0, 5, 1_000_000, 2, "x"),
		"negative sec": kinfoRecord(1, 0, -1, 0, 2, "x"),
	}
	for name, b := range bad {
		if _, err := decodeKinfoProc(b); err == nil {
			t.Errorf("%s: decodeKinfoProc accepted it", name)
		}
	}
}

func FuzzDecodeKinfoProc(f *testing.F) {
	f.Add(kinfoRecord(4242, 1, 1_700_000_000, 123456, 3, "claude"))
	f.Add(kinfoRecord(1, 0, 0, 0, kiStatZombie, ""))
	f.Add([]byte{0x40, 0x04})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := decodeKinfoProc(b)
		if err != nil {
			return
		}
		// Re-encoding what was decoded reproduces the fields.
		again, err := decodeKinfoProc(kinfoRecord(int32(k.pid), int32(k.ppid), k.startUsec/1e6, k.startUsec%1e6, k.stat, k.comm))
		if err != nil || again != k {
			t.Fatalf("round trip of %+v = %+v, %v", k, again, err)
		}
	})
}
