package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// unknownCommand is the usage error for a command word root does not know,
// naming the nearest command when one is near enough.
func unknownCommand(root *cobra.Command, word string) error {
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			names = append(names, c.Name())
			names = append(names, c.Aliases...)
		}
	}
	msg := fmt.Sprintf("unknown command %q", word)
	if s := nearest(word, names); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return usageError{msg + " (see tether-sweep --help)"}
}

// commandWord is the first argument that is not a flag: the command a
// person meant. tether-sweep's own flags take no values, so no flag's value
// can be mistaken for it.
func commandWord(args []string) string {
	for _, a := range args {
		if a == "--" {
			return ""
		}
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// nearest is the candidate closest to word by edit distance, the first of
// equals in the candidates' order; "" when none is within reach: two edits,
// or a third of the word's length when that is more (a long word mistyped
// twice over is still recognisable).
func nearest(word string, candidates []string) string {
	word = strings.ToLower(word)
	reach := max(2, len(word)/3)
	best, bestD := "", reach+1
	for _, c := range candidates {
		d := editDistance(word, strings.ToLower(c))
		if strings.HasPrefix(strings.ToLower(c), word) && len(word) >= 3 {
			d = min(d, 1) // "stat" for status
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Damerau–Levenshtein distance of a and b (optimal
// string alignment): insertions, deletions, substitutions and swaps of
// adjacent letters each cost one, so "stauts" is one edit from "status".
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j]: distance of ra[:i] and rb[:j]; three rows suffice.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
