// Command bench measures tether against floors taken in the same run, so
// the figures are ratios that survive a noisy machine:
//
//	go run ./scripts/bench [--json] [--rounds N] [--only NAME] [--short]
//
// Each comparison interleaves the candidate and its floor, round by round,
// and reports medians with a built-in timer; when hyperfine is on PATH it
// also gives its own figure for the hook, as a second opinion. Big
// fixtures (a history of 100,000 checkpoints, 10,000 ended sessions) are
// written directly, with git fast-import and plain files. --short runs
// every comparison in CI-friendly time: 20 rounds and a history of 10,000.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// result is one line of the table.
type result struct {
	Name      string  `json:"name"`
	Candidate string  `json:"candidate"`
	Floor     string  `json:"floor"`
	CandMs    float64 `json:"candidate_median_ms"`
	FloorMs   float64 `json:"floor_median_ms"`
	Ratio     float64 `json:"ratio"`
	DeltaMs   float64 `json:"delta_ms"`
	Unit      string  `json:"unit,omitempty"` // of the three figures above when not ms (bytes)
	Budget    string  `json:"budget"`
	OK        bool    `json:"within_budget"`
	Rounds    int     `json:"rounds"`
	Tool      string  `json:"tool"`
}

type bench struct {
	work   string // scratch dir
	bin    string // built binaries
	rounds int
	short  bool

	shared [2]*sharing // the remotes of the sharing rows, built once
}

// bigHistory is the number of checkpoints of the big remote.
func (b *bench) bigHistory() int {
	if b.short {
		return 10_000
	}
	return 100_000
}

func main() {
	asJSON := flag.Bool("json", false, "print JSON instead of a table")
	rounds := flag.Int("rounds", 200, "rounds per comparison")
	only := flag.String("only", "", "run only the comparisons whose name contains this")
	keep := flag.Bool("keep", false, "keep the scratch directory")
	short := flag.Bool("short", false, "CI-friendly: 20 rounds (unless --rounds), a history of 10,000 checkpoints instead of 100,000")
	flag.Parse()
	if *short && !flagSet("rounds") {
		*rounds = 20
	}

	work, err := os.MkdirTemp("", "tether-bench-")
	check(err)
	if !*keep {
		defer os.RemoveAll(work)
	}
	b := &bench{work: work, bin: filepath.Join(work, "bin"), rounds: *rounds, short: *short}
	b.build()

	var results []result
	for _, c := range comparisons {
		if *only != "" && !strings.Contains(c.name, *only) {
			continue
		}
		fmt.Fprintf(os.Stderr, "bench: %s ...\n", c.name)
		results = append(results, c.run(b)...)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		check(enc.Encode(results))
		return
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "comparison\tcandidate\tfloor\tratio\tdelta\tunit\tbudget\tok\t")
	for _, r := range results {
		unit := r.Unit
		if unit == "" {
			unit = "ms"
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.2fx\t%+.3f\t%s\t%s\t%v\t\n", r.Name, r.CandMs, r.FloorMs, r.Ratio, r.DeltaMs, unit, r.Budget, r.OK)
	}
	tw.Flush()
	for _, r := range results {
		if r.Tool != "built-in" {
			fmt.Printf("%s: %s\n", r.Name, r.Tool)
		}
	}
}

// build compiles the binaries under test and the floor.
func (b *bench) build() {
	root := moduleRoot()
	for out, pkg := range map[string]string{
		"tether-hook":  "./cmd/hook",
		"tether-sweep": "./cmd/sweep",
		"floor":        "./scripts/bench/floor",
	} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(b.bin, out), pkg)
		cmd.Dir, cmd.Stderr = root, os.Stderr
		check(cmd.Run())
	}
}

// interleave runs a and b alternately, rounds times each after a warm-up,
// and returns their median wall times.
func interleave(rounds int, a, b func()) (time.Duration, time.Duration) {
	return interleavePrep(rounds, nil, a, b)
}

// interleavePrep is interleave with prep, when not nil, run untimed before
// each call of a: the state a candidate starts from.
func interleavePrep(rounds int, prep, a, b func()) (time.Duration, time.Duration) {
	return interleaveAround(rounds, prep, nil, a, b)
}

// interleaveAround is interleavePrep with settle, when not nil, run
// untimed after each call of a: what a candidate leaves running in the
// background finishes before anything else is timed.
func interleaveAround(rounds int, prep, settle, a, b func()) (time.Duration, time.Duration) {
	if prep == nil {
		prep = func() {}
	}
	if settle == nil {
		settle = func() {}
	}
	for range 5 {
		prep()
		a()
		settle()
		b()
	}
	var ta, tb []time.Duration
	for i := range rounds {
		prep()
		var da, db time.Duration
		timed := func(f func()) time.Duration {
			t0 := time.Now()
			f()
			return time.Since(t0)
		}
		if i%2 == 1 { // alternate the order too, so neither always runs on a warmer cache
			db = timed(b)
			da = timed(a)
			settle()
		} else {
			da = timed(a)
			settle()
			db = timed(b)
		}
		ta, tb = append(ta, da), append(tb, db)
	}
	return median(ta), median(tb)
}

// interleaveAll runs fns in turn, rounds times each after a warm-up, each
// round starting with the next one so none always runs on a warmer cache,
// and returns their median wall times in order.
func interleaveAll(rounds int, fns ...func()) []time.Duration {
	for range 5 {
		for _, f := range fns {
			f()
		}
	}
	times := make([][]time.Duration, len(fns))
	for i := range rounds {
		for k := range fns {
			j := (i + k) % len(fns)
			t0 := time.Now()
			fns[j]()
			times[j] = append(times[j], time.Since(t0))
		}
	}
	medians := make([]time.Duration, len(fns))
	for j, ts := range times {
		medians[j] = median(ts)
	}
	return medians
}

// flagSet reports whether the named flag was given.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// sh runs a command line through /bin/sh -c, as agents and git run hooks.
func sh(dir, line string, stdin []byte, env ...string) {
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = strings.NewReader(string(stdin))
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %s: %v\n%s", line, err, out)
		os.Exit(1)
	}
}

func git(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: git %s: %v\n%s", strings.Join(args, " "), err, out)
		os.Exit(1)
	}
	return strings.TrimSpace(string(out))
}

// newRepo makes a scratch repository with one commit.
func (b *bench) newRepo(name string) string {
	dir := filepath.Join(b.work, name)
	check(os.MkdirAll(dir, 0o755))
	git(dir, "init", "-q", "-b", "main")
	git(dir, "config", "user.name", "bench")
	git(dir, "config", "user.email", "bench@example.invalid")
	check(os.WriteFile(filepath.Join(dir, "f"), []byte("0\n"), 0o644))
	git(dir, "add", "f")
	git(dir, "commit", "-qm", "initial")
	return dir
}

func moduleRoot() string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	check(err)
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func check(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}
