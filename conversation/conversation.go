package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/tetherdev/tether/agent"
)

// ErrGone: the agent says it has no such session.
var ErrGone = errors.New("the agent no longer has this session")

// ErrUnsupported: the agent keeps no conversation tether can ask for.
var ErrUnsupported = errors.New("no way to ask this agent for a conversation")

// Message is one message of a conversation.
type Message struct {
	ID      string // the agent's message ID
	Role    string // user | assistant
	Answers string // for an answer, the ID of the message it answers
	JSON    []byte // the message as the agent exported it, compact, one line
}

// Command is the argv that exports session id of agentName, and ok false
// for an agent that has none.
func Command(agentName, id string) (argv []string, ok bool) {
	info, found := agent.Lookup(agentName)
	if !found || !info.Database {
		return nil, false
	}
	return []string{info.Binary, "export", id}, true
}

// Export asks the agent for the messages of session id, running its export
// in dir (the session's worktree, where the agent finds its project).
func Export(ctx context.Context, agentName, id, dir string) ([]Message, error) {
	argv, ok := Command(agentName, id)
	if !ok {
		return nil, fmt.Errorf("%s: %w", agentName, ErrUnsupported)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	said := lastLine(stderr.String())
	switch {
	case err != nil && agent.SaysSessionGone(stderr.String()+stdout.String()):
		return nil, fmt.Errorf("%s: %w", strings.Join(argv, " "), ErrGone)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s: %w", strings.Join(argv, " "), ctx.Err())
	case err != nil && said != "":
		return nil, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, said)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	msgs, err := Parse(stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return msgs, nil
}

// Parse reads an export: {"info": {...}, "messages": [{"info": {"id",
// "role", "parentID"}, "parts": [...]}, ...]}, as OpenCode 1.18 writes it.
func Parse(data []byte) ([]Message, error) {
	var doc struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("read the export: %w", err)
	}
	msgs := make([]Message, 0, len(doc.Messages))
	for i, raw := range doc.Messages {
		var m struct {
			Info struct {
				ID       string `json:"id"`
				Role     string `json:"role"`
				ParentID string `json:"parentID"`
			} `json:"info"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("read message %d of the export: %w", i, err)
		}
		var line bytes.Buffer
		if err := json.Compact(&line, raw); err != nil {
			return nil, fmt.Errorf("read message %d of the export: %w", i, err)
		}
		msgs = append(msgs, Message{ID: m.Info.ID, Role: m.Info.Role, Answers: m.Info.ParentID, JSON: line.Bytes()})
	}
	return msgs, nil
}

// Select returns, as JSON lines in the conversation's order, the messages
// of the turns whose prompts are the messages named by keys: each prompt
// and every answer to it.
func Select(msgs []Message, keys []string) []byte {
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		if k != "" {
			want[k] = true
		}
	}
	var out bytes.Buffer
	for _, m := range msgs {
		if want[m.ID] || (m.Answers != "" && want[m.Answers]) {
			out.Write(m.JSON)
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

// lastLine is what the agent said last (OpenCode says what it is doing
// first, then the error), without terminal colours.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b { // ESC [ ... letter
			for i++; i < len(s) && !(s[i] >= 'A' && s[i] <= 'Z' || s[i] >= 'a' && s[i] <= 'z'); i++ {
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return strings.TrimSpace(b.String())
}
