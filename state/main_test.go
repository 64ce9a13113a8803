package state

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Child processes: the test binary re-executes itself with
// TETHER_STATE_CHILD naming what to do, so concurrency and crash tests run
// real processes with real locks.
const childEnv = "TETHER_STATE_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		if err := runChild(mode); err != nil {
			fmt.Fprintf(os.Stderr, "child %s: %v\n", mode, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runChild(mode string) error {
	s, err := Open(os.Getenv("CHILD_COMMON"), Options{LockWait: time.Minute, Apply: testApply})
	if err != nil {
		return err
	}
	id := os.Getenv("CHILD_ID")
	switch mode {
	case "count":
		// CHILD_N increments of Turns, each a locked read-modify-write.
		n, err := strconv.Atoi(os.Getenv("CHILD_N"))
		if err != nil {
			return err
		}
		for range n {
			if _, err := s.Mutate(id, func(sess *Session) error {
				sess.Phase = PhaseIdle
				sess.Turns++
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	case "crash":
		// Forever: one turn per transaction, ending the session every fifth
		// turn and reviving it on the next, reporting each completed write.
		// CHILD_ID lists the sessions: one is written with MutateTx,
		// several with MutateEach; the reported turn is the lowest.
		out := bufio.NewWriter(os.Stdout)
		turn := func(tx *Tx) error {
			n := tx.Session.Turns + 1
			tx.Session.Turns = n
			tx.Session.Phase = crashPhase(n)
			return tx.AppendTurn(TurnRecord{T: RecTurnStart, Turn: n, At: time.Now(), Prompt: strings.Repeat("p", n%300)})
		}
		ids := strings.Split(id, ",")
		for {
			var sessions []*Session
			if len(ids) == 1 {
				sess, err := s.MutateTx(id, turn)
				if err != nil {
					return err
				}
				sessions = []*Session{sess}
			} else {
				// With CHILD_CONDENSED set, each write that ends a session
				// also records it condensed, as the sweep's does.
				var then func([]*Tx)
				if os.Getenv("CHILD_CONDENSED") != "" {
					then = func(txs []*Tx) {
						for _, tx := range txs {
							if tx.Session.Phase == PhaseEnded {
								tx.ClearMark(MarkCondense)
							}
						}
					}
				}
				var errs []error
				if sessions, errs = s.MutateEachThen(ids, turn, then); errors.Join(errs...) != nil {
					return errors.Join(errs...)
				}
			}
			low := sessions[0].Turns
			for _, sess := range sessions {
				low = min(low, sess.Turns)
			}
			fmt.Fprintf(out, "%d\n", low)
			out.Flush()
		}
	case "count-group":
		// CHILD_N increments of Turns of every session in CHILD_ID (a
		// comma-separated list), each round one MutateEach.
		n, err := strconv.Atoi(os.Getenv("CHILD_N"))
		if err != nil {
			return err
		}
		for range n {
			_, errs := s.MutateEach(strings.Split(id, ","), func(tx *Tx) error {
				tx.Session.Phase = PhaseIdle
				tx.Session.Turns++
				return nil
			})
			if err := errors.Join(errs...); err != nil {
				return err
			}
		}
		return nil
	case "spool":
		// Forever: spool event "start N" for N from CHILD_N on, reporting
		// each once spooled.
		n, err := strconv.Atoi(os.Getenv("CHILD_N"))
		if err != nil {
			return err
		}
		for ; ; n++ {
			if err := s.Spool(id, []byte("start "+strconv.Itoa(n))); err != nil {
				return err
			}
			fmt.Println(n)
		}
	case "apply":
		// Forever: a writer with nothing of its own to write, which
		// applies what is spooled; every other write is a grouped one
		// (MutateEach), as the sweep's.
		for i := 0; ; i++ {
			nothing := func(*Tx) error { return ErrNoChange }
			if i%2 == 0 {
				if _, err := s.MutateTx(id, nothing); err != nil {
					return err
				}
			} else if _, errs := s.MutateEach([]string{id, "other"}, nothing); errors.Join(errs...) != nil {
				return errors.Join(errs...)
			}
		}
	case "hold":
		// Take the lock named CHILD_ID, say so, and keep it until stdin
		// closes (or a kill).
		unlock, err := s.Lock(id)
		if err != nil {
			return err
		}
		fmt.Println("locked")
		_, _ = io.Copy(io.Discard, os.Stdin)
		return unlock()
	case "hold-session":
		// The same with the lock of session CHILD_ID, as a writer stuck
		// inside its transaction holds it.
		_, err := s.MutateTx(id, func(*Tx) error {
			fmt.Println("locked")
			_, _ = io.Copy(io.Discard, os.Stdin)
			return ErrNoChange
		})
		return err
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// crashPhase is the phase the crash child gives turn n.
func crashPhase(n int) Phase {
	if n%5 == 0 {
		return PhaseEnded
	}
	return PhaseActive
}

// child prepares a re-execution of the test binary in the given mode.
func child(t testing.TB, mode, common, id string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, "CHILD_COMMON="+common, "CHILD_ID="+id)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}
