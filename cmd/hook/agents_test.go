package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetherdev/tether/agent"
	"github.com/tetherdev/tether/state"
)

// samplePayload reads agent/testdata/<dir>/<file> (or <file>, when it has
// a directory) and points it at session
// id in r: every session key, cwd, workspace root and transcript path the
// agent's payload has is rewritten (to transcript); nothing is added.
// hasTranscript tells whether the payload names a transcript.
func samplePayload(t *testing.T, r testRepo, dir, file, id, transcript string) (payload []byte, hasTranscript bool) {
	t.Helper()
	if !strings.Contains(file, "/") {
		file = filepath.Join(dir, file) // else it names its own directory
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "agent", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s/%s: %v", dir, file, err)
	}
	if inner, ok := m["payload"].(map[string]any); ok {
		m = inner // a Codex notify recording: the JSON the program got
	}
	if inner, ok := m["stdin"].(map[string]any); ok {
		m = inner // a recording of the hook's argv and stdin (OpenCode's plugin)
	}
	for _, k := range []string{"session_id", "sessionId", "conversation_id", "thread-id"} {
		if _, ok := m[k]; ok {
			m[k] = id
		}
	}
	if _, ok := m["cwd"]; ok {
		m["cwd"] = r.dir
	}
	if _, ok := m["workspace_roots"]; ok {
		m["workspace_roots"] = []string{r.dir}
	}
	for _, k := range []string{"transcript_path", "transcriptPath"} {
		if v, ok := m[k]; ok && v != nil {
			m[k] = transcript
			hasTranscript = true
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out, hasTranscript
}

// step is one hook call of an agent's session.
type step struct {
	file    string      // sample payload
	event   string      // event argument, as install configures it
	argv    bool        // payload as the last argument (Codex notify)
	phase   state.Phase // phase after the call
	stdout  string      // the protocol's answer
	turnRec string      // the turn record this call appends, if any
	prompt  string      // of that record
	recErr  string      // the error that record carries (a turn that failed)
}

const cursorAnswer = `{"continue":true}` + "\n"

// TestAllAgents runs each agent's payloads — recorded from the real CLIs
// (recorded/<agent>), or written from the documentation where nothing was
// recorded — through the real binary, in order, and checks the phases and
// the turn log they leave.
func TestAllAgents(t *testing.T) {
	const (
		start = state.RecTurnStart
		end   = state.RecTurnEnd
	)
	copilotHome := func(r testRepo) string { return filepath.Join(r.scratch, "copilot") }
	for _, tc := range []struct {
		name, agent, dir string
		steps            []step
		endReason        string
		lastError        string
		resumable        bool   // the agent's session can still be resumed
		resumableReason  string // why not
		// derived: the agent's home, where the hook finds the transcript
		// from the first event on (nil: the payloads name it).
		derived func(r testRepo) string
	}{
		{name: "claude-code", agent: "claude-code", dir: "recorded/claude-code", steps: []step{
			{file: "SessionStart_startup.json", event: "SessionStart", phase: state.PhaseIdle},
			{file: "UserPromptSubmit.json", event: "UserPromptSubmit", phase: state.PhaseActive, turnRec: start, prompt: "say hi"},
			// The same prompt again, through a second config: one turn.
			{file: "UserPromptSubmit.json", event: "UserPromptSubmit", phase: state.PhaseActive},
			{file: "PreToolUse_Bash.json", event: "PreToolUse", phase: state.PhaseActive},
			// A tool call's dialog, its reminder 6 s on, the approval.
			{file: "interactive_PermissionRequest_Bash.json", event: "PermissionRequest", phase: state.PhaseWaiting},
			{file: "interactive_Notification_permission_prompt.json", event: "Notification", phase: state.PhaseWaiting},
			{file: "interactive_PostToolUse_Bash_after_approval.json", event: "PostToolUse", phase: state.PhaseActive},
			// Another tool's end ends no wait; AskUserQuestion's does.
			{file: "interactive_PermissionRequest_AskUserQuestion.json", event: "PermissionRequest", phase: state.PhaseWaiting},
			{file: "PostToolUse_Write.json", event: "PostToolUse", phase: state.PhaseWaiting},
			{file: "interactive_PostToolUse_AskUserQuestion.json", event: "PostToolUse", phase: state.PhaseActive},
			{file: "claude-code/Stop_inside_subagent.json", event: "Stop", phase: state.PhaseActive},
			{file: "claude-code/StopFailure.json", event: "StopFailure", phase: state.PhaseIdle, turnRec: end, recErr: "rate_limit: 429 Too Many Requests"},
			{file: "SessionEnd.json", event: "SessionEnd", phase: state.PhaseEnded},
		}, endReason: state.EndSessionEnd, lastError: "rate_limit: 429 Too Many Requests", resumable: true},
		{name: "gemini", agent: "gemini", dir: "recorded/gemini", steps: []step{
			{file: "SessionStart_startup.json", event: "SessionStart", phase: state.PhaseIdle},
			{file: "BeforeAgent.json", event: "BeforeAgent", phase: state.PhaseActive, turnRec: start, prompt: "say hi"},
			{file: "BeforeAgent.json", event: "BeforeAgent", phase: state.PhaseActive}, // delivered twice
			{file: "PreCompress_auto.json", event: "PreCompress", phase: state.PhaseActive},
			{file: "BeforeModel.json", event: "BeforeModel", phase: state.PhaseActive},
			{file: "BeforeToolSelection.json", event: "BeforeToolSelection", phase: state.PhaseActive},
			{file: "AfterModel.json", event: "AfterModel", phase: state.PhaseActive},
			{file: "BeforeTool_write_file.json", event: "BeforeTool", phase: state.PhaseActive},
			{file: "Notification_ToolPermission.json", event: "Notification", phase: state.PhaseWaiting},
			{file: "AfterTool_write_file.json", event: "AfterTool", phase: state.PhaseActive},
			{file: "AfterAgent.json", event: "AfterAgent", phase: state.PhaseIdle, turnRec: end},
			{file: "SessionEnd_exit.json", event: "SessionEnd", phase: state.PhaseEnded},
			{file: "SessionStart_resume.json", event: "SessionStart", phase: state.PhaseIdle},
			{file: "SessionEnd_clear.json", event: "SessionEnd", phase: state.PhaseEnded},
		}, endReason: state.EndSessionEnd, resumable: true},
		{name: "codex", agent: "codex", dir: "recorded/codex", steps: []step{
			{file: "SessionStart_startup.json", event: "SessionStart", phase: state.PhaseIdle},
			{file: "UserPromptSubmit.json", event: "UserPromptSubmit", phase: state.PhaseActive, turnRec: start, prompt: "say hi"},
			{file: "PreToolUse_Bash.json", event: "PreToolUse", phase: state.PhaseActive},
			{file: "PostToolUse_Bash.json", event: "PostToolUse", phase: state.PhaseActive},
			{file: "PermissionRequest_tui_escalated.json", event: "PermissionRequest", phase: state.PhaseWaiting},
			{file: "PostToolUse_tui_after_approval.json", event: "PostToolUse", phase: state.PhaseActive},
			{file: "PreToolUse_tui_request_user_input.json", event: "PreToolUse", phase: state.PhaseWaiting},
			{file: "PostToolUse_tui_request_user_input.json", event: "PostToolUse", phase: state.PhaseActive},
			{file: "Stop.json", event: "Stop", phase: state.PhaseIdle, turnRec: end},
			{file: "notify_exec_argv.json", argv: true, phase: state.PhaseIdle}, // the turn already ended
			{file: "UserPromptSubmit_tui.json", event: "UserPromptSubmit", phase: state.PhaseActive, turnRec: start,
				prompt: "hello from the tuiMOCK_STALL esc me"},
			// Esc: the turn ends, the session goes on.
			{file: "Interrupt_tui_esc.json", event: "Interrupt", phase: state.PhaseIdle, turnRec: end},
			{file: "SessionStart_resume.json", event: "SessionStart", phase: state.PhaseIdle},
			{file: "SessionEnd_exec_exit.json", event: "SessionEnd", phase: state.PhaseEnded},
		}, endReason: state.EndSessionEnd, resumable: true},
		{name: "cursor", agent: "cursor", dir: "cursor", steps: []step{
			{file: "sessionStart.json", event: "sessionStart", phase: state.PhaseIdle},
			{file: "beforeSubmitPrompt.json", event: "beforeSubmitPrompt", phase: state.PhaseActive, stdout: cursorAnswer, turnRec: start, prompt: "rename Store.Open to Store.Load"},
			{file: "preToolUse.json", event: "preToolUse", phase: state.PhaseActive},
			{file: "beforeShellExecution.json", event: "beforeShellExecution", phase: state.PhaseActive},
			{file: "afterFileEdit.json", event: "afterFileEdit", phase: state.PhaseActive},
			{file: "subagentStop.json", event: "subagentStop", phase: state.PhaseActive},
			{file: "afterAgentResponse.json", event: "afterAgentResponse", phase: state.PhaseActive},
			{file: "stop_completed.json", event: "stop", phase: state.PhaseIdle, turnRec: end},
			{file: "stop_error.json", event: "stop", phase: state.PhaseIdle},
			{file: "sessionEnd.json", event: "sessionEnd", phase: state.PhaseEnded},
		}, endReason: state.EndSessionEnd, lastError: "agent loop ended with an error", resumable: true},
		{name: "copilot", agent: "copilot", dir: "recorded/copilot", derived: copilotHome, steps: []step{
			// Either may come first; the transcript is known from the start.
			{file: "userPromptSubmitted.json", event: "userPromptSubmitted", phase: state.PhaseActive, turnRec: start, prompt: "say hi"},
			{file: "sessionStart.json", event: "sessionStart", phase: state.PhaseActive},
			{file: "userLevel_sessionStart.json", event: "sessionStart", phase: state.PhaseActive},
			{file: "userPromptTransformed.json", event: "userPromptTransformed", phase: state.PhaseActive},
			{file: "preToolUse_bash.json", event: "preToolUse", phase: state.PhaseActive},
			{file: "permissionRequest_bash.json", event: "permissionRequest", phase: state.PhaseActive},
			{file: "notification_permission_prompt.json", event: "notification", phase: state.PhaseWaiting},
			{file: "postToolUse_bash.json", event: "postToolUse", phase: state.PhaseActive},
			{file: "copilot/errorOccurred_tool_execution.json", event: "errorOccurred", phase: state.PhaseActive},
			{file: "agentStop.json", event: "agentStop", phase: state.PhaseIdle, turnRec: end},
			{file: "sessionEnd.json", event: "sessionEnd", phase: state.PhaseEnded},
			{file: "userLevel_sessionEnd.json", event: "sessionEnd", phase: state.PhaseEnded},
			{file: "sessionStart_resume.json", event: "sessionStart", phase: state.PhaseIdle},
			// The first prompt's delivery once more: not a new turn.
			{file: "userPromptSubmitted.json", event: "userPromptSubmitted", phase: state.PhaseIdle},
		}, resumable: true},
		// A fatal model error, marked recoverable: the turn failed.
		{name: "copilot failed turn", agent: "copilot", dir: "recorded/copilot", derived: copilotHome, steps: []step{
			{file: "sessionStart.json", event: "sessionStart", phase: state.PhaseIdle},
			{file: "userPromptSubmitted.json", event: "userPromptSubmitted", phase: state.PhaseActive, turnRec: start, prompt: "say hi"},
			{file: "errorOccurred_model_call.json", event: "errorOccurred", phase: state.PhaseIdle, turnRec: end, recErr: "Error: mock failure (MOCK_FAIL)"},
			{file: "sessionEnd_error.json", event: "sessionEnd", phase: state.PhaseEnded},
		}, endReason: state.EndSessionEnd, lastError: "Error: mock failure (MOCK_FAIL)", resumable: true},
		{name: "copilot VS Code format", agent: "copilot", dir: "recorded/copilot", derived: copilotHome, steps: []step{
			{file: "SessionStart_vscode.json", event: "SessionStart", phase: state.PhaseIdle},
			{file: "UserPromptSubmit_vscode.json", event: "UserPromptSubmit", phase: state.PhaseActive, turnRec: start, prompt: "say hi"},
			{file: "PreToolUse_vscode_Bash.json", event: "PreToolUse", phase: state.PhaseActive},
			{file: "PostToolUse_vscode_Bash.json", event: "PostToolUse", phase: state.PhaseActive},
			{file: "Stop_vscode.json", event: "Stop", phase: state.PhaseIdle, turnRec: end},
			// The agent says the session is gone: a dead resume token.
			{file: "copilot/ErrorOccurred_vscode.json", event: "ErrorOccurred", phase: state.PhaseIdle},
			{file: "SessionEnd_vscode.json", event: "SessionEnd", phase: state.PhaseEnded},
		}, endReason: state.EndSessionEnd, lastError: "SessionError: Session not found: 6e5d4c3b-2a19-4f08-b7e6-d5c4b3a29180",
			resumableReason: "agent reported the session is gone"},
		// tether's plugin in the real OpenCode: a new session, then a
		// resumed one (no session start) whose turn failed.
		{name: "opencode", agent: "opencode", dir: "recorded/opencode/tether_plugin", steps: []step{
			{file: "sessionStart.json", event: "sessionStart", phase: state.PhaseIdle},
			{file: "turnStart.json", event: "turnStart", phase: state.PhaseActive, turnRec: start, prompt: `"say hi via plugin"`},
			{file: "turnStart.json", event: "turnStart", phase: state.PhaseActive}, // the same message again
			{file: "turnEnd.json", event: "turnEnd", phase: state.PhaseIdle, turnRec: end},
			{file: "turnStart_resumed.json", event: "turnStart", phase: state.PhaseActive, turnRec: start, prompt: `"please FAIL now"`},
			{file: "error_APIError.json", event: "error", phase: state.PhaseIdle, turnRec: end, recErr: "APIError: mock failure"},
			{file: "turnEnd_after_error.json", event: "turnEnd", phase: state.PhaseIdle},
		}, lastError: "APIError: mock failure", resumable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			const id = "e2e-session"
			head := r.head(t)
			transcript := r.transcriptOf(tc.agent, id)
			var env []string
			if tc.derived != nil {
				home := tc.derived(r)
				env = []string{"COPILOT_HOME=" + home}
				transcript = filepath.Join(home, "session-state", id, "events.jsonl")
				if err := os.MkdirAll(filepath.Dir(transcript), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			var want []state.TurnRecord
			turn := 0
			transcriptKnown := tc.derived != nil // else some payload names it: the hook measures it from then on
			for i, st := range tc.steps {
				// The agent writes its transcript as the session goes
				// (OpenCode keeps its own in a database).
				if info, _ := agent.Lookup(tc.agent); !info.Database {
					appendLine(t, transcript, fmt.Sprintf(`{"step":%d}`, i))
				}
				payload, hasTranscript := samplePayload(t, r, tc.dir, st.file, id, transcript)
				transcriptKnown = transcriptKnown || hasTranscript
				var size int64
				if transcriptKnown {
					size = sizeOf(t, transcript)
				}
				args := []string{tc.agent}
				if st.event != "" {
					args = append(args, st.event)
				}
				var stdin []byte
				if st.argv {
					args = append(args, string(payload))
				} else {
					stdin = payload
				}
				run := runHook(t, r.dir, stdin, env, args...)
				if run.stdout != st.stdout || run.stderr != "" {
					t.Fatalf("step %d (%s): stdout %q, stderr %q; want stdout %q and no stderr", i, st.file, run.stdout, run.stderr, st.stdout)
				}
				s := r.load(t, id)
				if s.Phase != st.phase {
					t.Fatalf("step %d (%s): phase %q, want %q", i, st.file, s.Phase, st.phase)
				}
				switch st.turnRec {
				case state.RecTurnStart:
					turn++
					want = append(want, state.TurnRecord{T: start, Turn: turn, Prompt: st.prompt, Head: head, TranscriptSize: size, Key: s.LastTurnKey})
				case state.RecTurnEnd:
					want = append(want, state.TurnRecord{T: end, Turn: turn, Head: head, TranscriptSize: size, Error: st.recErr})
				}
			}
			s := r.load(t, id)
			if s.Agent != tc.agent || s.Worktree != r.dir || s.Branch != "main" || s.Turns != turn {
				t.Errorf("agent %q, worktree %q, branch %q, %d turns; want %q, %q, main, %d", s.Agent, s.Worktree, s.Branch, s.Turns, tc.agent, r.dir, turn)
			}
			if transcriptKnown && s.TranscriptPath != transcript {
				t.Errorf("transcript path %q, want %q", s.TranscriptPath, transcript)
			}
			if s.Resumable != tc.resumable || s.ResumableReason != tc.resumableReason {
				t.Errorf("resumable %v (%q), want %v (%q)", s.Resumable, s.ResumableReason, tc.resumable, tc.resumableReason)
			}
			if s.EndReason != tc.endReason || s.LastError != tc.lastError {
				t.Errorf("end reason %q, last error %q; want %q, %q", s.EndReason, s.LastError, tc.endReason, tc.lastError)
			}
			checkTurns(t, r.turns(t, id), want)
		})
	}
}

func appendLine(t testing.TB, path, line string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func sizeOf(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// checkTurns compares turn records, ignoring their times.
func checkTurns(t *testing.T, got, want []state.TurnRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("turn log has %d records, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range got {
		if got[i].At.IsZero() {
			t.Errorf("record %d has no time", i)
		}
		// Every turn start names the owner captured for it, so the record
		// alone says what the turn changed; a turn end names none.
		if (got[i].T == state.RecTurnStart) != (got[i].Owner != nil) {
			t.Errorf("record %d (%s) has owner %+v", i, got[i].T, got[i].Owner)
		}
		got[i].At, got[i].Owner = want[i].At, want[i].Owner
		if got[i] != want[i] {
			t.Errorf("record %d = %+v\nwant %+v", i, got[i], want[i])
		}
	}
}
