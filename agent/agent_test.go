package agent

import (
	"encoding/json"
	"errors"
	"fmt"
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
	ccDialog   = "d9da37d8-ddb2-4fa7-844e-d04aca23f795" // --permission-mode default: a Bash call's dialog
	ccAsk      = "df273e07-c636-4f2e-b6a7-ea3d0843fe7c" // AskUserQuestion
	ccIdle     = "9ec9c127-cac2-4502-83d3-63577fb5d229" // 60 s idle at the prompt
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

// waits is e as a wait signal of kind for detail, about key.
func waits(e Event, kind, detail, key string) Event {
	return set(e, func(e *Event) {
		e.Kind, e.Wait = state.EventWait, state.Wait{Kind: kind, Detail: detail, Key: key}
		if kind == state.WaitInput {
			e.Kind = state.EventWaitInput
		}
	})
}

// waitOver is e as the end of the wait on key.
func waitOver(e Event, key string) Event {
	return set(e, func(e *Event) { e.Kind, e.Wait = state.EventWaitOver, state.Wait{Key: key} })
}

// claudeFixtureWant is the event each recorded payload must map to.
var claudeFixtureWant = map[string]struct {
	want Event
	err  error
}{
	"BashToolCommand_not_a_hook.json":      {err: ErrMissingSessionID},
	"PostCompact.json":                     {want: ignored(claudeDev(ccMain, "PostCompact"))},
	"PreCompact.json":                      {want: ignored(claudeDev(ccMain, "PreCompact"))},
	"PostToolUse_Agent.json":               {want: waitOver(claudeDev(ccSubagent, "PostToolUse"), "Agent")},
	"PostToolUse_Bash.json":                {want: waitOver(claudeDev(ccBash, "PostToolUse"), "Bash")},
	"PostToolUse_Write.json":               {want: waitOver(claudeDev(ccWrite, "PostToolUse"), "Write")},
	"PreToolUse_Agent.json":                {want: ignored(claudeDev(ccSubagent, "PreToolUse"))},
	"PreToolUse_Bash.json":                 {want: ignored(claudeDev(ccBash, "PreToolUse"))},
	"PreToolUse_Write.json":                {want: ignored(claudeDev(ccWrite, "PreToolUse"))},
	"SessionEnd.json":                      {want: sessionEnd(claudeDev(ccMain, "SessionEnd"), "other")},
	"SessionEnd_sighup.json":               {want: sessionEnd(claudeDev("27c2c105-a802-4bd7-82a1-d0710776299b", "SessionEnd"), "other")},
	"SessionEnd_sigint.json":               {want: sessionEnd(claudeDev("4082aa9e-41b9-4356-a84c-43656e2db9ef", "SessionEnd"), "other")},
	"SessionEnd_sigterm.json":              {want: sessionEnd(claudeDev("3c3fe698-0500-4659-a364-4f8d846b2de1", "SessionEnd"), "other")},
	"SessionStart_compact.json":            {want: sessionStart(claudeDev(ccMain, "SessionStart"), "compact", "claude-opus-5-5")},
	"SessionStart_continue.json":           {want: sessionStart(claudeDev(ccMain, "SessionStart"), "resume", "")},
	"SessionStart_fork.json":               {want: sessionStart(claudeDev("aa5cf024-0af2-4c8b-a51c-6c551a7973ea", "SessionStart"), "fork", "")},
	"SessionStart_resume.json":             {want: sessionStart(claudeDev(ccMain, "SessionStart"), "resume", "")},
	"SessionStart_resume_after_kill9.json": {want: sessionStart(claudeDev("8c46f0c7-21ff-442d-b23b-66c6896a8b12", "SessionStart"), "resume", "")},
	"SessionStart_startup.json":            {want: sessionStart(claudeDev(ccMain, "SessionStart"), "startup", "")},
	"Stop.json":                            {want: tracked(claudeDev(ccMain, "Stop"), state.EventTurnEnd)},
	"SubagentStart.json":                   {want: ignored(claudeDev(ccSubagent, "SubagentStart"))},
	"SubagentStop.json":                    {want: ignored(claudeDev(ccSubagent, "SubagentStop"))},
	"UserPromptSubmit.json":                {want: turnStart(claudeDev(ccMain, "UserPromptSubmit"), "say hi")},
	// Auto mode could not decide: the user must (kind permission).
	"interactive_Notification.json": {want: waits(claudeHarness(ccTUI, "Notification"), state.WaitPermission, "", "")},
	// The dialog still open 6 s on: a reminder, with nothing of the tool.
	"interactive_Notification_permission_prompt.json": {want: waits(claudeDev(ccDialog, "Notification"), state.WaitPermission, "", "")},
	"interactive_Notification_idle_prompt.json":       {want: waits(claudeDev(ccIdle, "Notification"), state.WaitInput, "", "")},
	"interactive_PermissionRequest_Bash.json": {want: waits(claudeDev(ccDialog, "PermissionRequest"), state.WaitPermission,
		"Bash `echo hi > f.txt; date +%s.%N > bash_ran_at.txt`", "Bash")},
	"interactive_PermissionRequest_AskUserQuestion.json": {want: waits(claudeDev(ccAsk, "PermissionRequest"), state.WaitQuestion,
		"Which file shall I write?", "AskUserQuestion")},
	"interactive_PostToolUse_Bash_after_approval.json":   {want: waitOver(claudeDev(ccDialog, "PostToolUse"), "Bash")},
	"interactive_PostToolUse_AskUserQuestion.json":       {want: waitOver(claudeDev(ccAsk, "PostToolUse"), "AskUserQuestion")},
	"interactive_PreToolUse_Bash_default_mode.json":      {want: ignored(claudeDev(ccDialog, "PreToolUse"))},
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
	if strings.HasPrefix(filepath.Base(path), "notify_") {
		// Codex notify recordings wrap the JSON the program gets.
		var rec struct {
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(data, &rec); err == nil && len(rec.Payload) > 0 {
			return rec.Payload
		}
	}
	if strings.HasPrefix(filepath.Base(path), "process-chain.") || filepath.Base(filepath.Dir(path)) == "tether_plugin" {
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
		if !strings.HasSuffix(name, ".json") {
			continue // a transcript recorded beside the payloads (.jsonl)
		}
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
			// Claude Code names each prompt: that is the event's key.
			var ids struct {
				PromptID string `json:"prompt_id"`
			}
			if err := json.Unmarshal(payload, &ids); err != nil {
				t.Fatal(err)
			}
			tc.want.Key = ids.PromptID
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
	agent, file, eventArg string // file: under testdata/
	want                  Event
	err                   error
}

// Recorded sessions of the real CLIs (testdata/recorded/<agent>/).
const (
	cxExec  = "01a209fb-0867-75c3-8f28-562dc788b617" // codex exec "say hi"
	cxTool  = "01a209fb-1e45-7062-a344-99b183d55853" // codex exec with a shell call
	cxSig   = "01a209fb-422c-76b0-82f0-f782f6fb761e" // codex exec, SIGINT mid-turn
	cxTUI   = "01a209fb-b677-70f0-95eb-452fcfa41fc8" // the TUI, Esc mid-turn
	cxJoin  = "01a20aff-a6bd-7a81-b903-b79f1a674363" // the TUI killed mid-turn, then codex resume
	gmMain  = "b7037c33-950a-40eb-acc1-9cd818f58d0d"
	gmWrite = "997e4749-35e0-43f7-aac1-e9f4cf7d2e69"
	gmTUI   = "f2d996b5-04f7-4f23-a3cd-57fc7f44d435"
	cpMain  = "ed5bc6f3-ac92-4c48-9af9-e9d15b3a9a66"
	cpFail  = "cfdd4737-5296-47bb-beca-7c3e8f14efde"
	cpBash  = "4a45450b-9082-41a3-a69c-0a993e138e81"
	cpEdit  = "a3072db9-93d1-4336-8b49-5cdb45e9d390"
	cpVS    = "b57dcb3f-b141-4ce5-b1a6-1c4634303775"
	cpVSErr = "0a0ed554-ffd4-4c94-981c-590a2fef4794"
	cpVSRun = "295c068c-6dc0-4c1f-9b16-45e246afbb70"
	cpAsk   = "a9811919-6031-4620-a8fd-94449c1d2d7d" // the TUI's ask_user
)

// mockFailure is what the model mock answers a MOCK_FAIL prompt with: an
// HTTP 400 whose body Copilot CLI passes on as the error's message.
const mockFailure = "Error: mock failure (MOCK_FAIL)"

// samples maps every payload under testdata/ to its event: the
// recordings of the real CLIs, and the few payloads written from an
// agent's documentation where nothing was recorded (see
// testdata/recorded/README.md).
func samples() []sample {
	key := func(e Event, k string) Event { return set(e, func(e *Event) { e.Key = k }) }
	cdx := func(id, native, rollout string) Event {
		return Event{Agent: "codex", Native: native, SessionID: id, Cwd: devCwd, Model: "mock-model",
			TranscriptPath: "/home/dev/.codex/sessions/2026/11/23/rollout-2026-11-23T" + rollout + "-" + id + ".jsonl"}
	}
	exec := func(native string) Event { return cdx(cxExec, native, "19-56-16") }
	tool := func(native string) Event { return cdx(cxTool, native, "19-56-21") }
	sig := func(native string) Event { return cdx(cxSig, native, "19-56-31") }
	tui := func(native string) Event { return cdx(cxTUI, native, "19-57-00") }
	join := func(native string) Event {
		return Event{Agent: "codex", Native: native, SessionID: cxJoin, Cwd: devCwd, Model: "mock-model",
			TranscriptPath: "/home/dev/.codex/sessions/2026/11/24/rollout-2026-11-24T00-40-56-" + cxJoin + ".jsonl"}
	}
	noModel := func(e Event) Event { return set(e, func(e *Event) { e.Model = "" }) }
	day28 := func(id, native, rollout string) Event {
		return Event{Agent: "codex", Native: native, SessionID: id, Cwd: devCwd, Model: "mock-model",
			TranscriptPath: "/home/dev/.codex/sessions/2026/11/28/rollout-2026-11-28T" + rollout + "-" + id + ".jsonl"}
	}
	dialog := func(native string) Event { return day28("01a2207e-7b9a-7a50-9ad5-1b63f8d40ab4", native, "04-51-29") }
	plan := func(native string) Event { return day28("01a22091-bb36-7d41-93c0-f1fdbac34b9a", native, "05-12-31") }
	const planTurn = "01a22091-c8da-7641-8e39-214378aabd04"
	const (
		execTurn = "01a209fb-0895-7c41-9d9c-7ff27f8a21b8"
		toolTurn = "01a209fb-1e80-7f43-8ca0-1fba44c7c8db"
		tuiTurn  = "01a209fb-b6db-7f83-8874-de2dd98e350b"
		joinTurn = "01a20aff-b0c8-7192-aff9-a60acf559f94"
	)
	notify := func(id, turn string) Event {
		return Event{Agent: "codex", Native: "agent-turn-complete", Kind: state.EventTurnEnd, SessionID: id, Cwd: devCwd,
			Key: turn, NoCreate: true}
	}

	// gem is an event at a time of day; its transcript is named after the
	// session's first minute, the one given or the event's own.
	gem := func(id, native, at string, started ...string) Event {
		minute := strings.ReplaceAll(at[:5], ":", "-")
		if len(started) > 0 {
			minute = started[0]
		}
		return Event{Agent: "gemini", Native: native, SessionID: id, Cwd: devCwd, Key: "2026-11-23T" + at + "Z",
			TranscriptPath: "/home/dev/.gemini/tmp/project/chats/session-2026-11-23T" + minute + "-" + id[:8] + ".jsonl"}
	}

	gemAsk := func(native, at string) Event {
		const id = "f9dc80c8-b4eb-47c2-bcc6-3141f97434e4"
		return Event{Agent: "gemini", Native: native, SessionID: id, Cwd: devCwd, Key: "2026-11-28T" + at + "Z",
			TranscriptPath: "/home/dev/.gemini/tmp/project/chats/session-2026-11-28T05-11-" + id[:8] + ".jsonl"}
	}

	cop := func(id, native, key string) Event {
		return Event{Agent: "copilot", Native: native, SessionID: id, Cwd: devCwd, Key: key}
	}
	copTranscript := func(e Event) Event {
		return set(e, func(e *Event) { e.TranscriptPath = "/home/dev/.copilot/session-state/" + e.SessionID + "/events.jsonl" })
	}

	// Written from the documentation, for what no recording covers.
	cc := func(native string) Event { return claudeDev("5b2f0d4e-7a1c-4c6e-9d3b-2f8e1a6c4d90", native) }
	const uid = "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"
	cur := func(native, generation string) Event {
		return Event{Agent: "cursor", Native: native, SessionID: uid, Cwd: devCwd, Model: "claude-opus-4-7-thinking-max",
			TranscriptPath: "/home/dev/.cursor/projects/home-dev-project/agent-transcripts/" + uid + ".txt", Key: generation}
	}
	gen := func(n int) string { return fmt.Sprintf("7c1d0e2f-%04d-4000-8000-%012d", n, n) }
	gen1 := gen(1)
	const sid = "6e5d4c3b-2a19-4f08-b7e6-d5c4b3a29180"

	return []sample{
		{agent: "codex", file: "recorded/codex/SessionStart_startup.json", want: sessionStart(exec("SessionStart"), "startup", "mock-model")},
		{agent: "codex", file: "recorded/codex/SessionStart_resume.json", want: sessionStart(exec("SessionStart"), "resume", "mock-model")},
		{agent: "codex", file: "recorded/codex/SessionStart_tui.json", want: sessionStart(tui("SessionStart"), "startup", "mock-model")},
		{agent: "codex", file: "recorded/codex/UserPromptSubmit.json", want: key(turnStart(exec("UserPromptSubmit"), "say hi"), execTurn)},
		{agent: "codex", file: "recorded/codex/UserPromptSubmit_tui.json",
			want: key(turnStart(tui("UserPromptSubmit"), "hello from the tuiMOCK_STALL esc me"), tuiTurn)},
		// The daemon ran the killed TUI's turn on; the resumed TUI's first
		// prompt joined it: the same turn_id, another prompt.
		{agent: "codex", file: "recorded/codex/UserPromptSubmit_tui_held.json",
			want: key(turnStart(join("UserPromptSubmit"), "hold two [[hold]]"), joinTurn)},
		{agent: "codex", file: "recorded/codex/UserPromptSubmit_tui_resume_joins_turn.json",
			want: key(turnStart(join("UserPromptSubmit"), "after resume two"), joinTurn)},
		{agent: "codex", file: "recorded/codex/Stop_tui_resume_joins_turn.json", want: key(tracked(join("Stop"), state.EventTurnEnd), joinTurn)},
		{agent: "codex", file: "recorded/codex/PreToolUse_Bash.json", want: key(ignored(tool("PreToolUse")), toolTurn)},
		{agent: "codex", file: "recorded/codex/PostToolUse_Bash.json", want: key(waitOver(tool("PostToolUse"), "Bash"), toolTurn)},
		// The TUI asked to run a write outside its sandbox (approval
		// policy on-request): approved, then asked again and denied (Esc).
		{agent: "codex", file: "recorded/codex/PermissionRequest_tui_escalated.json", want: key(waits(dialog("PermissionRequest"),
			state.WaitPermission, "Bash `printf 'written by the agent\\n' > 'a.txt'`", "Bash"), "01a2207e-7d0c-7930-b347-ca45d506a891")},
		{agent: "codex", file: "recorded/codex/PostToolUse_tui_after_approval.json",
			want: key(waitOver(dialog("PostToolUse"), "Bash"), "01a2207e-7d0c-7930-b347-ca45d506a891")},
		{agent: "codex", file: "recorded/codex/Interrupt_tui_deny.json",
			want: key(tracked(dialog("Interrupt"), state.EventTurnEnd), "01a2207e-9366-7a21-a6c6-2f5057195ebf")},
		// Plan mode: the model asks the user through request_user_input.
		{agent: "codex", file: "recorded/codex/PreToolUse_tui_request_user_input.json", want: key(waits(plan("PreToolUse"),
			state.WaitQuestion, "Which file shall I write?", "request_user_input"), planTurn)},
		{agent: "codex", file: "recorded/codex/PostToolUse_tui_request_user_input.json",
			want: key(waitOver(plan("PostToolUse"), "request_user_input"), planTurn)},
		{agent: "codex", file: "recorded/codex/Stop.json", want: key(tracked(exec("Stop"), state.EventTurnEnd), execTurn)},
		{agent: "codex", file: "recorded/codex/Stop_after_tool.json", want: key(tracked(tool("Stop"), state.EventTurnEnd), toolTurn)},
		// A cancelled turn ends the turn, not the session.
		{agent: "codex", file: "recorded/codex/Interrupt_tui_esc.json",
			want: key(tracked(tui("Interrupt"), state.EventTurnEnd), tuiTurn)},
		{agent: "codex", file: "recorded/codex/Interrupt_exec_sigint.json",
			want: key(tracked(sig("Interrupt"), state.EventTurnEnd), "01a209fb-4244-7d62-ab12-b97348bd0af2")},
		{agent: "codex", file: "recorded/codex/SessionEnd_exec_exit.json", want: sessionEnd(noModel(exec("SessionEnd")), "other")},
		{agent: "codex", file: "recorded/codex/SessionEnd_exec_sigint.json", want: sessionEnd(noModel(sig("SessionEnd")), "other")},
		// Notify ends a turn of a session the hooks record, and creates none:
		// the TUI's title thread is not a session of the user's.
		{agent: "codex", file: "recorded/codex/notify_exec_argv.json", want: notify(cxExec, execTurn)},
		{agent: "codex", file: "recorded/codex/notify_tui_title_thread.json",
			want: notify("01a209fb-ba65-72c3-980a-f871d09f6215", "01a209fb-ba7b-71a0-9d4c-4d2d21e12c56")},
		{agent: "codex", file: "codex/SessionStart_no_transcript.json",
			want: sessionStart(Event{Agent: "codex", Native: "SessionStart", SessionID: "019a8b2c-3d4e-7f60-8a1b-2c3d4e5f6a7b",
				Cwd: devCwd, Model: "gpt-5.5-codex"}, "startup", "gpt-5.5-codex")},

		{agent: "gemini", file: "recorded/gemini/SessionStart_startup.json", want: sessionStart(gem(gmMain, "SessionStart", "20:07:24.945"), "startup", "")},
		{agent: "gemini", file: "recorded/gemini/SessionStart_resume.json", want: sessionStart(gem(gmMain, "SessionStart", "20:07:53.055"), "resume", "")},
		{agent: "gemini", file: "recorded/gemini/SessionStart_clear.json",
			want: sessionStart(gem("d55e7d6a-b49e-4c9b-823b-1384ed008621", "SessionStart", "20:08:20.634"), "clear", "")},
		{agent: "gemini", file: "recorded/gemini/BeforeAgent.json", want: turnStart(gem(gmMain, "BeforeAgent", "20:07:25.636"), "say hi")},
		{agent: "gemini", file: "recorded/gemini/AfterAgent.json", want: tracked(gem(gmMain, "AfterAgent", "20:07:29.593"), state.EventTurnEnd)},
		// Esc in the TUI: AfterAgent ends the cancelled turn.
		{agent: "gemini", file: "recorded/gemini/AfterAgent_cancelled.json", want: tracked(gem(gmTUI, "AfterAgent", "20:08:19.057"), state.EventTurnEnd)},
		{agent: "gemini", file: "recorded/gemini/SessionEnd_exit.json", want: sessionEnd(gem(gmMain, "SessionEnd", "20:07:30.293"), "exit")},
		{agent: "gemini", file: "recorded/gemini/SessionEnd_clear.json", want: sessionEnd(gem(gmTUI, "SessionEnd", "20:08:20.175"), "clear")},
		{agent: "gemini", file: "recorded/gemini/BeforeModel.json", want: ignored(gem(gmMain, "BeforeModel", "20:07:26.926"))},
		{agent: "gemini", file: "recorded/gemini/AfterModel.json", want: ignored(gem(gmMain, "AfterModel", "20:07:28.264"))},
		{agent: "gemini", file: "recorded/gemini/BeforeToolSelection.json", want: ignored(gem(gmMain, "BeforeToolSelection", "20:07:27.579"))},
		{agent: "gemini", file: "recorded/gemini/BeforeTool_write_file.json", want: ignored(gem(gmWrite, "BeforeTool", "20:07:37.647"))},
		{agent: "gemini", file: "recorded/gemini/AfterTool_write_file.json", want: waitOver(gem(gmWrite, "AfterTool", "20:07:38.316"), "write_file")},
		{agent: "gemini", file: "recorded/gemini/Notification_ToolPermission.json",
			want: waits(gem(gmTUI, "Notification", "20:08:08.841"), state.WaitPermission, "Edit `w.txt`", "")},
		// ask_user's confirmation says nothing of the question.
		{agent: "gemini", file: "recorded/gemini/Notification_ToolPermission_ask_user.json",
			want: waits(gemAsk("Notification", "05:11:35.179"), state.WaitQuestion, "", "")},
		{agent: "gemini", file: "recorded/gemini/AfterTool_ask_user.json", want: waitOver(gemAsk("AfterTool", "05:11:39.283"), "ask_user")},
		{agent: "gemini", file: "recorded/gemini/PreCompress_auto.json", want: ignored(gem(gmMain, "PreCompress", "20:07:26.289"))},

		// camelCase payloads do not name their event: the argument does.
		{agent: "copilot", file: "recorded/copilot/sessionStart.json", eventArg: "sessionStart", want: sessionStart(cop(cpMain, "sessionStart", "1795463249298"), "new", "")},
		{agent: "copilot", file: "recorded/copilot/userLevel_sessionStart.json", eventArg: "sessionStart", want: sessionStart(cop(cpMain, "sessionStart", "1795463249298"), "new", "")},
		{agent: "copilot", file: "recorded/copilot/sessionStart_resume.json", eventArg: "sessionStart", want: sessionStart(cop(cpMain, "sessionStart", "1795463275069"), "resume", "")},
		{agent: "copilot", file: "recorded/copilot/userPromptSubmitted.json", eventArg: "userPromptSubmitted",
			want: turnStart(cop(cpMain, "userPromptSubmitted", "1795463249519"), "say hi")},
		{agent: "copilot", file: "recorded/copilot/userPromptTransformed.json", eventArg: "userPromptTransformed", want: ignored(cop(cpMain, "userPromptTransformed", "1795463251595"))},
		{agent: "copilot", file: "recorded/copilot/agentStop.json", eventArg: "agentStop",
			want: tracked(copTranscript(cop(cpMain, "agentStop", "1795463253153")), state.EventTurnEnd)},
		{agent: "copilot", file: "recorded/copilot/sessionEnd.json", eventArg: "sessionEnd", want: sessionEnd(cop(cpMain, "sessionEnd", "1795463253837"), "complete")},
		{agent: "copilot", file: "recorded/copilot/userLevel_sessionEnd.json", eventArg: "sessionEnd", want: sessionEnd(cop(cpMain, "sessionEnd", "1795463253837"), "complete")},
		// A fatal HTTP 400 arrives marked recoverable; the session then ends
		// with an error: the turn failed.
		{agent: "copilot", file: "recorded/copilot/errorOccurred_model_call.json", eventArg: "errorOccurred",
			want: failed(cop(cpFail, "errorOccurred", "1795463272026"), mockFailure)},
		{agent: "copilot", file: "recorded/copilot/sessionEnd_error.json", eventArg: "sessionEnd", want: sessionEnd(cop(cpFail, "sessionEnd", "1795463272510"), "error")},
		{agent: "copilot", file: "recorded/copilot/preToolUse_bash.json", eventArg: "preToolUse", want: ignored(cop(cpBash, "preToolUse", "1795463265222"))},
		{agent: "copilot", file: "recorded/copilot/postToolUse_bash.json", eventArg: "postToolUse", want: waitOver(cop(cpBash, "postToolUse", "1795463266369"), "bash")},
		{agent: "copilot", file: "recorded/copilot/permissionRequest_bash.json", eventArg: "permissionRequest", want: ignored(cop(cpBash, "permissionRequest", "1795463265777"))},
		{agent: "copilot", file: "recorded/copilot/preToolUse_create.json", eventArg: "preToolUse", want: ignored(cop(cpEdit, "preToolUse", "1795463258134"))},
		{agent: "copilot", file: "recorded/copilot/postToolUse_create.json", eventArg: "postToolUse", want: waitOver(cop(cpEdit, "postToolUse", "1795463259182"), "create")},
		// The TUI's prompts: only they notify (permissionRequest fires for
		// calls the rules approve as well).
		{agent: "copilot", file: "recorded/copilot/notification_permission_prompt.json", eventArg: "notification",
			want: waits(cop("b32f8ef3-a05a-4696-ae8d-d034ee826ec5", "Notification", "1795841871717"), state.WaitPermission, "Edit file: a.txt", "")},
		{agent: "copilot", file: "recorded/copilot/notification_elicitation_dialog.json", eventArg: "notification",
			want: waits(cop(cpAsk, "Notification", "1795842446605"), state.WaitQuestion, "Information requested", "")},
		{agent: "copilot", file: "recorded/copilot/postToolUse_ask_user.json", eventArg: "postToolUse",
			want: waitOver(cop(cpAsk, "postToolUse", "1795842453110"), "ask_user")},
		{agent: "copilot", file: "recorded/copilot/permissionRequest_edit.json", eventArg: "permissionRequest", want: ignored(cop(cpEdit, "permissionRequest", "1795463258598"))},
		{agent: "copilot", file: "recorded/copilot/sessionStart.json", err: ErrNoEvent},
		// The VS Code compatible format names its event.
		{agent: "copilot", file: "recorded/copilot/SessionStart_vscode.json", want: sessionStart(cop(cpVS, "SessionStart", "2026-11-23T19:48:05.313Z"), "new", "")},
		{agent: "copilot", file: "recorded/copilot/UserPromptSubmit_vscode.json", want: turnStart(cop(cpVS, "UserPromptSubmit", "2026-11-23T19:48:05.388Z"), "say hi")},
		{agent: "copilot", file: "recorded/copilot/Stop_vscode.json", want: tracked(copTranscript(cop(cpVS, "Stop", "2026-11-23T19:48:05.978Z")), state.EventTurnEnd)},
		{agent: "copilot", file: "recorded/copilot/SessionEnd_vscode.json", want: sessionEnd(cop(cpVS, "SessionEnd", "2026-11-23T19:48:06.324Z"), "complete")},
		{agent: "copilot", file: "recorded/copilot/ErrorOccurred_vscode_model_call.json",
			want: failed(cop(cpVSErr, "ErrorOccurred", "2026-11-23T19:48:13.675Z"), mockFailure)},
		{agent: "copilot", file: "recorded/copilot/SessionEnd_vscode_error.json", want: sessionEnd(cop(cpVSErr, "SessionEnd", "2026-11-23T19:48:14.190Z"), "error")},
		{agent: "copilot", file: "recorded/copilot/PreToolUse_vscode_Bash.json", want: ignored(cop(cpVSRun, "PreToolUse", "2026-11-23T19:48:08.385Z"))},
		{agent: "copilot", file: "recorded/copilot/PostToolUse_vscode_Bash.json", want: waitOver(cop(cpVSRun, "PostToolUse", "2026-11-23T19:48:09.326Z"), "Bash")},
		// camelCase despite its name: it names no event, the argument does.
		{agent: "copilot", file: "recorded/copilot/PermissionRequest_vscode_bash.json", eventArg: "PermissionRequest",
			want: ignored(cop(cpVSRun, "PermissionRequest", "1795463288845"))},
		// Not recorded: a failed tool call (the turn goes on) and the
		// agent saying the session is gone.
		{agent: "copilot", file: "copilot/errorOccurred_tool_execution.json", eventArg: "errorOccurred", want: ignored(cop(sid, "errorOccurred", "1795257051000"))},
		{agent: "copilot", file: "copilot/ErrorOccurred_vscode.json",
			want: set(failed(cop(sid, "ErrorOccurred", "2026-11-21T10:30:50.000Z"), "SessionError: Session not found: "+sid), func(e *Event) { e.SessionGone = true })},

		// Claude Code cases no recording covers.
		{agent: "claude-code", file: "claude-code/StopFailure.json",
			want: failed(cc("StopFailure"), "rate_limit: 429 Too Many Requests")},
		{agent: "claude-code", file: "claude-code/StopFailure_no_details.json",
			want: failed(cc("StopFailure"), "server_error: API Error: 529 overloaded")},
		{agent: "claude-code", file: "claude-code/Stop_inside_subagent.json", want: ignored(claudeDev(ccSubagent, "Stop"))},
		{agent: "claude-code", file: "claude-code/UserPromptSubmit_agent_session.json",
			want: turnStart(claudeDev("e0c1d2a3-b4c5-4d6e-8f70-819203a4b5c6", "UserPromptSubmit"), "review the auth module")},

		// Cursor: no CLI to record; its documented payloads.
		{agent: "cursor", file: "cursor/sessionStart.json",
			want: sessionStart(set(cur("sessionStart", uid), func(e *Event) { e.TranscriptPath = "" }), "", "claude-opus-4-7-thinking-max")},
		{agent: "cursor", file: "cursor/beforeSubmitPrompt.json", want: turnStart(cur("beforeSubmitPrompt", gen1), "rename Store.Open to Store.Load")},
		{agent: "cursor", file: "cursor/stop_completed.json", want: tracked(cur("stop", gen1), state.EventTurnEnd)},
		{agent: "cursor", file: "cursor/stop_aborted.json", want: tracked(cur("stop", gen(2)), state.EventTurnEnd)},
		{agent: "cursor", file: "cursor/stop_error.json", want: failed(cur("stop", gen(3)), "agent loop ended with an error")},
		{agent: "cursor", file: "cursor/sessionEnd.json", want: sessionEnd(cur("sessionEnd", gen(3)), "user_close")},
		{agent: "cursor", file: "cursor/sessionEnd_error.json", want: sessionEnd(cur("sessionEnd", gen(4)), "error: model request failed: 500")},
		{agent: "cursor", file: "cursor/beforeShellExecution.json",
			want: ignored(set(cur("beforeShellExecution", gen1), func(e *Event) { e.Cwd = devCwd + "/state" }))},
		{agent: "cursor", file: "cursor/afterFileEdit.json", want: ignored(cur("afterFileEdit", gen1))},
		{agent: "cursor", file: "cursor/preToolUse.json", want: ignored(cur("preToolUse", gen1))},
		{agent: "cursor", file: "cursor/subagentStop.json", want: ignored(cur("subagentStop", gen1))},
		{agent: "cursor", file: "cursor/afterAgentResponse.json", want: ignored(cur("afterAgentResponse", gen1))},
	}
}

// notAPayload tells the recordings that are not hook payloads: process
// chains and OpenCode's plugin events (not an adapter yet).
func notAPayload(path string) bool {
	return strings.Contains(path, "process_chain") || strings.Contains(path, "process-chain") ||
		strings.Contains(path, "/records/") || strings.Contains(path, "/opencode/") || strings.Contains(path, "/sessions/")
}

func TestSamples(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range append(samples(), recordedSamples(t)...) {
		path := filepath.Join("testdata", tc.file)
		covered[path] = true
		t.Run(tc.file+"/"+tc.eventArg, func(t *testing.T) {
			payload := readFixture(t, path)
			var got Event
			var err error
			if strings.Contains(tc.file, "notify_") {
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
	for _, f := range payloadFiles(t) {
		if strings.HasPrefix(f, claudeFixtures) {
			continue // TestClaudeCodeFixtures has them
		}
		if !covered[f] {
			t.Errorf("payload %s is not in the table", f)
		}
	}
}

// payloadFiles lists every hook payload under testdata/, recorded or not.
func payloadFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") && !notAPayload(path) {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestCodexNotifyArgv feeds the notify JSON the ways the hook can receive
// it: as the last argument, in the event argument's place, or on stdin.
func TestCodexNotifyArgv(t *testing.T) {
	payload := string(readFixture(t, "testdata/recorded/codex/notify_exec_argv.json"))
	want := Event{Agent: "codex", Native: "agent-turn-complete", Kind: state.EventTurnEnd,
		SessionID: cxExec, Cwd: devCwd, Key: "01a209fb-0895-7c41-9d9c-7ff27f8a21b8", NoCreate: true}
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
	copilotPrompt := string(readFixture(t, "testdata/recorded/copilot/userPromptSubmitted.json"))
	notify := string(readFixture(t, "testdata/recorded/codex/notify_exec_argv.json"))
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
	// A huge tool output decodes as well: its tool's end is a wait's.
	tool := `{"session_id":"big-1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_response":{"stdout":` + string(quoted) + `}}`
	if ev, err := Parse("claude-code", "", []byte(tool), nil); err != nil || ev.Kind != state.EventWaitOver || ev.Wait.Key != "Bash" {
		t.Fatalf("huge tool payload: %+v, %v; want the end of a wait on Bash", ev, err)
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
		{"gemini", "testdata/recorded/gemini/BeforeAgent.json"},
		{"gemini", "testdata/recorded/gemini/AfterAgent.json"},
		{"codex", "testdata/recorded/codex/Stop.json"},
		{"codex", "testdata/recorded/codex/Interrupt_tui_esc.json"},
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
	want := []string{"claude-code", "gemini", "codex", "cursor", "copilot", "opencode", "droid", "pi", "qwen"}
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
		{"opencode", "opencode", "OPENCODE_PID", "opencode"},
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
		{"opencode", "ses_df6079748ffemAqXkUt1Mtb5uQ", "opencode -s ses_df6079748ffemAqXkUt1Mtb5uQ"},
		{"opencode", "-x1", "opencode --session=-x1"},
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
		{"opencode", "fix the tests", []string{"opencode", "--prompt", "fix the tests"}},
		{"opencode", "-x", []string{"opencode", "--prompt=-x"}},
		{"opencode", "", []string{"opencode"}},
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

// TestTranscriptPath: Copilot CLI names its transcript only at a turn's
// end (agentStop), but keeps it in one place from the first event on.
func TestTranscriptPath(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	// What agentStop said in the recorded session.
	stop, err := Parse("copilot", "agentStop", readFixture(t, "testdata/recorded/copilot/agentStop.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		agent, id string
		env       func(string) string
		want      string
	}{
		{"copilot", cpMain, env("HOME", "/home/dev"), stop.TranscriptPath},
		{"copilot-cli", cpMain, env("HOME", "/home/dev", "COPILOT_HOME", "/srv/copilot"), "/srv/copilot/session-state/" + cpMain + "/events.jsonl"},
		{"copilot", cpMain, env(), ""},
		{"copilot", cpMain, env("HOME", "relative"), ""},
		{"copilot", "../x", env("HOME", "/home/dev"), ""},
		// The others name it in every payload.
		{"claude-code", ccMain, env("HOME", "/home/dev"), ""},
		{"gemini", gmMain, env("HOME", "/home/dev"), ""},
		{"aider", "x", env("HOME", "/home/dev"), ""},
	} {
		if got := TranscriptPath(tc.agent, tc.id, tc.env); got != filepath.FromSlash(tc.want) {
			t.Errorf("TranscriptPath(%s, %s) = %q, want %q", tc.agent, tc.id, got, tc.want)
		}
	}
}
