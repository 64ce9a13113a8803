package agent

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetherdev/tether/state"
)

// claudeFixtures are the payloads recorded from the real Claude Code CLI
// (testdata/recorded/<agent>/ holds every agent's recordings).
const claudeFixtures = "testdata/recorded/claude-code"

const (
	devCwd         = "/home/dev/project"
	harnessCwd     = "/opt/harness/runs/interactive-20261121-102920-17310/repo"
	harnessProject = "/opt/harness/runs/interactive-20261121-102920-17310/home/.claude/projects/-tmp-research-claude-harness-runs-interactive-20261121-102920-17310-repo/"
)

// set returns e changed by f, to write expectations as variations of a base.
func set(e Event, f func(*Event)) Event { f(&e); return e }

func tracked(e Event, k state.Event) Event { return set(e, func(e *Event) { e.Kind = k }) }

func ignored(e Event) Event { return set(e, func(e *Event) { e.Ignore = true }) }

// claudeDev is an event of a session recorded in /home/dev/project.
func claudeDev(id, native string) Event {
	return Event{Agent: "claude-code", Native: native, SessionID: id, Cwd: devCwd,
		TranscriptPath: "/home/dev/.claude/projects/-home-dev-project/" + id + ".jsonl"}
}

// claudeHarness is an event of a session recorded interactively.
func claudeHarness(id, native string) Event {
	return Event{Agent: "claude-code", Native: native, SessionID: id, Cwd: harnessCwd,
		TranscriptPath: harnessProject + id + ".jsonl"}
}

const (
	ccMain     = "11a11bb0-d934-478a-b554-5c62902086de"
	ccSubagent = "79c95559-3cc4-43d2-966b-3aa5a45bb3ca"
	ccBash     = "5ce3152c-4aa7-4e1f-9785-88b12ca7e6c9"
	ccWrite    = "6c2efcce-f9bb-4e48-85f7-2afcd430b0b6"
	ccTUI      = "02f9c216-7ffd-4a60-962d-6bbbf7674675"
	ccTUI1     = "9a81e922-b3fe-47ab-9ebd-0050f8be64ff"
	ccTUI2     = "fcd75c64-991d-4e70-9e04-d897e17e2890"
)

func sessionStart(e Event, source, model string) Event {
	return set(e, func(e *Event) { e.Kind, e.Source, e.Model = state.EventSessionStart, source, model })
}

func turnStart(e Event, prompt string) Event {
	return set(e, func(e *Event) { e.Kind, e.Prompt = state.EventTurnStart, prompt })
}

func sessionEnd(e Event, reason string) Event {
	return set(e, func(e *Event) { e.Kind, e.Reason = state.EventSessionEnd, reason })
}

func failed(e Event, reason string) Event {
	return set(e, func(e *Event) { e.Kind, e.Reason = state.EventError, reason })
}

