package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// The stand-in marks a turn's progress in its transcript: the user's
// prompt before the UserPromptSubmit hook runs, "working on: P" once it has
// returned 0, "done: P" before the Stop hook.
const (
	workingPrefix = "working on: "
	donePrefix    = "done: "
)

// transcriptEntry is one line the stand-in wrote to its transcript.
type transcriptEntry struct {
	role, text string
}

// parseTranscript reads the stand-in's transcript lines. A line that does
// not parse (torn by a kill mid-write) is skipped.
func parseTranscript(data []byte) []transcriptEntry {
	var out []transcriptEntry
	for line := range bytes.Lines(data) {
		var l struct {
			Message struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &l) != nil || l.Message.Role == "" {
			continue
		}
		out = append(out, transcriptEntry{role: l.Message.Role, text: l.Message.Content})
	}
	return out
}

// promptFate is what one agent process's transcript says about a prompt.
type promptFate struct {
	prompt    string
	submitted bool // the user line is there: the prompt hook was about to run
	hookOK    bool // the UserPromptSubmit hook returned 0
	done      bool // the turn finished; its Stop hook was fired next
}

// promptFates lists the prompts of one agent process in order.
func promptFates(entries []transcriptEntry) []promptFate {
	var out []promptFate
	index := map[string]int{}
	for _, e := range entries {
		switch {
		case e.role == "user":
			if _, ok := index[e.text]; !ok {
				index[e.text] = len(out)
				out = append(out, promptFate{prompt: e.text})
			}
			out[index[e.text]].submitted = true
		case strings.HasPrefix(e.text, workingPrefix):
			if i, ok := index[strings.TrimPrefix(e.text, workingPrefix)]; ok {
				out[i].hookOK = true
			}
		case strings.HasPrefix(e.text, donePrefix):
			if i, ok := index[strings.TrimPrefix(e.text, donePrefix)]; ok {
				out[i].done = true
			}
		}
	}
	return out
}

// Where an agent was when it was killed, judged from its transcript.
const (
	atStarting = "starting" // nothing written yet: in its session-start hook or just launched
	atMidTurn  = "mid-turn" // a prompt submitted and not done
	atIdle     = "idle"     // between turns (or in a Stop hook, a commit, a sleep)
)

func activity(entries []transcriptEntry) string {
	if len(entries) == 0 {
		return atStarting
	}
	if strings.HasPrefix(entries[len(entries)-1].text, donePrefix) {
		return atIdle
	}
	return atMidTurn
}

// How an agent process ended.
const (
	outRunning      = "running"
	outOK           = "exited 0"
	outKilled       = "killed by the driver"
	outHookKilled   = "a hook was killed"
	outHookFailed   = "a hook exited non-zero"
	outCommitFailed = "its git commit failed"
	outOther        = "failed otherwise"
)

// exitReport is an agent process's end as the driver saw it.
type exitReport struct {
	killedByUs bool
	signal     string // "killed" when the process died of a signal
	code       int
	stderr     string
}

// classifyExit decides how an agent ended, and for a failed hook which
// event it served. The stand-in exits 1 with "standin: ACTION: ERR" when an
// action fails; a hook killed -9 shows as a signal, or as 137 when a shell
// stood between.
func classifyExit(e exitReport) (outcome, event string) {
	if e.signal != "" {
		if e.killedByUs {
			return outKilled, ""
		}
		return outOther, ""
	}
	if e.code == 0 {
		return outOK, ""
	}
	line := lastLineWith(e.stderr, "standin: ")
	if i := strings.Index(line, ": hook "); i >= 0 {
		rest := line[i+len(": hook "):]
		event, detail, _ := strings.Cut(rest, ": ")
		if strings.Contains(detail, "signal: killed") || strings.Contains(detail, "exit status 137") {
			return outHookKilled, event
		}
		return outHookFailed, event
	}
	if strings.HasPrefix(line, "standin: commit=") {
		return outCommitFailed, ""
	}
	return outOther, ""
}

func lastLineWith(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// script is the action list of one agent process.
type script struct {
	actions []string
	prompts []string // the prompts of its turns, in order
	hangs   bool     // its last turn never ends (open=)
	ends    bool     // it fires SessionEnd last
}

// endReasons are Claude Code's SessionEnd reasons.
var endReasons = []string{"other", "logout", "prompt_input_exit", "clear"}

// makeScript draws an agent's life: a session start (a resume for a
// session that lived before), one to four turns with commits and pauses
// between them, then a hanging turn, a session end, or just an exit (an
// agent without a session-end hook). Prompts are unique: seq numbers the
// agent process.
func makeScript(r *rand.Rand, seq int, resume bool) script {
	var s script
	if resume {
		s.actions = append(s.actions, "start=resume")
	} else {
		s.actions = append(s.actions, "start")
	}
	n := 1 + r.IntN(4)
	for k := 1; k <= n; k++ {
		prompt := fmt.Sprintf("agent %d turn %d: %s", seq, k, words[r.IntN(len(words))])
		s.prompts = append(s.prompts, prompt)
		if k == n && r.Float64() < 0.3 {
			s.actions = append(s.actions, "open="+prompt)
			s.hangs = true
			return s
		}
		s.actions = append(s.actions, "turn="+prompt)
		if r.Float64() < 0.3 {
			s.actions = append(s.actions, fmt.Sprintf("commit=agent %d after turn %d", seq, k))
		}
		if r.Float64() < 0.4 {
			s.actions = append(s.actions, "sleep="+(time.Duration(10+r.IntN(290))*time.Millisecond).String())
		}
	}
	if r.Float64() < 0.2 {
		// Idle but alive for a while: a target for idle kills.
		s.actions = append(s.actions, "sleep="+(time.Duration(1000+r.IntN(2000))*time.Millisecond).String())
	}
	if r.Float64() < 0.55 {
		s.actions = append(s.actions, "end="+endReasons[r.IntN(len(endReasons))])
		s.ends = true
	}
	return s
}

var words = []string{
	"fix the flaky test", "add a flag", "rename the package", "write the docs",
	"refactor the parser", "bump the dependency", "explain this function",
	"make it faster", "handle the error", "review the diff",
}
