package checkpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetherdev/tether/conversation"
	"github.com/tetherdev/tether/state"
)

// opencodeAgent is an agent that keeps its sessions in a database: no
// transcript file, turn starts keyed by the ID of their prompt message.
func (f *fixture) opencodeAgent(tb testing.TB, id string) *agent {
	tb.Helper()
	a := f.agent(tb, id)
	a.mutate(func(tx *state.Tx) error {
		s := tx.Session
		s.Agent, s.TranscriptPath, s.TranscriptRoot, s.AgentDB = "opencode", "", "", true
		return nil
	})
	return a
}

func (a *agent) keyedTurn(prompt, key string, end bool) {
	a.tb.Helper()
	a.mutate(func(tx *state.Tx) error {
		s := tx.Session
		s.Turns++
		s.Phase, s.LastPrompt, s.LastTurnStartedAt = state.PhaseActive, prompt, a.now()
		return tx.AppendTurn(state.TurnRecord{T: state.RecTurnStart, Turn: s.Turns, At: s.LastTurnStartedAt, Prompt: prompt, Key: key})
	})
	if end {
		a.turnEnd()
	}
}

// recordedExport is the export of two turns from the real OpenCode
// (conversation/testdata), its first answer carrying a secret.
func recordedExport(t *testing.T) []conversation.Message {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "conversation", "testdata", "export_two_turns.json"))
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), `"text": "hello there"`, `"text": "hello there, token ghp_abcdefghijklmnopqrstuvwxyz0123456789"`, 1))
	msgs, err := conversation.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// TestCondenseConversation: a session of an agent without a transcript
// file gets, in each checkpoint, the messages of its own turns as the agent
// answered, redacted; the agent is asked before the lock, once per sweep.
func TestCondenseConversation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	msgs := recordedExport(t)
	var asked []string
	f.repo.SetConversations(func(_ context.Context, agent, id, dir string) ([]conversation.Message, error) {
		asked = append(asked, agent+" "+id+" "+dir)
		return msgs, nil
	})
	a := f.opencodeAgent(t, "ses_df50042b5ffebAAwYw49VT3IXP")
	a.keyedTurn("say hi", "msg_20affc24f001ZLlZYoSvuFx6T4", true)
	first := f.condense(t, a.id)[0].Checkpoint
	a.keyedTurn("please FAIL now", "msg_20b00e49c0015suF2EW8WmSSkD", true)
	second := f.condense(t, a.id)[0].Checkpoint
	if len(asked) != 2 || asked[0] != "opencode "+a.id+" "+f.dir {
		t.Errorf("asked %q", asked)
	}
	for _, tc := range []struct {
		id   string
		want []string // message IDs
	}{
		{first, []string{"msg_20affc24f001ZLlZYoSvuFx6T4", "msg_20b00450c001PQiIPhQwHwQqo8"}},
		{second, []string{"msg_20b00e49c0015suF2EW8WmSSkD", "msg_20b010e73001d56LDFwsfmo7Is"}},
	} {
		cp, err := f.repo.Read(tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if cp.Transcript.Unavailable || cp.Transcript.Path != "opencode export "+a.id {
			t.Fatalf("transcript %+v", cp.Transcript)
		}
		lines := strings.Split(strings.TrimSuffix(f.show(t, tc.id, "transcript.jsonl"), "\n"), "\n")
		if len(lines) != len(tc.want) {
			t.Fatalf("%d lines, want %d", len(lines), len(tc.want))
		}
		for i, id := range tc.want {
			if !strings.Contains(lines[i], `"id":"`+id+`"`) {
				t.Errorf("line %d is not message %s", i, id)
			}
		}
		if strings.Contains(strings.Join(lines, "\n"), "ghp_abc") {
			t.Error("the secret reached the checkpoint")
		}
		if tc.id == first && cp.Transcript.Redactions == nil {
			t.Error("the redaction was not counted")
		}
	}
	f.fsck(t)
}

// TestCondenseConversationUnavailable: an agent that cannot answer (the
// session gone, a failure) leaves the checkpoint without its conversation,
// saying why; the turns and prompts are kept.
func TestCondenseConversationUnavailable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.repo.SetConversations(func(context.Context, string, string, string) ([]conversation.Message, error) {
		return nil, errors.New("opencode export ses_x: " + conversation.ErrGone.Error())
	})
	a := f.opencodeAgent(t, "ses_x")
	a.keyedTurn("one", "msg_1", true)
	cp, err := f.repo.Read(f.condense(t, a.id)[0].Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if !cp.Transcript.Unavailable || !strings.Contains(cp.Transcript.Reason, "no longer has this session") || cp.Turns[0].Prompt != "one" {
		t.Errorf("checkpoint %+v", cp)
	}
	// Not asked at all, and nothing said for these turns.
	g := newFixture(t)
	b := g.opencodeAgent(t, "ses_y")
	b.keyedTurn("two", "msg_2", true)
	if cp, err = g.repo.Read(g.condense(t, b.id)[0].Checkpoint); err != nil {
		t.Fatal(err)
	}
	if !cp.Transcript.Unavailable || cp.Transcript.Reason != "opencode was not asked for the conversation" {
		t.Errorf("unasked: %+v", cp.Transcript)
	}
	g.repo.SetConversations(func(context.Context, string, string, string) ([]conversation.Message, error) {
		return recordedExport(t), nil
	})
	b.keyedTurn("three", "msg_not_in_the_export", true)
	if cp, err = g.repo.Read(g.condense(t, b.id)[0].Checkpoint); err != nil {
		t.Fatal(err)
	}
	if !cp.Transcript.Unavailable || cp.Transcript.Reason != "the agent has no messages for these turns" {
		t.Errorf("no messages: %+v", cp.Transcript)
	}
	g.fsck(t)
}