// claudeFixtureWant is the event each recorded payload must map to.
var claudeFixtureWant = map[string]struct {
	want Event
	err  error
}{
	"BashToolCommand_not_a_hook.json":                    {err: ErrMissingSessionID},
	"PostCompact.json":                                   {want: ignored(claudeDev(ccMain, "PostCompact"))},
	"PreCompact.json":                                    {want: ignored(claudeDev(ccMain, "PreCompact"))},
	"PostToolUse_Agent.json":                             {want: ignored(claudeDev(ccSubagent, "PostToolUse"))},
	"PostToolUse_Bash.json":                              {want: ignored(claudeDev(ccBash, "PostToolUse"))},
	"PostToolUse_Write.json":                             {want: ignored(claudeDev(ccWrite, "PostToolUse"))},
	"PreToolUse_Agent.json":                              {want: ignored(claudeDev(ccSubagent, "PreToolUse"))},
	"PreToolUse_Bash.json":                               {want: ignored(claudeDev(ccBash, "PreToolUse"))},
	"PreToolUse_Write.json":                              {want: ignored(claudeDev(ccWrite, "PreToolUse"))},
	"SessionEnd.json":                                    {want: sessionEnd(claudeDev(ccMain, "SessionEnd"), "other")},
	"SessionEnd_sighup.json":                             {want: sessionEnd(claudeDev("27c2c105-a802-4bd7-82a1-d0710776299b", "SessionEnd"), "other")},
	"SessionEnd_sigint.json":                             {want: sessionEnd(claudeDev("4082aa9e-41b9-4356-a84c-43656e2db9ef", "SessionEnd"), "other")},
	"SessionEnd_sigterm.json":                            {want: sessionEnd(claudeDev("3c3fe698-0500-4659-a364-4f8d846b2de1", "SessionEnd"), "other")},
	"SessionStart_compact.json":                          {want: sessionStart(claudeDev(ccMain, "SessionStart"), "compact", "claude-opus-5-5")},
	"SessionStart_continue.json":                         {want: sessionStart(claudeDev(ccMain, "SessionStart"), "resume", "")},
	"SessionStart_fork.json":                             {want: sessionStart(claudeDev("aa5cf024-0af2-4c8b-a51c-6c551a7973ea", "SessionStart"), "fork", "")},
	"SessionStart_resume.json":                           {want: sessionStart(claudeDev(ccMain, "SessionStart"), "resume", "")},
	"SessionStart_resume_after_kill9.json":               {want: sessionStart(claudeDev("8c46f0c7-21ff-442d-b23b-66c6896a8b12", "SessionStart"), "resume", "")},
	"SessionStart_startup.json":                          {want: sessionStart(claudeDev(ccMain, "SessionStart"), "startup", "")},
	"Stop.json":                                          {want: tracked(claudeDev(ccMain, "Stop"), state.EventTurnEnd)},
	"SubagentStart.json":                                 {want: ignored(claudeDev(ccSubagent, "SubagentStart"))},
	"SubagentStop.json":                                  {want: ignored(claudeDev(ccSubagent, "SubagentStop"))},
	"UserPromptSubmit.json":                              {want: turnStart(claudeDev(ccMain, "UserPromptSubmit"), "say hi")},
	"interactive_Notification.json":                      {want: ignored(claudeHarness(ccTUI, "Notification"))},
	"interactive_SessionEnd_clear.json":                  {want: sessionEnd(claudeHarness(ccTUI, "SessionEnd"), "clear")},
	"interactive_SessionEnd_tui1_other.json":             {want: sessionEnd(claudeHarness(ccTUI1, "SessionEnd"), "other")},
	"interactive_SessionEnd_tui2_prompt_input_exit.json": {want: sessionEnd(claudeHarness(ccTUI2, "SessionEnd"), "prompt_input_exit")},
	"interactive_SessionStart_clear.json":                {want: sessionStart(claudeHarness(ccTUI1, "SessionStart"), "clear", "")},
	"interactive_SessionStart_startup.json":              {want: sessionStart(claudeHarness(ccTUI, "SessionStart"), "startup", "claude-opus-5-5")},
	"interactive_UserPromptSubmit.json":                  {want: turnStart(claudeHarness(ccTUI, "UserPromptSubmit"), "say hi")},
	// A recording of the hook's process chain; its "stdin" is the payload.
	"process-chain.UserPromptSubmit.json": {want: turnStart(claudeDev(ccMain, "UserPromptSubmit"), "say hi")},
}

// readFixture reads a recorded payload, unwrapping a process-chain record.
func readFixture(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	if strings.HasPrefix(filepath.Base(path), "process-chain.") {
		var rec struct {
			Stdin json.RawMessage `json:"stdin"`
		}
		if err := json.Unmarshal(data, &rec); err != nil || len(rec.Stdin) == 0 {
			t.Fatalf("%s: no stdin payload in the process-chain record (%v)", path, err)
		}
		return rec.Stdin
	}
	return data
}

