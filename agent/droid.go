package agent

import (
	"bytes"
	"strings"

	"github.com/tetherdev/tether/state"
)

// droid is Factory's Droid: Claude Code's hook protocol (its payloads and
// event names, in .factory/hooks.json), with what its real CLI does
// differently. `droid exec` fires SessionStart, Stop and SessionEnd but no
// UserPromptSubmit: a turn it never announced is read from its transcript
// (see StartTurnFromTranscript), at its first PreToolUse (before the tool
// changes anything) or else at its Stop or SessionEnd. Esc in the TUI fires
// no Stop: a Notification idle_prompt ("Agent stopped by user") ends the
// turn, and the transcript's agent_turn_outcome says it was cancelled. A
// failed model call fires Stop like any end: the transcript says it
// failed. /quit fires SessionEnd twice; the second finds the session ended.
func droid() adapter {
	return adapter{
		info:   Info{Name: "droid", Display: "Droid", Binary: "droid"},
		events: claudeEvents,
		parse: snakeParse("droid", claudeEvents, func(ev *Event, payload []byte) bool {
			if ev.Native == "PreToolUse" {
				// A turn runs: one the hook heard of, or one `droid exec`
				// never announced.
				ev.Kind, ev.Unannounced = state.EventTurnStart, true
				return true
			}
			return endsAtIdlePrompt(ev, payload)
		}),
		waits:        droidWaits,
		dialogCalls:  droidTools.calls,
		resume:       resumeWith("droid", "", "--resume", "--resume"),
		fresh:        freshWith("droid", "", ""),
		turns:        droidTurns,
		cancelled:    droidCancelled,
		failure:      droidFailure,
		stopFailures: true,
		writes:       droidTools.writes,
	}
}

// droidLine is what a line of a Droid transcript says: a message of the
// conversation ({"type":"message","id","message":{"role","content",
// "visibility","hookEventName"}}), or the outcome of a turn
// ({"type":"agent_turn_outcome","reason":"completed"|"cancelled"|…}).
type droidLine struct {
	typ, id, reason            string
	role, visibility, hookName string
	texts                      []string
}

func readDroidLine(line []byte) (droidLine, bool) {
	if !bytes.Contains(line, []byte(`"type":"message"`)) && !bytes.Contains(line, []byte(`"agent_turn_outcome"`)) {
		return droidLine{}, false
	}
	var l droidLine
	var message []byte
	if decode(line, []wireField{{name: "type", str: &l.typ}, {name: "id", str: &l.id}, {name: "reason", str: &l.reason},
		{name: "message", raw: &message}}) != nil {
		return droidLine{}, false
	}
	if l.typ == "agent_turn_outcome" {
		return l, true
	}
	if l.typ != "message" || decode(message, []wireField{{name: "role", str: &l.role}, {name: "visibility", str: &l.visibility},
		{name: "hookEventName", str: &l.hookName}}) != nil {
		return droidLine{}, false
	}
	for text := range claudeTexts(message) { // Droid's content blocks are Claude Code's
		l.texts = append(l.texts, text)
	}
	return l, true
}

// droidTurns tells the line of the user's prompt, a user message with
// text that is neither a hook's record nor one the user or the model alone
// sees (Droid's own context, its error notices; a tool's result has no
// text), and the outcome that ends its turn.
func droidTurns(line []byte) turnLine {
	l, found := readDroidLine(line)
	switch {
	case !found:
		return turnLine{}
	case l.typ == "agent_turn_outcome":
		return turnLine{End: true}
	case l.role != "user" || l.visibility != "" || l.hookName != "" || len(l.texts) == 0:
		return turnLine{}
	}
	return turnLine{Start: true, Prompt: strings.Join(l.texts, "\n"), Key: l.id}
}

// droidCancelled tells the outcome Droid writes for a turn the user
// stopped (Esc in the TUI): {"type":"agent_turn_outcome","reason":
// "cancelled"}.
func droidCancelled(line []byte) bool {
	l, found := readDroidLine(line)
	return found && l.typ == "agent_turn_outcome" && l.reason == "cancelled"
}

// droidFailure reads one line of a Droid transcript for readTurnEnd: ok
// for a message of the conversation and a turn's outcome, and then msg is
// the error of a failed model call: Droid shows it as a message only the
// user sees ("BYOK Error: 400 …"), the last before the turn's Stop, and
// ends the turn with an outcome other than completed.
func droidFailure(line []byte) (msg string, ok bool) {
	l, found := readDroidLine(line)
	switch {
	case !found || l.hookName != "":
		return "", false
	case l.typ == "agent_turn_outcome":
		if l.reason == "completed" || l.reason == "cancelled" {
			return "", true
		}
		return "", false // the error message before it says more
	case l.role == "user" && l.visibility == "user_only" && len(l.texts) > 0:
		first, _, _ := strings.Cut(l.texts[0], "\n")
		return firstNonEmpty(first, "model call failed"), true
	case l.visibility == "llm_only":
		return "", false // Droid's own context for the model
	}
	return "", true
}
