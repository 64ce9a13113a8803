package agent

import (
	"bytes"

	"github.com/tetherdev/tether/state"
)

// qwen is Qwen Code's hook protocol: Claude Code's (its payloads, its event
// names, StopFailure with error and error_details, prompt_id naming the
// turn), with two differences its real CLI shows. Esc fires no Stop: the
// turn ends at the Notification idle_prompt Qwen Code sends whenever it is
// back at its prompt (after a Stop too, where it changes nothing). And a
// headless run (`qwen "prompt"`) never fires SessionEnd, nor StopFailure on
// a model error: its owner's exit ends the session, and the error is read
// from the transcript (qwenFailure). A tool's result goes back to the model
// under a second UserPromptSubmit with the same prompt_id and no prompt:
// the same turn, which the hook's duplicate detection keeps as one.
func qwen() adapter {
	return adapter{
		info:    Info{Name: "qwen", Display: "Qwen Code", Binary: "qwen"},
		events:  claudeEvents,
		parse:   snakeParse("qwen", claudeEvents, endsAtIdlePrompt),
		waits:   qwenWaits,
		resume:  resumeWith("qwen", "", "--resume", "--resume"),
		fresh:   freshWith("qwen", "-i", "--prompt-interactive"),
		failure: qwenFailure,
		// Its TUI sends StopFailure and then, back at its prompt,
		// idle_prompt, each hook on its own: the idle_prompt may land
		// first and end the turn, which must then read the failure.
		stopFailures: true,
		writes:       qwenTools.writes,
	}
}

// endsAtIdlePrompt takes a Notification of type idle_prompt: it ends the
// running turn (Qwen Code and Droid send it as they are back at their
// prompt, after an Esc too, which fires no Stop). A notification of any
// other type is left to the agent's waits (permission_prompt).
func endsAtIdlePrompt(ev *Event, payload []byte) bool {
	if ev.Native != "Notification" {
		return false
	}
	var typ string
	if decode(payload, []wireField{{name: "notification_type", str: &typ}}) != nil || typ != "idle_prompt" {
		return false
	}
	ev.Kind = state.EventTurnEnd
	return true
}

// qwenFailure reads one line of a Qwen Code transcript: ok when it is a
// message of the conversation or a model call's record, and then msg is
// the error of a failed model call ({"type":"system","subtype":
// "ui_telemetry","systemPayload":{"uiEvent":{"event.name":
// "qwen-code.api_error","error_message":…}}}), "" for any other.
func qwenFailure(line []byte) (msg string, ok bool) {
	if !bytes.Contains(line, []byte(`"type":"user"`)) && !bytes.Contains(line, []byte(`"type":"assistant"`)) &&
		!bytes.Contains(line, []byte(`"qwen-code.api_`)) {
		return "", false
	}
	var typ, subtype string
	var payload []byte
	if decode(line, []wireField{{name: "type", str: &typ}, {name: "subtype", str: &subtype}, {name: "systemPayload", raw: &payload}}) != nil {
		return "", false
	}
	switch {
	case typ == "user" || typ == "assistant":
		return "", true
	case typ != "system" || subtype != "ui_telemetry":
		return "", false
	}
	var ui []byte
	if decode(payload, []wireField{{name: "uiEvent", raw: &ui}}) != nil {
		return "", false
	}
	var event, message, errType string
	if decode(ui, []wireField{{name: "event.name", str: &event}, {name: "error_message", str: &message}, {name: "error_type", str: &errType}}) != nil {
		return "", false
	}
	switch event {
	case "qwen-code.api_error":
		return firstNonEmpty(joinNonEmpty(errType, message), "model call failed"), true
	case "qwen-code.api_response":
		return "", true // a call answered: the conversation went on
	}
	return "", false
}