func TestClaudeCodeFixtures(t *testing.T) {
	entries, err := os.ReadDir(claudeFixtures)
	if err != nil {
		t.Fatalf("the recorded Claude Code payloads: %v", err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		seen[name] = true
		tc, ok := claudeFixtureWant[name]
		if !ok {
			t.Errorf("fixture %s has no expected event: add it to claudeFixtureWant", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			payload := readFixture(t, filepath.Join(claudeFixtures, name))
			got, err := Parse("claude-code", "", payload, nil)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Parse error = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got != tc.want {
				t.Fatalf("Parse =\n  %+v\nwant\n  %+v", got, tc.want)
			}
			// The payload names its event, so a stale or wrong event
			// argument changes nothing; the alias resolves the same.
			again, err := Parse("claude", "Stop", payload, nil)
			if err != nil || again != tc.want {
				t.Fatalf("with alias and event argument: %+v, %v; want %+v", again, err, tc.want)
			}
		})
	}
	for name := range claudeFixtureWant {
		if !seen[name] {
			t.Errorf("expected fixture %s is missing from %s", name, claudeFixtures)
		}
	}
}

type sample struct {
	agent, file, eventArg string
	want                  Event
	err                   error
}

// Sample payloads written from each agent's hook documentation.
func samples() []sample {
	cc := func(native string) Event {
		id := "5b2f0d4e-7a1c-4c6e-9d3b-2f8e1a6c4d90"
		return claudeDev(id, native)
	}
	const gid = "3f1e9a2c-6b7d-4e58-a0c1-d2e3f4a5b6c7"
	gem := func(native string) Event {
		return Event{Agent: "gemini", Native: native, SessionID: gid, Cwd: devCwd,
			TranscriptPath: "/home/dev/.gemini/tmp/4f2a9c1e/chats/session-2026-11-21T10-30-" + gid + ".json"}
	}
	const xid = "019a8b2c-3d4e-7f60-8a1b-2c3d4e5f6a7b"
	cdx := func(native string) Event {
		return Event{Agent: "codex", Native: native, SessionID: xid, Cwd: devCwd, Model: "gpt-5.5-codex",
			TranscriptPath: "/home/dev/.codex/sessions/2026/11/21/rollout-2026-11-21T10-40-00-" + xid + ".jsonl"}
	}
	const uid = "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"
	cur := func(native string) Event {
		return Event{Agent: "cursor", Native: native, SessionID: uid, Cwd: devCwd, Model: "claude-opus-4-7-thinking-max",
			TranscriptPath: "/home/dev/.cursor/projects/home-dev-project/agent-transcripts/" + uid + ".txt"}
	}
	const sid = "6e5d4c3b-2a19-4f08-b7e6-d5c4b3a29180"
	cop := func(native string) Event {
		return Event{Agent: "copilot", Native: native, SessionID: sid, Cwd: devCwd}
	}
	copTranscript := "/home/dev/.copilot/session-state/" + sid + "/events.jsonl"
	return []sample{
		{agent: "claude-code", file: "StopFailure.json",
			want: failed(cc("StopFailure"), "rate_limit: 429 Too Many Requests")},
		{agent: "claude-code", file: "StopFailure_no_details.json",
			want: failed(cc("StopFailure"), "server_error: API Error: 529 overloaded")},
		{agent: "claude-code", file: "SessionEnd_logout.json", want: sessionEnd(cc("SessionEnd"), "logout")},
		{agent: "claude-code", file: "Stop_inside_subagent.json", want: ignored(claudeDev(ccSubagent, "Stop"))},
		{agent: "claude-code", file: "UserPromptSubmit_agent_session.json",
			want: turnStart(claudeDev("e0c1d2a3-b4c5-4d6e-8f70-819203a4b5c6", "UserPromptSubmit"), "review the auth module")},

		{agent: "gemini", file: "SessionStart_startup.json", want: sessionStart(gem("SessionStart"), "startup", "")},
		{agent: "gemini", file: "SessionStart_resume.json", want: sessionStart(gem("SessionStart"), "resume", "")},
		{agent: "gemini", file: "SessionStart_clear.json", want: sessionStart(gem("SessionStart"), "clear", "")},
		{agent: "gemini", file: "BeforeAgent.json", want: turnStart(gem("BeforeAgent"), "add a --verbose flag to the CLI")},
		{agent: "gemini", file: "AfterAgent.json", want: tracked(gem("AfterAgent"), state.EventTurnEnd)},
		{agent: "gemini", file: "SessionEnd_exit.json", want: sessionEnd(gem("SessionEnd"), "exit")},
		{agent: "gemini", file: "SessionEnd_prompt_input_exit.json", want: sessionEnd(gem("SessionEnd"), "prompt_input_exit")},
		{agent: "gemini", file: "BeforeTool.json", want: ignored(gem("BeforeTool"))},
		{agent: "gemini", file: "AfterTool.json", want: ignored(gem("AfterTool"))},
		{agent: "gemini", file: "BeforeModel.json", want: ignored(gem("BeforeModel"))},
		{agent: "gemini", file: "Notification.json", want: ignored(gem("Notification"))},
		{agent: "gemini", file: "PreCompress.json", want: ignored(gem("PreCompress"))},

		{agent: "codex", file: "SessionStart_startup.json", want: sessionStart(cdx("SessionStart"), "startup", "gpt-5.5-codex")},
		{agent: "codex", file: "SessionStart_resume.json", want: sessionStart(cdx("SessionStart"), "resume", "gpt-5.5-codex")},
		{agent: "codex", file: "SessionStart_no_transcript.json",
			want: set(sessionStart(cdx("SessionStart"), "startup", "gpt-5.5-codex"), func(e *Event) { e.TranscriptPath = "" })},
		{agent: "codex", file: "UserPromptSubmit.json", want: turnStart(cdx("UserPromptSubmit"), "fix the flaky test in store_test.go")},
		{agent: "codex", file: "Stop.json", want: tracked(cdx("Stop"), state.EventTurnEnd)},
		{agent: "codex", file: "StopFailure.json", want: failed(cdx("StopFailure"), "overloaded: 503 Service Unavailable")},
		{agent: "codex", file: "SessionEnd.json", want: sessionEnd(set(cdx("SessionEnd"), func(e *Event) { e.Model = "" }), "other")},
		{agent: "codex", file: "PreToolUse.json", want: ignored(cdx("PreToolUse"))},
		{agent: "codex", file: "PostToolUse.json", want: ignored(cdx("PostToolUse"))},
		{agent: "codex", file: "SubagentStart.json", want: ignored(cdx("SubagentStart"))},
		{agent: "codex", file: "Stop_inside_subagent.json", want: ignored(cdx("Stop"))},
		// The legacy notify program: the file is passed as the last argument.
		{agent: "codex", file: "notify_agent-turn-complete.json",
			want: Event{Agent: "codex", Native: "agent-turn-complete", Kind: state.EventTurnEnd, SessionID: xid, Cwd: devCwd}},

		{agent: "cursor", file: "sessionStart.json",
			want: sessionStart(set(cur("sessionStart"), func(e *Event) { e.TranscriptPath = "" }), "", "claude-opus-4-7-thinking-max")},
		{agent: "cursor", file: "beforeSubmitPrompt.json", want: turnStart(cur("beforeSubmitPrompt"), "rename Store.Open to Store.Load")},
		{agent: "cursor", file: "stop_completed.json", want: tracked(cur("stop"), state.EventTurnEnd)},
		{agent: "cursor", file: "stop_aborted.json", want: tracked(cur("stop"), state.EventTurnEnd)},
		{agent: "cursor", file: "stop_error.json", want: failed(cur("stop"), "agent loop ended with an error")},
		{agent: "cursor", file: "sessionEnd.json", want: sessionEnd(cur("sessionEnd"), "user_close")},
		{agent: "cursor", file: "sessionEnd_error.json", want: sessionEnd(cur("sessionEnd"), "error: model request failed: 500")},
		{agent: "cursor", file: "beforeShellExecution.json",
			want: ignored(set(cur("beforeShellExecution"), func(e *Event) { e.Cwd = devCwd + "/state" }))},
		{agent: "cursor", file: "afterFileEdit.json", want: ignored(cur("afterFileEdit"))},
		{agent: "cursor", file: "preToolUse.json", want: ignored(cur("preToolUse"))},
		{agent: "cursor", file: "subagentStop.json", want: ignored(cur("subagentStop"))},
		{agent: "cursor", file: "afterAgentResponse.json", want: ignored(cur("afterAgentResponse"))},

		// camelCase payloads do not name their event: the argument does.
		{agent: "copilot", file: "sessionStart.json", eventArg: "sessionStart", want: sessionStart(cop("sessionStart"), "startup", "")},
		{agent: "copilot", file: "sessionStart_resume.json", eventArg: "sessionStart", want: sessionStart(cop("sessionStart"), "resume", "")},
		{agent: "copilot", file: "userPromptSubmitted.json", eventArg: "userPromptSubmitted",
			want: turnStart(cop("userPromptSubmitted"), "summarize the open TODOs")},
		{agent: "copilot", file: "agentStop.json", eventArg: "agentStop",
			want: tracked(set(cop("agentStop"), func(e *Event) { e.TranscriptPath = copTranscript }), state.EventTurnEnd)},
		{agent: "copilot", file: "sessionEnd.json", eventArg: "sessionEnd", want: sessionEnd(cop("sessionEnd"), "user_exit")},
		{agent: "copilot", file: "errorOccurred.json", eventArg: "errorOccurred",
			want: failed(cop("errorOccurred"), "APIError: Request failed with status 500")},
		{agent: "copilot", file: "errorOccurred_recoverable.json", eventArg: "errorOccurred", want: ignored(cop("errorOccurred"))},
		{agent: "copilot", file: "preToolUse.json", eventArg: "preToolUse", want: ignored(cop("preToolUse"))},
		{agent: "copilot", file: "postToolUseFailure.json", eventArg: "postToolUseFailure", want: ignored(cop("postToolUseFailure"))},
		{agent: "copilot", file: "subagentStop.json", eventArg: "subagentStop",
			want: ignored(set(cop("subagentStop"), func(e *Event) { e.TranscriptPath = copTranscript }))},
		{agent: "copilot", file: "notification.json", eventArg: "notification", want: ignored(cop("Notification"))},
		{agent: "copilot", file: "sessionStart.json", err: ErrNoEvent},
		// The VS Code compatible format names its event.
		{agent: "copilot", file: "SessionStart_vscode.json", want: sessionStart(cop("SessionStart"), "new", "")},
		{agent: "copilot", file: "UserPromptSubmit_vscode.json", want: turnStart(cop("UserPromptSubmit"), "summarize the open TODOs")},
		{agent: "copilot", file: "Stop_vscode.json",
			want: tracked(set(cop("Stop"), func(e *Event) { e.TranscriptPath = copTranscript }), state.EventTurnEnd)},
		{agent: "copilot", file: "SessionEnd_vscode.json", want: sessionEnd(cop("SessionEnd"), "complete")},
		{agent: "copilot", file: "ErrorOccurred_vscode.json",
			want: set(failed(cop("ErrorOccurred"), "SessionError: Session not found: "+sid), func(e *Event) { e.SessionGone = true })},
	}
}

func TestSamples(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range samples() {
		path := filepath.Join("testdata", tc.agent, tc.file)
		covered[path] = true
		t.Run(tc.agent+"/"+tc.file+"/"+tc.eventArg, func(t *testing.T) {
			payload := readFixture(t, path)
			var got Event
			var err error
			if strings.HasPrefix(tc.file, "notify_") {
				got, err = Parse(tc.agent, "", nil, []string{string(payload)})
			} else {
				got, err = Parse(tc.agent, tc.eventArg, payload, nil)
			}
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Parse error = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got != tc.want {
				t.Fatalf("Parse =\n  %+v\nwant\n  %+v", got, tc.want)
			}
		})
	}
	files, err := filepath.Glob("testdata/*/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !covered[f] {
			t.Errorf("sample %s is not in the table", f)
		}
	}
}

