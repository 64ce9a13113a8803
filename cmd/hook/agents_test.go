package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetherdev/tether/state"
)

// samplePayload reads agent/testdata/<dir>/<file> and points it at session
// id in r: every session key, cwd, workspace root and transcript path the
// agent's payload has is rewritten; nothing is added. hasTranscript tells
// whether the payload names a transcript.
func samplePayload(t *testing.T, r testRepo, dir, file, id string) (payload []byte, hasTranscript bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "agent", "testdata", dir, file))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s/%s: %v", dir, file, err)
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
			m[k] = r.transcript(id)
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
}

const cursorAnswer = `{"continue":true}` + "\n"

// TestAllAgents runs each agent's recorded payloads through the real
// binary, in order, and checks the phases and the turn log they leave.
func TestAllAgents(t *testing.T) {
	const (
		start = state.RecTurnStart
		end   = state.RecTurnEnd
	)
	for _, tc := range []struct {
		name, agent, dir string
		steps            []step
		endReason        string
		lastError        string
		resumable        bool   // the agent's session can still be resumed
		resumableReason  string // why not
	}{
		{name: "claude-code", agent: "claude-code", dir: "claude-code", steps: []step{
			{file: "UserPromptSubmit_agent_session.json", event: "UserPromptSubmit", phase: state.PhaseActive, turnRec: start, prompt: "review the auth module"},
			{file: "Stop_inside_subagent.json", event: "Stop", phase: state.PhaseActive},
			{file: "StopFailure.json", event: "StopFailure", phase: state.PhaseIdle, turnRec: end},
			{file: "SessionEnd_logout.json", event: "SessionEnd", phase: state.PhaseEnded},
		}, endReason: state.EndSessionEnd, lastError: "rate_limit: 429 Too Many Requests", resumable: true},
		{name: "gemini", agent: "gemini", dir: "gemini", steps: []step{
			{file: "SessionStart_startup.json", event: "SessionStart", phase: state.PhaseIdle},
			{file: "BeforeAgent.json", event: "BeforeAgent", phase: state.PhaseActive, turnRec: start, prompt: "add a --verbose flag to the CLI"},
			{file: "BeforeModel.json", event: "BeforeModel", phase: state.PhaseActive},
			{file: "BeforeTool.json", event: "BeforeTool", phase: state.PhaseActive},
			{file: "AfterTool.json", event: "AfterTool", phase: state.PhaseActive},
			{file: "Notification.json", event: "Notification", phase: state.PhaseActive},
			{file: "AfterAgent.json", event: "AfterAgent", phase: state.PhaseIdle, turnRec: end},
			{file: "PreCompress.json", event: "PreCompress", phase: state.PhaseIdle},
			{file: "SessionEnd_exit.json", event: "SessionEnd", phase: state.PhaseEnded},
			{file: "SessionStart_resume.json", event: "SessionStart", phase: state.PhaseIdle},
			{file: "BeforeAgent.json", event: "BeforeAgent", phase: state.PhaseActive, turnRec: start, prompt: "add a --verbose flag to the CLI"},
			{file: "SessionEnd_prompt_input_exit.json", event: "SessionEnd", phase: state.PhaseEnded},
		}, endReason: state.EndInterrupted, resumable: true},
		{name: "codex", agent: "codex", dir: "codex", steps: []step{
			{file: "SessionStart_startup.json", event: "SessionStart", phase: state.PhaseIdle},
			{file: "UserPromptSubmit.json", event: "UserPromptSubmit", phase: state.PhaseActive, turnRec: start, prompt: "fix the flaky test in store_test.go"},
			{file: "PreToolUse.json", event: "PreToolUse", phase: state.PhaseActive},
			{file: "PostToolUse.json", event: "PostToolUse", phase: state.PhaseActive},
			{file: "SubagentStart.json", event: "SubagentStart", phase: state.PhaseActive},
			{file: "Stop_inside_subagent.json", event: "Stop", phase: state.PhaseActive},
			{file: "notify_agent-turn-complete.json", argv: true, phase: state.PhaseIdle, turnRec: end},
			{file: "UserPromptSubmit.json", event: "UserPromptSubmit", phase: state.PhaseActive, turnRec: start, prompt: "fix the flaky test in store_test.go"},
			{file: "Stop.json", event: "Stop", phase: state.PhaseIdle, turnRec: end},
			{file: "SessionEnd.json", event: "SessionEnd", phase: state.PhaseEnded},
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
			{file: "beforeSubmitPrompt.json", event: "beforeSubmitPrompt", phase: state.PhaseActive, stdout: cursorAnswer, turnRec: start, prompt: "rename Store.Open to Store.Load"},
			{file: "stop_error.json", event: "stop", phase: state.PhaseIdle, turnRec: end},
			{file: "sessionEnd.json", event: "sessionEnd", phase: state.PhaseEnded},
		}, endReason: state.EndSessionEnd, lastError: "agent loop ended with an error", resumable: true},
		{name: "copilot", agent: "copilot", dir: "copilot", steps: []step{
			{file: "sessionStart.json", event: "sessionStart", phase: state.PhaseIdle},
			{file: "userPromptSubmitted.json", event: "userPromptSubmitted", phase: state.PhaseActive, turnRec: start, prompt: "summarize the open TODOs"},
			{file: "preToolUse.json", event: "preToolUse", phase: state.PhaseActive},
			{file: "postToolUseFailure.json", event: "postToolUseFailure", phase: state.PhaseActive},
			{file: "errorOccurred_recoverable.json", event: "errorOccurred", phase: state.PhaseActive},
			{file: "notification.json", event: "notification", phase: state.PhaseActive},
			{file: "subagentStop.json", event: "subagentStop", phase: state.PhaseActive},
			{file: "agentStop.json", event: "agentStop", phase: state.PhaseIdle, turnRec: end},
			{file: "userPromptSubmitted.json", event: "userPromptSubmitted", phase: state.PhaseActive, turnRec: start, prompt: "summarize the open TODOs"},
			{file: "errorOccurred.json", event: "errorOccurred", phase: state.PhaseIdle, turnRec: end},
			{file: "sessionEnd.json", event: "sessionEnd", phase: state.PhaseEnded},
			{file: "sessionStart_resume.json", event: "sessionStart", phase: state.PhaseIdle},
		}, lastError: "", resumable: true}, // the resume cleared the old error
		{name: "copilot VS Code format", agent: "copilot", dir: "copilot", steps: []step{
			{file: "SessionStart_vscode.json", event: "SessionStart", phase: state.PhaseIdle},
			{file: "UserPromptSubmit_vscode.json", event: "UserPromptSubmit", phase: state.PhaseActive, turnRec: start, prompt: "summarize the open TODOs"},
			{file: "Stop_vscode.json", event: "Stop", phase: state.PhaseIdle, turnRec: end},
			{file: "UserPromptSubmit_vscode.json", event: "UserPromptSubmit", phase: state.PhaseActive, turnRec: start, prompt: "summarize the open TODOs"},
			// The agent says the session is gone: a dead resume token.
			{file: "ErrorOccurred_vscode.json", event: "ErrorOccurred", phase: state.PhaseIdle, turnRec: end},
			{file: "SessionEnd_vscode.json", event: "SessionEnd", phase: state.PhaseEnded},
		}, endReason: state.EndSessionEnd, lastError: "SessionError: Session not found: 6e5d4c3b-2a19-4f08-b7e6-d5c4b3a29180",
			resumableReason: "agent reported the session is gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			const id = "e2e-session"
			head := r.head(t)
			var want []state.TurnRecord
			turn := 0
			transcriptKnown := false // some payload named it: the hook measures it from then on
			for i, st := range tc.steps {
				// The agent writes its transcript as the session goes.
				appendLine(t, r.transcript(id), fmt.Sprintf(`{"step":%d}`, i))
				payload, hasTranscript := samplePayload(t, r, tc.dir, st.file, id)
				transcriptKnown = transcriptKnown || hasTranscript
				var size int64
				if transcriptKnown {
					size = fileSize(r.transcript(id))
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
				run := runHook(t, r.dir, stdin, nil, args...)
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
					want = append(want, state.TurnRecord{T: start, Turn: turn, Prompt: st.prompt, Head: head, TranscriptSize: size})
				case state.RecTurnEnd:
					want = append(want, state.TurnRecord{T: end, Turn: turn, Head: head, TranscriptSize: size})
				}
			}
			s := r.load(t, id)
			if s.Agent != tc.agent || s.Worktree != r.dir || s.Branch != "main" || s.Turns != turn {
				t.Errorf("agent %q, worktree %q, branch %q, %d turns; want %q, %q, main, %d", s.Agent, s.Worktree, s.Branch, s.Turns, tc.agent, r.dir, turn)
			}
			if transcriptKnown && s.TranscriptPath != r.transcript(id) {
				t.Errorf("transcript path %q, want %q", s.TranscriptPath, r.transcript(id))
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
