package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// comparison is one budget of DESIGN.md, measured against its floor.
type comparison struct {
	name string
	run  func(b *bench) result
}

var comparisons = []comparison{
	{"hook turn-start vs do-nothing binary", benchHook},
	{"commit with post-commit hook vs plain commit", benchPostCommit},
}

func ratioResult(name, cand, floor string, c, f time.Duration, rounds int, budget string, ok func(ratio, deltaMs float64) bool) result {
	r := result{Name: name, Candidate: cand, Floor: floor, CandMs: ms(c), FloorMs: ms(f), Rounds: rounds, Budget: budget, Tool: "built-in"}
	if f > 0 {
		r.Ratio = float64(c) / float64(f)
	}
	r.DeltaMs = r.CandMs - r.FloorMs
	r.OK = ok(r.Ratio, r.DeltaMs)
	return r
}

// benchHook times tether-hook on a real turn-start payload against the
// floor binary, both through /bin/sh -c as agents run them.
func benchHook(b *bench) result {
	repo := b.newRepo("hook")
	transcript := filepath.Join(b.work, "transcript.jsonl")
	check(os.WriteFile(transcript, []byte(`{"type":"user"}`+"\n"), 0o600))
	payload, err := json.Marshal(map[string]any{
		"session_id": "bench-0001", "transcript_path": transcript, "cwd": repo,
		"permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": "say hi",
	})
	check(err)
	hook := filepath.Join(b.bin, "tether-hook") + " claude-code"
	floor := filepath.Join(b.bin, "floor")
	c, f := interleave(b.rounds,
		func() { sh(repo, hook, payload) },
		func() { sh(repo, floor, payload) })
	return ratioResult("hook turn-start vs do-nothing binary", "tether-hook claude-code", "floor", c, f, b.rounds,
		"<= 1.5x", func(ratio, _ float64) bool { return ratio <= 1.5 })
}

// benchPostCommit times `git commit` in a repo with tether's post-commit
// hook and nothing pending against the same commit in a repo with no hooks.
func benchPostCommit(b *bench) result {
	plain := b.newRepo("plain")
	hooked := b.newRepo("hooked")
	install := exec.Command(filepath.Join(b.bin, "tether-sweep"), "install", "--agent", "none")
	install.Dir = hooked
	install.Env = append(os.Environ(), "PATH="+b.bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := install.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: install: %v\n%s", err, out)
		os.Exit(1)
	}
	env := "PATH=" + b.bin + string(os.PathListSeparator) + os.Getenv("PATH")
	n := 0
	commit := func(dir string) func() {
		return func() {
			n++
			check(os.WriteFile(filepath.Join(dir, "f"), fmt.Appendf(nil, "%d\n", n), 0o644))
			sh(dir, "git commit -qam change", nil, env)
		}
	}
	rounds := b.rounds / 2
	c, f := interleave(rounds, commit(hooked), commit(plain))
	return ratioResult("commit with post-commit hook vs plain commit", "git commit (tether hook)", "git commit (no hook)", c, f, rounds,
		"<= +3 ms", func(_, delta float64) bool { return delta <= 3 })
}