// TestCodexNotifyArgv feeds the notify JSON the ways the hook can receive
// it: as the last argument, in the event argument's place, or on stdin.
func TestCodexNotifyArgv(t *testing.T) {
	payload := string(readFixture(t, "testdata/codex/notify_agent-turn-complete.json"))
	want := Event{Agent: "codex", Native: "agent-turn-complete", Kind: state.EventTurnEnd,
		SessionID: "019a8b2c-3d4e-7f60-8a1b-2c3d4e5f6a7b", Cwd: devCwd}
	for _, tc := range []struct {
		name     string
		eventArg string
		stdin    []byte
		args     []string
	}{
		{name: "last argument after an event name", eventArg: "notify", args: []string{payload}},
		{name: "in the event argument", eventArg: payload},
		{name: "in the event argument, blank stdin", eventArg: " " + payload, stdin: []byte("\n")},
		{name: "on stdin", stdin: []byte(payload)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse("codex", tc.eventArg, tc.stdin, tc.args)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got != want {
				t.Fatalf("Parse = %+v, want %+v", got, want)
			}
		})
	}
	other, err := Parse("codex", "", nil, []string{`{"type":"approval-requested","thread-id":"t-1"}`})
	if err != nil || !other.Ignore || other.Kind != "" || other.Native != "approval-requested" {
		t.Fatalf("another notification: %+v, %v; want ignored", other, err)
	}
}

