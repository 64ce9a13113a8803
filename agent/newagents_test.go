package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetherdev/tether/state"
)

// recordedSamples maps the payloads recorded from Droid 0.225.2, Qwen Code
// 0.24.4 and tether's extension in Pi 0.73.1 (testdata/recorded/README.md)
// to their events. What the event says of itself (kind, prompt, source,
// reason, key) is written here; where it was sent from (session, cwd,
// transcript, model, pid) is read from the payload.
func recordedSamples(t testing.TB) []sample {
	type want struct {
		kind                        state.Event
		ignore, unannounced         bool
		prompt, source, reason, key string
	}
	start := func(source string) want { return want{kind: state.EventSessionStart, source: source} }
	turn := func(prompt string) want { return want{kind: state.EventTurnStart, prompt: prompt} }
	end := want{kind: state.EventTurnEnd}
	bye := func(reason string) want { return want{kind: state.EventSessionEnd, reason: reason} }
	skip := want{ignore: true}
	qwenTurn := func(id, prompt string) want {
		return want{kind: state.EventTurnStart, prompt: prompt, key: id + "########0"}
	}
	qwenKey := func(w want, id string) want { w.key = id; return w }
	const (
		qwPlain = "131901a8-06d4-4ffb-9c9f-4f149b238660"
		qwWrite = "7b76b3ff-44f4-4f5a-8522-7b3d3cacbfd9"
		qwFail  = "532ec477-5b94-4502-a566-e2ab7f6bf5f3"
		qwTUI   = "d964033d-4465-4088-b0f3-c0ea2a2e0f58"
	)
	table := map[string]want{
		// droid exec: no UserPromptSubmit; PreToolUse says a turn runs.
		"droid/exec_plain_01_SessionStart.json":     start("startup"),
		"droid/exec_plain_02_Stop.json":             end,
		"droid/exec_plain_03_SessionEnd.json":       bye("other"),
		"droid/exec_write_01_SessionStart.json":     start("startup"),
		"droid/exec_write_02_PreToolUse.json":       {kind: state.EventTurnStart, unannounced: true},
		"droid/exec_write_03_PostToolUse.json":      skip,
		"droid/exec_write_04_Stop.json":             end,
		"droid/exec_write_05_SessionEnd.json":       bye("other"),
		"droid/exec_fail_01_SessionStart.json":      start("startup"),
		"droid/exec_fail_02_Stop.json":              end, // the transcript says it failed
		"droid/exec_fail_03_SessionEnd.json":        bye("other"),
		"droid/exec_resume_01_SessionStart.json":    start("resume"),
		"droid/exec_resume_02_Stop.json":            end,
		"droid/exec_resume_03_SessionEnd.json":      bye("other"),
		"droid/exec_sigint_01_SessionStart.json":    start("startup"),
		"droid/exec_sigint_02_SessionEnd.json":      bye("prompt_input_exit"),
		"droid/tui_01_SessionStart.json":            start("startup"),
		"droid/tui_02_UserPromptSubmit.json":        turn("say hello"),
		"droid/tui_03_Stop.json":                    end,
		"droid/tui_04_UserPromptSubmit.json":        turn("wait [[hold]]"),
		"droid/tui_05_Notification.json":            end, // idle_prompt after Esc: "Agent stopped by user"
		"droid/tui_06_UserPromptSubmit.json":        turn("boom [[fail]]"),
		"droid/tui_07_Stop.json":                    end,
		"droid/tui_08_SessionEnd.json":              bye("other"), // /quit fires it twice
		"droid/tui_09_SessionEnd.json":              bye("other"),
		"droid/tui_resume_01_SessionStart.json":     start("resume"),
		"droid/tui_resume_02_UserPromptSubmit.json": turn("go on"),
		"droid/tui_resume_03_Stop.json":             end,
		"droid/tui_resume_04_SessionEnd.json":       bye("other"),
		"droid/tui_resume_05_SessionEnd.json":       bye("other"),

		// qwen headless: no SessionEnd; a tool's result comes back under a
		// second UserPromptSubmit of the same prompt_id.
		"qwen/headless_plain_01_SessionStart.json":     start("startup"),
		"qwen/headless_plain_02_Notification.json":     skip, // auth_success
		"qwen/headless_plain_03_UserPromptSubmit.json": qwenTurn(qwPlain, "say hello"),
		"qwen/headless_plain_04_Stop.json":             qwenKey(end, qwPlain+"########0"),
		"qwen/headless_write_01_SessionStart.json":     start("startup"),
		"qwen/headless_write_02_Notification.json":     skip,
		"qwen/headless_write_03_UserPromptSubmit.json": qwenTurn(qwWrite, "make it [[write a.txt]]"),
		"qwen/headless_write_04_PreToolUse.json":       qwenKey(skip, qwWrite+"########0"),
		"qwen/headless_write_05_UserPromptSubmit.json": qwenTurn(qwWrite, ""),
		"qwen/headless_write_06_Stop.json":             qwenKey(end, qwWrite+"########0"),
		"qwen/headless_fail_01_SessionStart.json":      start("startup"),
		"qwen/headless_fail_02_Notification.json":      skip,
		"qwen/headless_fail_03_UserPromptSubmit.json":  qwenTurn(qwFail, "boom [[fail]]"),
		"qwen/headless_resume_01_SessionStart.json":    start("resume"),
		"qwen/headless_resume_02_Notification.json":    skip,
		// Resumed, the prompts count on from the session's earlier ones.
		"qwen/headless_resume_03_UserPromptSubmit.json": qwenKey(turn("carry on"), qwPlain+"########2"),
		"qwen/headless_resume_04_Stop.json":             qwenKey(end, qwPlain+"########2"),
		"qwen/tui_01_SessionStart.json":                 start("startup"),
		"qwen/tui_02_UserPromptSubmit.json":             qwenTurn(qwTUI, "say hello"),
		"qwen/tui_03_Stop.json":                         qwenKey(end, qwTUI+"########0"),
		"qwen/tui_04_Notification.json":                 end, // idle_prompt, after the Stop
		"qwen/tui_05_UserPromptSubmit.json":             qwenKey(turn("wait [[hold]]"), qwTUI+"########1"),
		"qwen/tui_06_Notification.json":                 end, // idle_prompt: Esc ended the turn
		"qwen/tui_07_UserPromptSubmit.json":             qwenKey(turn("boom [[fail]]"), qwTUI+"########2"),
		"qwen/tui_08_StopFailure.json": qwenKey(want{kind: state.EventError,
			reason: "invalid_request: 400 mock failure (MOCK_FAIL)"}, qwTUI+"########2"),
		"qwen/tui_09_Notification.json": end,
		"qwen/tui_10_SessionEnd.json":   bye("prompt_input_exit"),

		// pi: the events of tether's own extension.
		"pi/p_plain_01_sessionStart.json":  start("startup"),
		"pi/p_plain_02_turnStart.json":     turn("say hello"),
		"pi/p_plain_03_turnEnd.json":       end,
		"pi/p_plain_04_sessionEnd.json":    bye("quit"),
		"pi/p_write_01_sessionStart.json":  start("startup"),
		"pi/p_write_02_turnStart.json":     turn("make it [[write a.txt]]"),
		"pi/p_write_03_turnEnd.json":       end,
		"pi/p_write_04_sessionEnd.json":    bye("quit"),
		"pi/p_fail_01_sessionStart.json":   start("startup"),
		"pi/p_fail_02_turnStart.json":      turn("boom [[fail]]"),
		"pi/p_fail_03_error.json":          {kind: state.EventError, reason: "400 mock failure (MOCK_FAIL)"},
		"pi/p_fail_04_sessionEnd.json":     bye("quit"),
		"pi/p_resume_01_sessionStart.json": start("resume"), // Pi said startup
		"pi/p_resume_02_turnStart.json":    turn("carry on"),
		"pi/p_resume_03_turnEnd.json":      end,
		"pi/p_resume_04_sessionEnd.json":   bye("quit"),
	}
	var out []sample
	for file, w := range table {
		path := filepath.Join("testdata", "recorded", file)
		var p struct {
			Event      string `json:"hook_event_name"`
			Session    string `json:"session_id"`
			Cwd        string `json:"cwd"`
			Transcript string `json:"transcript_path"`
			Model      string `json:"model"`
			PiPID      int    `json:"pi_pid"`
			Timestamp  string `json:"timestamp"`
		}
		data, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(data, &p) != nil {
			t.Fatalf("%s: %v", path, err)
		}
		agentName, _, _ := strings.Cut(file, "/")
		e := Event{Agent: agentName, Native: p.Event, Kind: w.kind, Ignore: w.ignore, Unannounced: w.unannounced,
			SessionID: p.Session, Cwd: p.Cwd, TranscriptPath: p.Transcript, Prompt: w.prompt, Source: w.source,
			Reason: w.reason, Key: firstNonEmpty(w.key, p.Timestamp), OwnerPID: p.PiPID}
		if w.kind == state.EventSessionStart {
			e.Model = p.Model
		}
		out = append(out, sample{agent: agentName, file: filepath.Join("recorded", file), want: e})
	}
	return out
}
