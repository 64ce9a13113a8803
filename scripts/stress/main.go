package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

// config is the command line.
type config struct {
	duration time.Duration
	agents   int
	seed     uint64
	keep     bool
	short    bool
}

// The --short run, for CI: about 20-30 s on 2 cores, building included.
const (
	shortDuration = 12 * time.Second
	shortAgents   = 5
)

func main() {
	var cfg config
	flag.DurationVar(&cfg.duration, "duration", 30*time.Second, "how long the chaos runs")
	flag.IntVar(&cfg.agents, "agents", 8, "agent processes running at once (one worktree each)")
	flag.Uint64Var(&cfg.seed, "seed", 0, "random seed (default: from the clock; printed)")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the scratch directory (it is also kept when an invariant fails)")
	flag.BoolVar(&cfg.short, "short", false, fmt.Sprintf("a short run for CI (%v, %d agents, unless given)", shortDuration, shortAgents))
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "stress: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if cfg.short {
		if !set["duration"] {
			cfg.duration = shortDuration
		}
		if !set["agents"] {
			cfg.agents = shortAgents
		}
	}
	if cfg.agents < 1 || cfg.duration <= 0 {
		fmt.Fprintln(os.Stderr, "stress: --agents must be at least 1 and --duration positive")
		os.Exit(2)
	}
	if !set["seed"] {
		cfg.seed = uint64(time.Now().UnixNano())
	}
	os.Exit(run(cfg))
}