func TestParseErrors(t *testing.T) {
	stop := `{"session_id":"s-1","hook_event_name":"Stop"}`
	cursorStop := string(readFixture(t, "testdata/cursor/stop_completed.json"))
	copilotPrompt := string(readFixture(t, "testdata/copilot/userPromptSubmitted.json"))
	notify := string(readFixture(t, "testdata/codex/notify_agent-turn-complete.json"))
	for _, tc := range []struct {
		name, agent, eventArg, payload string
		err                            error
	}{
		{"unknown agent", "aider", "", stop, ErrUnknownAgent},
		{"empty", "claude-code", "", "", ErrEmptyPayload},
		{"blank", "gemini", "Stop", " \n\t", ErrEmptyPayload},
		{"not JSON", "claude-code", "", "UserPromptSubmit say hi", ErrNotJSON},
		{"truncated", "claude-code", "", `{"session_id":"s-1","hook_event_name":"Sto`, ErrNotJSON},
		{"truncated after a value", "codex", "", `{"session_id":"s-1",`, ErrNotJSON},
		{"trailing garbage", "claude-code", "", stop + "}", ErrNotJSON},
		{"array", "claude-code", "", `[` + stop + `]`, ErrNotObject},
		{"string", "cursor", "", `"stop"`, ErrNotObject},
		{"null", "copilot", "agentStop", `null`, ErrNotObject},
		{"number", "gemini", "", `42`, ErrNotObject},
		{"session id of the wrong type", "claude-code", "", `{"session_id":7,"hook_event_name":"Stop"}`, ErrBadField},
		{"prompt of the wrong type", "claude-code", "", `{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":["a"]}`, ErrBadField},
		{"empty object", "claude-code", "", `{}`, ErrMissingSessionID},
		{"null session id", "gemini", "", `{"session_id":null,"hook_event_name":"AfterAgent"}`, ErrMissingSessionID},
		{"path traversal", "claude-code", "", `{"session_id":"../../etc","hook_event_name":"Stop"}`, ErrInvalidSessionID},
		{"dot dot", "codex", "", `{"session_id":"..","hook_event_name":"Stop"}`, ErrInvalidSessionID},
		{"slash", "cursor", "", `{"conversation_id":"a/b","hook_event_name":"stop"}`, ErrInvalidSessionID},
		{"too long", "copilot", "agentStop", `{"sessionId":"` + strings.Repeat("a", 129) + `"}`, ErrInvalidSessionID},
		{"no event", "claude-code", "", `{"session_id":"s-1"}`, ErrNoEvent},
		{"cursor payload to claude-code", "claude-code", "", cursorStop, ErrWrongAgent},
		{"copilot payload to claude-code", "claude-code", "userPromptSubmitted", copilotPrompt, ErrWrongAgent},
		{"codex notify to gemini", "gemini", "", notify, ErrWrongAgent},
		{"codex notify to cursor", "cursor", "", notify, ErrWrongAgent},
		{"cursor payload to copilot", "copilot", "", cursorStop, ErrWrongAgent},
		{"claude-code payload to cursor", "cursor", "", stop, ErrWrongAgent},
		{"cursor running a claude-code hook", "claude-code", "",
			`{"session_id":"c-1","conversation_id":"c-1","hook_event_name":"UserPromptSubmit","prompt":"x"}`, ErrWrongAgent},
		{"cursor session end to copilot", "copilot", "", string(readFixture(t, "testdata/cursor/sessionEnd.json")), ErrWrongAgent},
		{"claude-code payload to gemini", "gemini", "", stop, ErrWrongAgent},
		{"gemini payload to claude-code", "claude-code", "", `{"session_id":"s-1","hook_event_name":"BeforeAgent","prompt":"x"}`, ErrWrongAgent},
		{"copilot event name to codex", "codex", "agentStop", `{"session_id":"s-1"}`, ErrWrongAgent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := Parse(tc.agent, tc.eventArg, []byte(tc.payload), nil)
			if !errors.Is(err, tc.err) {
				t.Fatalf("Parse(%s) = %+v, %v; want error %v", tc.agent, ev, err, tc.err)
			}
			if (ev != Event{Agent: ev.Agent, Native: ev.Native}) {
				t.Fatalf("refused payload still yields %+v; want only the agent and event name", ev)
			}
		})
	}
}

