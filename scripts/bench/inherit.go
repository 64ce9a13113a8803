package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/inherit"
	"github.com/tetherdev/tether/state"
)

// benchInherit times matching what arrived against what is linked: 1,000
// commits arriving on main (100 of them squash merges of pull requests,
// the rest unrelated) against 10,000 linked commits (1,000 pull requests
// of 10 commits, each with a note), indexed beforehand as the sweeps that
// linked them did. The floor is the git work no matcher can skip: the
// arriving commits' patch-ids (git log -p | git patch-id --stable).
func benchInherit(b *bench) result {
	const prs, perPR, arriving = 1_000, 10, 1_000
	dir := b.newRepo("inherit")
	var s bytes.Buffer
	mark := 1
	commit := func(ref, from, msg string, files map[string]string) {
		mark++
		fmt.Fprintf(&s, "commit %s\nmark :%d\ncommitter bench <bench@example.invalid> %d +0000\ndata %d\n%s\n", ref, mark, 1_700_000_000+mark, len(msg), msg)
		if from != "" {
			fmt.Fprintf(&s, "from %s\n", from)
		}
		for path, content := range files {
			fmt.Fprintf(&s, "M 100644 inline %s\ndata %d\n%s\n", path, len(content), content)
		}
	}
	base := git(dir, "rev-parse", "HEAD")
	var linked []int
	for p := range prs {
		for j := range perPR {
			from := ""
			if j == 0 {
				from = base
			}
			commit(fmt.Sprintf("refs/heads/pr/%d", p), from, fmt.Sprintf("pr %d commit %d", p, j), map[string]string{fmt.Sprintf("pr-%d/f-%d", p, j): fmt.Sprintf("%d %d\n", p, j)})
			linked = append(linked, mark)
		}
	}
	for k := range arriving {
		from := ""
		if k == 0 {
			from = base
		}
		files := map[string]string{fmt.Sprintf("other/f-%d", k): fmt.Sprintf("%d\n", k)}
		if k%10 == 0 { // the squash merge of pull request k/10
			p := k / 10
			files = map[string]string{}
			for j := range perPR {
				files[fmt.Sprintf("pr-%d/f-%d", p, j)] = fmt.Sprintf("%d %d\n", p, j)
			}
		}
		commit("refs/heads/main", from, fmt.Sprintf("arriving %d", k), files)
	}
	mark++
	fmt.Fprintf(&s, "commit refs/notes/tether\nmark :%d\ncommitter bench <bench@example.invalid> 1700000000 +0000\ndata 5\nnotes\n", mark)
	for i, m := range linked {
		note := fmt.Sprintf("Tether-Checkpoint: %016x\n", i+1)
		fmt.Fprintf(&s, "N inline :%d\ndata %d\n%s", m, len(note), note)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Stdin = dir, &s
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: fast-import: %v\n%s", err, out)
		os.Exit(1)
	}
	git(dir, "reset", "-q", "--hard", "main")

	repo, err := gitdir.Find(dir)
	check(err)
	st, err := state.Open(repo.CommonDir, state.Options{})
	check(err)
	defer st.Close()
	cp, err := checkpoint.Open(repo.CommonDir)
	check(err)
	m, err := inherit.New(repo, st, cp)
	check(err)
	n, err := m.Update()
	check(err)
	if n != prs*perPR {
		fmt.Fprintf(os.Stderr, "bench: indexed %d linked commits, want %d\n", n, prs*perPR)
		os.Exit(1)
	}
	arrived, err := m.Arrived(10*arriving, "main", "^"+base)
	check(err)
	match := func() {
		found, err := m.Match(context.Background(), arrived, "rebase")
		check(err)
		if len(found) != arriving/10 {
			fmt.Fprintf(os.Stderr, "bench: %d arriving commits inherit, want %d\n", len(found), arriving/10)
			os.Exit(1)
		}
	}
	floor := func() {
		sh(dir, "git log -p --no-merges --no-color --format='commit %H' main ^"+base+" | git patch-id --stable >/dev/null", nil)
	}
	rounds := min(b.rounds, 20)
	c, f := interleave(rounds, match, floor)
	return ratioResult(fmt.Sprintf("match of %d arriving commits against %d linked vs their patch-ids alone", arriving, prs*perPR),
		"inherit.Match", "git log -p | git patch-id --stable", c, f, rounds,
		"<= 2x", func(ratio, _ float64) bool { return ratio <= 2 })
}
