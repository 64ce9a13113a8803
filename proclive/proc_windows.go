package proclive

import (
	"errors"
	"fmt"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/windows"
)

// reader reads processes through process handles.
type reader struct{}

func newReader() (reader, error) { return reader{}, nil }

func (reader) open(pid int) (windows.Handle, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
	switch {
	case err == nil:
		return h, nil
	case errors.Is(err, windows.ERROR_INVALID_PARAMETER):
		// OpenProcess's answer for a PID no process has; access denied is
		// a live process we may not look at.
		return 0, fmt.Errorf("pid %d: %w", pid, errGone)
	default:
		return 0, fmt.Errorf("open process %d: %w", pid, err)
	}
}

func (r reader) proc(pid int) (procInfo, error) {
	h, err := r.open(pid)
	if err != nil {
		return procInfo{}, err
	}
	defer windows.CloseHandle(h)

	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return procInfo{}, fmt.Errorf("process %d times: %w", pid, err)
	}
	// Signalled means exited: the process object outlives the process
	// while handles to it are open. Exit codes cannot tell (STILL_ACTIVE is
	// a valid exit code).
	ev, err := windows.WaitForSingleObject(h, 0)
	if err != nil {
		return procInfo{}, fmt.Errorf("wait for process %d: %w", pid, err)
	}
	var pbi windows.PROCESS_BASIC_INFORMATION
	if err := windows.NtQueryInformationProcess(h, windows.ProcessBasicInformation,
		unsafe.Pointer(&pbi), uint32(unsafe.Sizeof(pbi)), nil); err != nil {
		return procInfo{}, fmt.Errorf("process %d basic information: %w", pid, err)
	}
	name, err := imageName(h)
	if err != nil {
		return procInfo{}, fmt.Errorf("process %d image name: %w", pid, err)
	}
	return procInfo{
		pid:    pid,
		ppid:   int(pbi.InheritedFromUniqueProcessId),
		start:  uint64(created.HighDateTime)<<32 | uint64(created.LowDateTime),
		name:   name,
		zombie: ev == windows.WAIT_OBJECT_0,
	}, nil
}

// imageName is the base name of the process's executable.
func imageName(h windows.Handle) (string, error) {
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err != nil {
		return "", err
	}
	return filepath.Base(windows.UTF16ToString(buf[:n])), nil
}

func (r reader) argv(pid int) ([]string, error) {
	h, err := r.open(pid)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(h)
	// ProcessCommandLineInformation (Windows 8.1+) answers with a
	// UNICODE_STRING whose buffer follows it in ours.
	buf := make([]byte, 4096)
	for {
		var need uint32
		err := windows.NtQueryInformationProcess(h, windows.ProcessCommandLineInformation,
			unsafe.Pointer(&buf[0]), uint32(len(buf)), &need)
		if err == windows.STATUS_INFO_LENGTH_MISMATCH && int(need) > len(buf) && need <= 1<<20 {
			buf = make([]byte, need)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("process %d command line: %w", pid, err)
		}
		break
	}
	line := (*windows.NTUnicodeString)(unsafe.Pointer(&buf[0])).String()
	return windows.DecomposeCommandLine(line)
}

// verifyLeader: process handles only name processes, not threads.
func (reader) verifyLeader(procInfo) error { return nil }

// machine: no boot ID (see the package doc) and no PID namespaces.
func machine() (boot, pidns string) { return "", "" }