func TestWrongAgentMessage(t *testing.T) {
	_, err := Parse("claude-code", "", readFixture(t, "testdata/cursor/stop_completed.json"), nil)
	if err == nil || !strings.Contains(err.Error(), "payload does not look like claude-code's") {
		t.Fatalf("error = %v; want it to say the payload does not look like claude-code's", err)
	}
}

func TestHugePayload(t *testing.T) {
	// A prompt of several MiB, with multi-byte characters and escapes,
	// just under the hook's 4 MiB bound.
	var b strings.Builder
	for b.Len() < 3<<20 {
		b.WriteString("refactor the parser — keep \"quotes\" and \\ slashes\n")
	}
	prompt := b.String()
	quoted, err := json.Marshal(prompt)
	if err != nil {
		t.Fatal(err)
	}
	payload := `{"session_id":"big-1","cwd":"/w","hook_event_name":"UserPromptSubmit","prompt":` + string(quoted) + `}`
	if len(payload) > 4<<20 {
		t.Fatalf("payload is %d bytes, over the hook's bound", len(payload))
	}
	ev, err := Parse("claude-code", "", []byte(payload), nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if ev.Kind != state.EventTurnStart || ev.Prompt != prompt {
		t.Fatalf("Parse = kind %q, prompt of %d bytes; want turn-start with the %d-byte prompt", ev.Kind, len(ev.Prompt), len(prompt))
	}
	// A huge tool payload we ignore decodes as well.
	tool := `{"session_id":"big-1","hook_event_name":"PostToolUse","tool_response":{"stdout":` + string(quoted) + `}}`
	if ev, err := Parse("claude-code", "", []byte(tool), nil); err != nil || !ev.Ignore {
		t.Fatalf("huge tool payload: %+v, %v; want ignored", ev, err)
	}
	// The same prompt cut off midway is refused, never half-recorded.
	if _, err := Parse("claude-code", "", []byte(payload[:len(payload)/2]), nil); !errors.Is(err, ErrNotJSON) {
		t.Fatalf("truncated huge payload: %v, want %v", err, ErrNotJSON)
	}
}

func TestResponse(t *testing.T) {
	prompt := readFixture(t, "testdata/cursor/beforeSubmitPrompt.json")
	ev, err := Parse("cursor", "", prompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := Response("cursor", ev)
	var verdict struct {
		Continue *bool `json:"continue"`
	}
	if err := json.Unmarshal(out, &verdict); err != nil || verdict.Continue == nil || !*verdict.Continue {
		t.Fatalf("Response(beforeSubmitPrompt) = %q (%v); want a JSON object with continue: true", out, err)
	}
	// A payload we cannot read must not block the user's prompt either.
	bad, err := Parse("cursor", "beforeSubmitPrompt", []byte("{broken"), nil)
	if err == nil {
		t.Fatal("Parse of a broken payload succeeded")
	}
	if got := Response("cursor", bad); string(got) != string(out) {
		t.Fatalf("Response after a parse error = %q, want %q", got, out)
	}
	for _, tc := range []struct{ agent, file string }{
		{"cursor", "testdata/cursor/stop_completed.json"},
		{"cursor", "testdata/cursor/sessionStart.json"},
		{"claude-code", claudeFixtures + "/UserPromptSubmit.json"},
		{"gemini", "testdata/gemini/BeforeAgent.json"},
		{"codex", "testdata/codex/Stop.json"},
	} {
		ev, err := Parse(tc.agent, "", readFixture(t, tc.file), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if out := Response(tc.agent, ev); out != nil {
			t.Errorf("Response(%s, %s) = %q, want nothing on stdout", tc.agent, ev.Native, out)
		}
	}
	if out := Response("copilot", Event{Native: "agentStop"}); out != nil {
		t.Errorf("Response(copilot, agentStop) = %q, want nil", out)
	}
	if out := Response("nobody", ev); out != nil {
		t.Errorf("Response for an unknown agent = %q, want nil", out)
	}
}

func TestLookupAndNames(t *testing.T) {
	names := Names()
	want := []string{"claude-code", "gemini", "codex", "cursor", "copilot"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("Names() = %v, want %v", names, want)
	}
	names[0] = "changed"
	if Names()[0] != "claude-code" {
		t.Fatal("Names() shares its slice with callers")
	}
	for _, tc := range []struct {
		alias, name, ownerEnv, binary string
	}{
		{"claude-code", "claude-code", "CLAUDE_PID", "claude"},
		{"claude", "claude-code", "CLAUDE_PID", "claude"},
		{" Claude-Code ", "claude-code", "CLAUDE_PID", "claude"},
		{"gemini-cli", "gemini", "", "gemini"},
		{"codex", "codex", "", "codex"},
		{"cursor-agent", "cursor", "", "cursor-agent"},
		{"copilot-cli", "copilot", "", "copilot"},
	} {
		info, ok := Lookup(tc.alias)
		if !ok || info.Name != tc.name || info.OwnerEnv != tc.ownerEnv || info.Binary != tc.binary || info.Display == "" {
			t.Errorf("Lookup(%q) = %+v, %v; want %s (%q, %s)", tc.alias, info, ok, tc.name, tc.ownerEnv, tc.binary)
		}
	}
	if info, ok := Lookup("aider"); ok {
		t.Errorf("Lookup(aider) = %+v, want not found", info)
	}
	for _, name := range names[1:] {
		if info, ok := Lookup(name); !ok || info.Name != name {
			t.Errorf("Lookup(%s) = %+v, %v", name, info, ok)
		}
	}
}

func TestResumeCommand(t *testing.T) {
	const id = "11a11bb0-d934-478a-b554-5c62902086de"
	for _, tc := range []struct {
		agent, id string
		want      string // argv joined by spaces; "" for ok=false
	}{
		{"claude-code", id, "claude --resume " + id},
		{"claude", "-x1", "claude --resume=-x1"},
		{"codex", id, "codex resume " + id},
		{"codex", "-x1", "codex resume -- -x1"},
		{"gemini", id, "gemini --resume " + id},
		{"copilot", id, "copilot --resume=" + id},
		{"cursor", id, ""},
		{"aider", id, ""},
		{"claude-code", "../x", ""},
		{"claude-code", "", ""},
	} {
		argv, ok := ResumeCommand(tc.agent, tc.id)
		if got := strings.Join(argv, " "); ok != (tc.want != "") || got != tc.want {
			t.Errorf("ResumeCommand(%s, %q) = %q, %v; want %q", tc.agent, tc.id, got, ok, tc.want)
		}
	}
}

func TestFreshCommand(t *testing.T) {
	for _, tc := range []struct {
		agent, prompt string
		want          []string
	}{
		{"claude-code", "fix the tests", []string{"claude", "fix the tests"}},
		{"claude-code", "-rf everything", []string{"claude", "--", "-rf everything"}},
		{"claude-code", "", []string{"claude"}},
		{"codex", "fix the tests", []string{"codex", "fix the tests"}},
		{"codex", "--help me", []string{"codex", "--", "--help me"}},
		{"gemini", "fix the tests", []string{"gemini", "-i", "fix the tests"}},
		{"gemini", "-v", []string{"gemini", "--prompt-interactive=-v"}},
		{"gemini", "", []string{"gemini"}},
		{"copilot", "fix the tests", []string{"copilot", "-i", "fix the tests"}},
		{"copilot", "-p x", []string{"copilot", "--interactive=-p x"}},
		{"cursor", "fix the tests", []string{"cursor-agent", "fix the tests"}},
		{"aider", "fix the tests", nil},
	} {
		argv, ok := FreshCommand(tc.agent, tc.prompt)
		if ok != (tc.want != nil) || strings.Join(argv, "\x00") != strings.Join(tc.want, "\x00") {
			t.Errorf("FreshCommand(%s, %q) = %q, %v; want %q", tc.agent, tc.prompt, argv, ok, tc.want)
		}
	}
}

func TestHowToResume(t *testing.T) {
	const id = "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"
	for _, tc := range []struct {
		agent, id string
		want      []string // substrings
	}{
		{"claude-code", id, []string{"claude --resume " + id}},
		{"codex", id, []string{"codex resume " + id}},
		{"cursor", id, []string{"Cursor", id, "cursor-agent --resume " + id}},
		{"cursor", "a/b", []string{"cannot resume", `"a/b"`}},
		{"aider", id, []string{"unknown agent", "aider", id}},
	} {
		got := HowToResume(tc.agent, tc.id)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("HowToResume(%s, %q) = %q; want it to contain %q", tc.agent, tc.id, got, w)
			}
		}
	}
}

func TestSaysSessionGone(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"No conversation found with session ID: 11a11bb0", true},
		{"Session not found: 6e5d4c3b", true},
		{"Error resuming session: Invalid session identifier", true},
		{"no saved session found with id x", true},
		{"429 Too Many Requests", false},
		{"session ended", false},
		{"", false},
	} {
		if got := SaysSessionGone(tc.text); got != tc.want {
			t.Errorf("SaysSessionGone(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}
