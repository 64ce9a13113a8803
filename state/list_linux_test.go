package state

import (
	"errors"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestListNeverOpensEnded watches ended/ with inotify while List runs: the
// kernel reports any open of the directory or a file in it. (Permission
// tricks would not prove it: tests may run as root.)
func TestListNeverOpensEnded(t *testing.T) {
	s, dir := newStore(t, Options{})
	for _, id := range []string{"a", "b", "c"} {
		mustMutate(t, s, id, func(tx *Tx) error {
			tx.Session.Phase = PhaseEnded
			return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: 1})
		})
	}
	mustMutate(t, s, "live", func(tx *Tx) error { tx.Session.Phase = PhaseIdle; return nil })

	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, filepath.Join(dir, "ended"), unix.IN_OPEN|unix.IN_ACCESS); err != nil {
		t.Fatal(err)
	}
	events := func() int {
		buf := make([]byte, 64<<10)
		total := 0
		for {
			n, err := unix.Read(fd, buf)
			if errors.Is(err, unix.EAGAIN) {
				return total
			}
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off < n; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				total++
				off += unix.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}

	list, warns, err := s.List()
	if err != nil || len(warns) != 0 || len(list) != 1 || list[0].ID != "live" {
		t.Fatalf("List = %v, %v, %v", list, warns, err)
	}
	if n := events(); n != 0 {
		t.Fatalf("List touched ended/: %d inotify events", n)
	}
	// The watch works: ListEnded's opens are seen.
	if ended, _, err := s.ListEnded(); err != nil || len(ended) != 3 {
		t.Fatalf("ListEnded = %v, %v", ended, err)
	}
	if n := events(); n == 0 {
		t.Fatal("inotify saw nothing from ListEnded: the watch is not working")
	}
}

// TestListUpToIsBounded: over its limit, ListUpTo reads the names of
// sessions/ up to the limit and opens no session's file; under it, it is
// List.
func TestListUpToIsBounded(t *testing.T) {
	s, dir := newStore(t, Options{})
	if list, over, err := s.ListUpTo(4); err != nil || over || len(list) != 0 {
		t.Fatalf("ListUpTo of an empty store = %v, %v, %v", list, over, err)
	}
	for _, id := range []string{"a", "b", "c"} {
		mustMutate(t, s, id, func(tx *Tx) error { tx.Session.Phase = PhaseIdle; return nil })
	}
	if list, over, err := s.ListUpTo(3); err != nil || over || len(list) != 3 {
		t.Fatalf("ListUpTo(3) of 3 sessions = %v, %v, %v", list, over, err)
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, filepath.Join(dir, "sessions"), unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	if list, over, err := s.ListUpTo(2); err != nil || !over || len(list) != 0 {
		t.Fatalf("ListUpTo(2) of 3 sessions = %v, %v, %v; want over", list, over, err)
	}
	buf := make([]byte, 64<<10)
	n, err := unix.Read(fd, buf)
	if err != nil && !errors.Is(err, unix.EAGAIN) {
		t.Fatal(err)
	}
	for off := 0; off < n; {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		if ev.Len > 0 {
			t.Errorf("ListUpTo over its limit opened a session file")
		}
		off += unix.SizeofInotifyEvent + int(ev.Len)
	}
}
