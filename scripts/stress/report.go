package main

import (
	"fmt"
	"io"
)

// The invariants, in the order the summary prints them.
const (
	invStateLoads     = "every state file loads"
	invLiveNotEnded   = "no live session was finalized"
	invDeadFinalized  = "every dead session is finalized after a last sweep"
	invCondensedOnce  = "every recorded turn is on exactly one checkpoint"
	invCheckpointIDs  = "checkpoint IDs are unique and match their paths"
	invOffsets        = "condensed offset reaches the end of the turn log"
	invRanges         = "checkpoint turn-log ranges tile the condensed log"
	invRefs           = "checkpoints named by sessions and notes exist"
	invNoLostPrompts  = "no prompt whose hook returned is missing from the log"
	invNoPhantomTurns = "every recorded turn was submitted by an agent"
	invHookExit       = "hooks exit 0 unless killed"
	invStatusJSON     = "status --json is valid and complete"
	invFinalSweep     = "the last sweeps succeed"
	invFsck           = "git fsck --strict is clean"
)

var invariantOrder = []string{
	invStateLoads, invLiveNotEnded, invDeadFinalized, invCondensedOnce, invCheckpointIDs,
	invOffsets, invRanges, invRefs, invNoLostPrompts, invNoPhantomTurns, invHookExit,
	invStatusJSON, invFinalSweep, invFsck,
}

// maxShown bounds the details printed per invariant; the count is exact.
const maxShown = 25

// check is one invariant or notice: how many things it looked at and what
// was wrong with them.
type check struct {
	name     string
	checked  int
	failures []string
}

func (c *check) failf(format string, args ...any) {
	c.failures = append(c.failures, fmt.Sprintf(format, args...))
}

// report collects the invariants, which fail the run, and the notices,
// which are printed for a person to judge.
type report struct {
	invariants map[string]*check
	notices    []*check
}

func newReport() *report {
	r := &report{invariants: map[string]*check{}}
	for _, name := range invariantOrder {
		r.invariants[name] = &check{name: name}
	}
	return r
}

// inv returns a registered invariant; an unknown name is a programming
// error caught by the tests.
func (r *report) inv(name string) *check {
	c, ok := r.invariants[name]
	if !ok {
		panic("stress: unregistered invariant " + name)
	}
	return c
}

// notice returns the notice of that name, creating it on first use.
func (r *report) notice(name string) *check {
	for _, c := range r.notices {
		if c.name == name {
			return c
		}
	}
	c := &check{name: name}
	r.notices = append(r.notices, c)
	return c
}

func (r *report) failed() bool {
	for _, c := range r.invariants {
		if len(c.failures) > 0 {
			return true
		}
	}
	return false
}

func (r *report) print(w io.Writer) {
	fmt.Fprintln(w, "invariants:")
	for _, name := range invariantOrder {
		c := r.invariants[name]
		verdict := "PASS"
		if len(c.failures) > 0 {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "  %s  %s (%d checked, %d failed)\n", verdict, c.name, c.checked, len(c.failures))
		printDetails(w, c.failures)
	}
	var shown []*check
	for _, c := range r.notices {
		if len(c.failures) > 0 {
			shown = append(shown, c)
		}
	}
	if len(shown) == 0 {
		return
	}
	fmt.Fprintln(w, "notices (do not fail the run):")
	for _, c := range shown {
		fmt.Fprintf(w, "  NOTE  %s (%d)\n", c.name, len(c.failures))
		printDetails(w, c.failures)
	}
}

func printDetails(w io.Writer, lines []string) {
	for i, l := range lines {
		if i == maxShown {
			fmt.Fprintf(w, "        ... and %d more\n", len(lines)-maxShown)
			break
		}
		fmt.Fprintf(w, "        - %s\n", l)
	}
}
