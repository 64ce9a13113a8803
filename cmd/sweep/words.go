package main

import (
	"strings"

	"github.com/tetherdev/tether/state"
	"github.com/tetherdev/tether/sweep"
)

// The words people read for what tether records in its own terms. The
// recorded values (end_reason, liveness in --json) are a contract for
// scripts and stay as they are; these are for the eye.

// ending is what status needs to say how a session ended.
type ending struct {
	reason string // state.End*
	note   string // Session.EndNote: "<agent>: <its reason>" from the agent, else a person's words
	agent  string
	github string // what GitHub said, e.g. "PR #12 merged"
}

func rowEnding(r sweep.Row) ending {
	return ending{reason: r.EndReason, note: r.EndNote, agent: r.Agent, github: r.GitHub}
}

func sessionEnding(s *state.Session) ending {
	e := ending{reason: s.EndReason, note: s.EndNote, agent: s.Agent}
	if s.GitHub != nil {
		e.github = s.GitHub.Note
	}
	return e
}

// words says how a session ended, in plain words:
//
//	session-end               ended by the agent (the user quit)
//	interrupted, agent's note stopped mid-turn (the agent ended the session while a turn ran: Ctrl-C)
//	interrupted               killed mid-turn (its process went away while a turn ran)
//	owner-exited              exited (its process went away between turns)
//	stale                     given up: no sign of life (liveness unknown past stale-after)
//	github                    ended on GitHub (PR #12 merged)
//	manual                    ended by hand: <note>
func (e ending) words() string {
	agentSaid, byAgent := e.agentReason()
	var w string
	switch e.reason {
	case "":
		return ""
	case state.EndSessionEnd:
		w = "ended by the agent" + paren(agentSaid)
	case state.EndInterrupted:
		if byAgent {
			w = "stopped mid-turn" + paren(agentSaid)
		} else {
			w = "killed mid-turn"
		}
	case state.EndOwnerExited:
		w = "exited"
	case state.EndStale:
		w = "given up: no sign of life"
	case state.EndGitHub:
		w = "ended on GitHub"
	case state.EndManual:
		w = "ended by hand"
	default:
		w = e.reason
	}
	if e.github != "" && !strings.Contains(w, e.github) {
		w += " (" + e.github + ")"
	}
	if e.note != "" && !byAgent {
		w += ": " + e.note
	}
	return w
}

// agentReason reads the note an agent's own session-end left
// ("claude-code: prompt_input_exit") into words; byAgent says the note is
// the agent's, not a person's. The agents' generic reasons say nothing
// worth reading, and come back as "".
func (e ending) agentReason() (words string, byAgent bool) {
	said, ok := strings.CutPrefix(e.note, e.agent+": ")
	if e.agent == "" || !ok {
		return "", false
	}
	switch said {
	case "other", "complete", "":
		return "", true
	case "prompt_input_exit", "exit", "user_exit", "quit":
		return "the user quit", true
	case "clear":
		return "/clear", true
	case "logout":
		return "logged out", true
	case "error":
		return "after an error", true
	case "abort":
		return "aborted", true
	case "timeout":
		return "timed out", true
	}
	return said, true
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// livenessWord is the LIVENESS column: alive and unknown as checked; a
// process that is gone "exited" when it went between turns or as the
// session ended, and "died" when it went with a turn cut short.
func livenessWord(r sweep.Row) string {
	if r.Liveness != "dead" {
		return r.Liveness
	}
	if !r.Interrupted && (r.Phase == string(state.PhaseIdle) || r.Phase == string(state.PhaseEnded)) {
		return "exited"
	}
	return "died"
}
