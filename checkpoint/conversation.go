package checkpoint

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tetherdev/tether/conversation"
	"github.com/tetherdev/tether/state"
)

// ConversationReader asks the agent of a session that keeps its sessions
// in a database (state.Session.AgentDB) for the session's messages:
// conversation.Export, which the sweep passes to SetConversations.
type ConversationReader func(ctx context.Context, agent, id, dir string) ([]conversation.Message, error)

// conversationTimeout bounds one agent's export: the agent is a program
// that may hang, and the sweep must finish. It runs before the checkpoints
// lock is taken, so no other sweep waits on it.
const conversationTimeout = 30 * time.Second

// SetConversations makes Condense store, for a session whose agent keeps
// no transcript file, the messages of its turns as read asks the agent for
// them. Without it such a checkpoint records its transcript as
// unavailable.
func (r *Repo) SetConversations(read ConversationReader) { r.conversations = read }

// exportConversations asks the agents for the conversations of the given
// sessions that keep theirs in a database and have turns to condense. It
// runs before the checkpoints lock is taken: an export can take seconds.
func (r *Repo) exportConversations(st *state.Store, ids []string) map[string]exported {
	var out map[string]exported
	for _, id := range ids {
		s, err := st.Load(id)
		if err != nil || !s.AgentDB || !(s.HasPending() || s.Phase == state.PhaseEnded) {
			continue // prepare reports a session it cannot load
		}
		if out == nil {
			out = map[string]exported{}
		}
		argv, _ := conversation.Command(s.Agent, s.ID)
		e := exported{source: strings.Join(argv, " ")}
		if r.conversations == nil {
			e.err = fmt.Errorf("%s was not asked for the conversation", s.Agent)
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), conversationTimeout)
			e.msgs, e.err = r.conversations(ctx, s.Agent, s.ID, s.Worktree)
			cancel()
		}
		out[id] = e
	}
	return out
}

// exported is what an agent answered for one session, and the keys of the
// turns slice selected (by turn).
type exported struct {
	source string
	msgs   []conversation.Message
	err    error
	keys   map[int]string
}

// slice is what was said in the given turns of session id: the messages of
// their prompts, each known by its turn record's key, and the answers. It
// keeps each turn's key, for turn.
func (e *exported) slice(st *state.Store, id string, turns []Turn) conversationSlice {
	c := conversationSlice{source: e.source, err: e.err}
	if e.err != nil {
		return c
	}
	keys, err := turnKeys(st, id, turns)
	if err != nil {
		c.err = err
		return c
	}
	e.keys = keys
	c.data = conversation.Select(e.msgs, slices.Collect(maps.Values(keys)))
	return c
}

// turn is what was said in one turn of those slice was given: its
// prompt's messages and the answers; ok is false when unknown.
func (e *exported) turn(n int) (messages []byte, ok bool) {
	key, found := e.keys[n]
	if e.err != nil || !found {
		return nil, false
	}
	return conversation.Select(e.msgs, []string{key}), true
}

// turnKeys are the keys (the agent's IDs of the prompts) of the turn-start
// records of turns, by turn, read from the session's whole turn log: a
// continued turn started in an earlier checkpoint.
func turnKeys(st *state.Store, id string, turns []Turn) (map[int]string, error) {
	want := map[int]bool{}
	for _, t := range turns {
		want[t.Turn] = true
	}
	recs, _, err := st.ReadTurns(id, 0)
	if err != nil {
		return nil, fmt.Errorf("read the turns of %s: %w", id, err)
	}
	keys := map[int]string{}
	for _, rec := range recs {
		if rec.T == state.RecTurnStart && want[rec.Turn] && rec.Key != "" {
			keys[rec.Turn] = rec.Key
		}
	}
	return keys, nil
}
