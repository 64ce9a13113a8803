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
		wait                        state.Wait
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
	// Droid's dialog names no call: the hook reads it from the transcript
	// (DialogCall). Qwen Code's names the tool.
	dialog := want{kind: state.EventWait, wait: state.Wait{Kind: state.WaitPermission}}
	qwenDialog := func(tool string) want {
		return want{kind: state.EventWait, wait: state.Wait{Kind: state.WaitPermission, Detail: "Qwen Code needs your permission to use " + tool}}
	}
	ran := func(tool string) want { return want{kind: state.EventWaitOver, wait: state.Wait{Key: tool}} }
	unannounced := want{kind: state.EventTurnStart, unannounced: true}
	const (
		qwPlain = "131901a8-06d4-4ffb-9c9f-4f149b238660"
		qwWrite = "7b76b3ff-44f4-4f5a-8522-7b3d3cacbfd9"
		qwFail  = "532ec477-5b94-4502-a566-e2ab7f6bf5f3"
		qwTUI   = "d964033d-4465-4088-b0f3-c0ea2a2e0f58"
		qwWait  = "d4778067-cfaa-4d46-9e76-e041b622bddd########"
	)
	table := map[string]want{
		// droid exec: no UserPromptSubmit; PreToolUse says a turn runs.
		"droid/exec_plain_01_SessionStart.json":     start("startup"),
		"droid/exec_plain_02_Stop.json":             end,
		"droid/exec_plain_03_SessionEnd.json":       bye("other"),
		"droid/exec_write_01_SessionStart.json":     start("startup"),
		"droid/exec_write_02_PreToolUse.json":       unannounced,
		"droid/exec_write_03_PostToolUse.json":      ran("Create"),
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
		// The TUI in its default mode, Auto (Off): each call waits for
		// approval. PreToolUse, then permission_prompt as the dialog
		// shows; approved, PostToolUse; denied (Esc, or "No, cancel"),
		// Stop.
		"droid/tui_wait_01_SessionStart.json":     start("startup"),
		"droid/tui_wait_02_UserPromptSubmit.json": turn("make a file [[write a.txt]]"),
		"droid/tui_wait_03_PreToolUse.json":       unannounced,
		"droid/tui_wait_04_Notification.json":     dialog,
		"droid/tui_wait_05_PostToolUse.json":      ran("Create"),
		"droid/tui_wait_06_Stop.json":             end,
		"droid/tui_wait_07_UserPromptSubmit.json": turn("another [[write b.txt]]"),
		"droid/tui_wait_08_PreToolUse.json":       unannounced,
		"droid/tui_wait_09_Notification.json":     dialog,
		"droid/tui_wait_10_Stop.json":             end, // Esc
		"droid/tui_wait_11_UserPromptSubmit.json": turn("run [[shell c.txt]]"),
		"droid/tui_wait_12_PreToolUse.json":       unannounced,
		"droid/tui_wait_13_Notification.json":     dialog,
		"droid/tui_wait_14_Stop.json":             end, // "No, cancel"
		"droid/tui_wait_15_UserPromptSubmit.json": turn("one more [[write d.txt]]"),
		"droid/tui_wait_16_PreToolUse.json":       unannounced,
		"droid/tui_wait_17_Notification.json":     dialog,
		"droid/tui_wait_18_PostToolUse.json":      ran("Create"),
		"droid/tui_wait_19_Stop.json":             end,
		"droid/tui_wait_20_SessionEnd.json":       bye("other"),
		"droid/tui_wait_21_SessionEnd.json":       bye("other"),

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
		// The TUI in its default mode, auto: a write in the worktree runs
		// with no dialog (no signal, no wait); a shell command its
		// classifier cannot judge (the mock is no classifier) is asked:
		// PermissionRequest, which is no dialog's signal (it fires before
		// the hooks may answer, and for background agents that cannot
		// ask), then permission_prompt as the dialog shows. Approved:
		// PostToolUse; denied (Esc): only idle_prompt, the turn's end. Then
		// /approval-mode default, where a write asks too.
		"qwen/tui_wait_01_SessionStart.json":      start("startup"),
		"qwen/tui_wait_02_UserPromptSubmit.json":  qwenKey(turn("make a file [[write a.txt]]"), qwWait+"0"),
		"qwen/tui_wait_03_PreToolUse.json":        qwenKey(skip, qwWait+"0"),
		"qwen/tui_wait_04_PostToolUse.json":       qwenKey(ran("write_file"), qwWait+"0"),
		"qwen/tui_wait_05_UserPromptSubmit.json":  qwenKey(turn(""), qwWait+"0"),
		"qwen/tui_wait_06_Stop.json":              qwenKey(end, qwWait+"0"),
		"qwen/tui_wait_07_Notification.json":      qwenKey(end, qwWait+"0"),
		"qwen/tui_wait_08_UserPromptSubmit.json":  qwenKey(turn("run it [[shell b.txt]]"), qwWait+"1"),
		"qwen/tui_wait_09_PermissionRequest.json": qwenKey(skip, qwWait+"1"),
		"qwen/tui_wait_10_Notification.json":      qwenKey(qwenDialog("run_shell_command"), qwWait+"1"),
		"qwen/tui_wait_11_PreToolUse.json":        skip,
		"qwen/tui_wait_12_PostToolUse.json":       ran("run_shell_command"),
		"qwen/tui_wait_13_UserPromptSubmit.json":  qwenKey(turn(""), qwWait+"1"),
		"qwen/tui_wait_14_Stop.json":              qwenKey(end, qwWait+"1"),
		"qwen/tui_wait_15_Notification.json":      end,
		"qwen/tui_wait_16_UserPromptSubmit.json":  qwenKey(turn("again [[shell c.txt]]"), qwWait+"2"),
		"qwen/tui_wait_17_PermissionRequest.json": qwenKey(skip, qwWait+"2"),
		"qwen/tui_wait_18_Notification.json":      qwenKey(qwenDialog("run_shell_command"), qwWait+"2"),
		"qwen/tui_wait_19_Notification.json":      end, // Esc denied
		"qwen/tui_wait_20_Notification.json":      qwenKey(end, qwWait+"3"),
		"qwen/tui_wait_21_UserPromptSubmit.json":  qwenKey(turn("write [[write d.txt]]"), qwWait+"3"),
		"qwen/tui_wait_22_PermissionRequest.json": qwenKey(skip, qwWait+"3"),
		"qwen/tui_wait_23_Notification.json":      qwenKey(qwenDialog("write_file"), qwWait+"3"),
		"qwen/tui_wait_24_PreToolUse.json":        skip,
		"qwen/tui_wait_25_PostToolUse.json":       ran("write_file"),
		"qwen/tui_wait_26_UserPromptSubmit.json":  qwenKey(turn(""), qwWait+"3"),
		"qwen/tui_wait_27_Stop.json":              qwenKey(end, qwWait+"3"),
		"qwen/tui_wait_28_Notification.json":      end,
		"qwen/tui_wait_29_UserPromptSubmit.json":  qwenKey(turn("write [[write e.txt]]"), qwWait+"4"),
		"qwen/tui_wait_30_PermissionRequest.json": qwenKey(skip, qwWait+"4"),
		"qwen/tui_wait_31_Notification.json":      qwenKey(qwenDialog("write_file"), qwWait+"4"),
		"qwen/tui_wait_32_Notification.json":      end, // Esc denied
		"qwen/tui_wait_33_SessionEnd.json":        bye("prompt_input_exit"),

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
			Reason: w.reason, Key: firstNonEmpty(w.key, p.Timestamp), OwnerPID: p.PiPID, Wait: w.wait}
		if w.kind == state.EventSessionStart {
			e.Model = p.Model
		}
		out = append(out, sample{agent: agentName, file: filepath.Join("recorded", file), want: e})
	}
	return out
}
