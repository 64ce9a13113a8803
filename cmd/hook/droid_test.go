package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetherdev/tether/state"
)

// recordedRun replays a recorded run of Droid 0.225.2 (`droid exec` or
// its TUI) or of Qwen Code 0.24.4 in r: its transcript written as far as
// the agent had written it when each hook ran (up to the line recording
// that hook, or whole), the paths in it rewritten into r, its payloads
// sent in order as session id.
type recordedRun struct {
	t               *testing.T
	r               testRepo
	agent, id, name string
	transcript      string
	recorded        []byte
}

func newRecordedRun(t *testing.T, r testRepo, agentName, id, name string) *recordedRun {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "agent", "testdata", "recorded", agentName, name+"_transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte("/home/dev/project/"), []byte(r.dir+"/"))
	d := &recordedRun{t: t, r: r, agent: agentName, id: id, name: name, transcript: r.transcriptOf(agentName, id), recorded: data}
	if err := os.MkdirAll(filepath.Dir(d.transcript), 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// upTo writes the transcript up to the line holding cut ("": all of it).
func (d *recordedRun) upTo(cut string) {
	d.t.Helper()
	data := d.recorded
	if cut != "" {
		i := bytes.Index(data, []byte(cut))
		if i < 0 {
			d.t.Fatalf("%s: no %q", d.name, cut)
		}
		data = data[:bytes.LastIndexByte(data[:i], '\n')+1]
	}
	if err := os.WriteFile(d.transcript, data, 0o600); err != nil {
		d.t.Fatal(err)
	}
}

// through writes the transcript up to the end of the line holding s.
func (d *recordedRun) through(s string) {
	d.t.Helper()
	i := bytes.Index(d.recorded, []byte(s))
	if i < 0 {
		d.t.Fatalf("%s: no %q", d.name, s)
	}
	end := i + bytes.IndexByte(d.recorded[i:], '\n') + 1
	if err := os.WriteFile(d.transcript, d.recorded[:end], 0o600); err != nil {
		d.t.Fatal(err)
	}
}

// fire sends the recorded payload of hook n (its file's number) of event.
func (d *recordedRun) fire(n, event string) {
	d.t.Helper()
	payload, _ := samplePayload(d.t, d.r, "recorded/"+d.agent, d.name+"_"+n+"_"+event+".json", d.id, d.transcript)
	runHook(d.t, d.r.dir, payload, nil, d.agent)
}

// `droid exec` fires no UserPromptSubmit: its turn starts at its first
// PreToolUse, before the tool runs, with the prompt its transcript holds
// (from the prompt's own line on), and its Stop ends it.
func TestDroidExecTurn(t *testing.T) {
	r := newRepo(t)
	d := newRecordedRun(t, r, "droid", "d-write", "exec_write")
	d.upTo(`"hookEventName":"SessionStart"`)
	d.fire("01", "SessionStart")
	if s := r.load(t, d.id); s.Phase != state.PhaseIdle || s.Turns != 0 {
		t.Fatalf("after SessionStart: %q, %d turns", s.Phase, s.Turns)
	}
	d.upTo(`"hookEventName":"PreToolUse"`)
	d.fire("02", "PreToolUse")
	s := r.load(t, d.id)
	recs := r.turns(t, d.id)
	prompt := int64(bytes.Index(d.recorded, []byte(`{"type":"message","id":"2faaec48`)))
	if s.Phase != state.PhaseActive || s.Turns != 1 || s.LastPrompt != "make it [[write a.txt]]" || len(recs) != 1 || recs[0].TranscriptSize != prompt {
		t.Fatalf("after PreToolUse: %q, %d turns, prompt %q, records %+v; want the turn from its prompt's line (%d)", s.Phase, s.Turns, s.LastPrompt, recs, prompt)
	}
	d.fire("03", "PostToolUse")
	d.fire("02", "PreToolUse") // another tool call of the same turn
	d.upTo(`"hookEventName":"Stop"`)
	d.fire("04", "Stop")
	if s := r.load(t, d.id); s.Phase != state.PhaseIdle || s.Turns != 1 || s.LastError != "" || len(r.turns(t, d.id)) != 2 {
		t.Fatalf("after Stop: %+v, records %+v", s, r.turns(t, d.id))
	}
	d.upTo("")
	d.fire("05", "SessionEnd")
	if s := r.load(t, d.id); s.Phase != state.PhaseEnded || s.EndReason != state.EndSessionEnd || s.Interrupted || s.Turns != 1 {
		t.Fatalf("after SessionEnd: %+v", s)
	}
}

// A turn with no tool call is found at its Stop; a failed model call's
// Stop ends it with the error Droid showed.
func TestDroidExecTurnAtStop(t *testing.T) {
	r := newRepo(t)
	for _, tc := range []struct{ name, prompt, failure string }{
		{"exec_plain", "say hello", ""},
		{"exec_fail", "boom [[fail]]", "BYOK Error: 400 mock failure (MOCK_FAIL)"},
	} {
		d := newRecordedRun(t, r, "droid", "d-"+tc.name, tc.name)
		d.upTo(`"hookEventName":"SessionStart"`)
		d.fire("01", "SessionStart")
		d.upTo(`"hookEventName":"Stop"`)
		d.fire("02", "Stop")
		s := r.load(t, d.id)
		if s.Phase != state.PhaseIdle || s.Turns != 1 || s.LastPrompt != tc.prompt || s.LastError != tc.failure {
			t.Fatalf("%s after Stop: %q, %d turns, prompt %q, error %q", tc.name, s.Phase, s.Turns, s.LastPrompt, s.LastError)
		}
		d.upTo("")
		d.fire("03", "SessionEnd")
		if s := r.load(t, d.id); s.Phase != state.PhaseEnded || s.Interrupted || s.Turns != 1 {
			t.Fatalf("%s after SessionEnd: %+v", tc.name, s)
		}
	}
}

// SIGINT mid-turn: SessionEnd, no Stop. The turn Droid never announced was
// cut short.
func TestDroidExecSIGINT(t *testing.T) {
	r := newRepo(t)
	d := newRecordedRun(t, r, "droid", "d-sigint", "exec_sigint")
	d.upTo(`"hookEventName":"SessionStart"`)
	d.fire("01", "SessionStart")
	d.upTo("")
	d.fire("02", "SessionEnd")
	s := r.load(t, d.id)
	if s.Phase != state.PhaseEnded || s.EndReason != state.EndInterrupted || !s.Interrupted || s.Turns != 1 || s.LastPrompt != "wait [[hold]]" {
		t.Fatalf("after SIGINT: %+v", s)
	}
}

// The TUI: Esc fires no Stop but a Notification idle_prompt, which ends the
// turn; /quit fires SessionEnd twice, and the session ends once.
func TestDroidTUI(t *testing.T) {
	r := newRepo(t)
	d := newRecordedRun(t, r, "droid", "d-tui", "tui")
	d.upTo(`"text":"say hello"`)
	for _, f := range []struct{ n, event string }{{"01", "SessionStart"}, {"02", "UserPromptSubmit"}, {"03", "Stop"}} {
		d.fire(f.n, f.event)
	}
	d.upTo(`"text":"wait [[hold]]"`)
	d.fire("04", "UserPromptSubmit")
	if s := r.load(t, d.id); s.Phase != state.PhaseActive || s.Turns != 2 {
		t.Fatalf("the held turn: %q, %d turns", s.Phase, s.Turns)
	}
	d.through(`"reason":"cancelled"`)
	d.fire("05", "Notification")
	if s := r.load(t, d.id); s.Phase != state.PhaseIdle || s.Turns != 2 || s.LastError != "" {
		t.Fatalf("after Esc: %+v", s)
	}
	d.upTo(`"text":"boom [[fail]]"`)
	d.fire("06", "UserPromptSubmit")
	d.through(`BYOK Error`)
	d.fire("07", "Stop")
	if s := r.load(t, d.id); s.Phase != state.PhaseIdle || s.Turns != 3 || s.LastError != "BYOK Error: 400 mock failure (MOCK_FAIL)" {
		t.Fatalf("after the failed turn: %+v", s)
	}
	d.upTo("")
	d.fire("08", "SessionEnd")
	first := r.load(t, d.id)
	d.fire("09", "SessionEnd")
	if s := r.load(t, d.id); s.Phase != state.PhaseEnded || s.EndReason != state.EndSessionEnd || s.Interrupted || !s.EndedAt.Equal(first.EndedAt) {
		t.Fatalf("after /quit's two SessionEnds: %+v (after the first: %+v)", s, first)
	}
}
