package checkpoint

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tetherdev/tether/state"
)

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func start(n int, prompt string, size int64) state.TurnRecord {
	return state.TurnRecord{T: state.RecTurnStart, Turn: n, At: t0.Add(time.Duration(n) * time.Minute), Prompt: prompt, Head: "h" + prompt, TranscriptSize: size}
}

func end(n int, size int64) state.TurnRecord {
	return state.TurnRecord{T: state.RecTurnEnd, Turn: n, At: t0.Add(time.Duration(n)*time.Minute + 30*time.Second), Head: "e", TranscriptSize: size}
}

// A turn knows the transcript's sizes at its start and end, where its
// tool calls are.
func TestPairTurnsTranscriptRange(t *testing.T) {
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	recs := []state.TurnRecord{
		{T: state.RecTurnStart, Turn: 1, At: at, TranscriptSize: 100},
		{T: state.RecTurnEnd, Turn: 1, At: at, TranscriptSize: 250},
		{T: state.RecTurnStart, Turn: 2, At: at, TranscriptSize: 250},
	}
	got := pairTurns(recs, false)
	if len(got) != 2 || got[0].TranscriptFrom != 100 || got[0].TranscriptTo != 250 || got[1].TranscriptFrom != 250 || got[1].TranscriptTo != 0 {
		t.Fatalf("pairTurns = %+v", got)
	}
}

func TestPairTurns(t *testing.T) {
	at := func(n int, sec int) time.Time {
		return t0.Add(time.Duration(n)*time.Minute + time.Duration(sec)*time.Second)
	}
	tests := []struct {
		name  string
		recs  []state.TurnRecord
		ended bool
		want  []Turn
	}{
		{"none", nil, false, nil},
		{"one whole turn", []state.TurnRecord{start(1, "a", 0), end(1, 10)}, false,
			[]Turn{{Turn: 1, Prompt: "a", StartedAt: at(1, 0), EndedAt: at(1, 30), HeadBefore: "ha", HeadAfter: "e"}}},
		{"start after start interrupts", []state.TurnRecord{start(1, "a", 0), start(2, "b", 5), end(2, 10)}, false,
			[]Turn{
				{Turn: 1, Prompt: "a", StartedAt: at(1, 0), HeadBefore: "ha", Interrupted: true},
				{Turn: 2, Prompt: "b", StartedAt: at(2, 0), EndedAt: at(2, 30), HeadBefore: "hb", HeadAfter: "e"},
			}},
		{"trailing start runs while the session lives", []state.TurnRecord{start(3, "c", 0)}, false,
			[]Turn{{Turn: 3, Prompt: "c", StartedAt: at(3, 0), HeadBefore: "hc", Running: true}}},
		{"trailing start of an ended session was interrupted", []state.TurnRecord{start(3, "c", 0)}, true,
			[]Turn{{Turn: 3, Prompt: "c", StartedAt: at(3, 0), HeadBefore: "hc", Interrupted: true}}},
		{"end without start continues an earlier turn", []state.TurnRecord{end(4, 9), start(5, "d", 9), end(5, 12)}, false,
			[]Turn{
				{Turn: 4, EndedAt: at(4, 30), HeadAfter: "e", Continued: true},
				{Turn: 5, Prompt: "d", StartedAt: at(5, 0), EndedAt: at(5, 30), HeadBefore: "hd", HeadAfter: "e"},
			}},
		{"end of another turn closes the open one as interrupted", []state.TurnRecord{start(6, "f", 0), end(5, 3)}, false,
			[]Turn{
				{Turn: 6, Prompt: "f", StartedAt: at(6, 0), HeadBefore: "hf", Interrupted: true},
				{Turn: 5, EndedAt: at(5, 30), HeadAfter: "e", Continued: true},
			}},
		{"unknown record kinds are ignored", []state.TurnRecord{{T: "note", Turn: 1}, start(1, "a", 0), end(1, 4)}, true,
			[]Turn{{Turn: 1, Prompt: "a", StartedAt: at(1, 0), EndedAt: at(1, 30), HeadBefore: "ha", HeadAfter: "e"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pairTurns(tt.recs, tt.ended)
			for i := range got {
				// Where the turns' tool calls are: TestPairTurnsTranscriptRange.
				got[i].TranscriptFrom, got[i].TranscriptTo = 0, 0
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("pairTurns:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestTranscriptSpan(t *testing.T) {
	tests := []struct {
		name     string
		recs     []state.TurnRecord
		ended    bool
		contFrom int64
		want     span
	}{
		{"whole turns end at the last turn-end", []state.TurnRecord{start(1, "a", 100), end(1, 250)}, false, -1, span{from: 100, to: 250}},
		{"running turn reads to EOF", []state.TurnRecord{start(1, "a", 100), end(1, 250), start(2, "b", 260)}, false, -1, span{from: 100, toEOF: true}},
		{"ended session reads to EOF", []state.TurnRecord{start(1, "a", 100), end(1, 250)}, true, -1, span{from: 100, toEOF: true}},
		{"continued turn starts where the earlier slice stopped", []state.TurnRecord{end(1, 300), start(2, "b", 310), end(2, 400)}, false, 220, span{from: 220, to: 400}},
		{"continued turn without an earlier slice starts at its end", []state.TurnRecord{end(1, 300)}, false, -1, span{from: 300, to: 300}},
		{"continuation offset ignored for a leading start", []state.TurnRecord{start(2, "b", 310), end(2, 400)}, false, 220, span{from: 310, to: 400}},
		{"a recorded end before the start is clamped", []state.TurnRecord{start(1, "a", 100), end(1, 40)}, false, -1, span{from: 100, to: 100}},
		{"no records", nil, true, -1, span{toEOF: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := transcriptSpan(tt.recs, tt.ended, tt.contFrom); got != tt.want {
				t.Errorf("transcriptSpan = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCheckpointID(t *testing.T) {
	a := checkpointID("sess-1", "inc-a", 0)
	if a != checkpointID("sess-1", "inc-a", 0) {
		t.Fatal("checkpointID is not deterministic")
	}
	if len(a) != 16 || !validID(a) {
		t.Fatalf("checkpointID = %q, want 16 hex digits", a)
	}
	seen := map[string]string{}
	for _, s := range []string{"sess-1", "sess-2", "sess-10", "sess-1\x000"} {
		for _, inc := range []string{"", "inc-a", "inc-b"} {
			for _, off := range []int64{0, 1, 10, 100, 1 << 40} {
				id := checkpointID(s, inc, off)
				key := fmt.Sprintf("%q/%s@%d", s, inc, off)
				if prev, dup := seen[id]; dup {
					t.Fatalf("checkpointID(%s) collides with %s", key, prev)
				}
				seen[id] = key
			}
		}
	}
}

func TestValidID(t *testing.T) {
	for s, want := range map[string]bool{
		"0123456789abcdef": true, "abcd": true, "abc": false, "ABCD": false,
		"../x": false, "0123g": false, "": false, strings.Repeat("a", 65): false,
	} {
		if got := validID(s); got != want {
			t.Errorf("validID(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestPromptsMarkdown(t *testing.T) {
	c := &Checkpoint{ID: "0123456789abcdef", Session: "s1", Agent: "claude-code", Turns: []Turn{
		{Turn: 2, Continued: true},
		{Turn: 3, Prompt: "fix the bug\n", StartedAt: t0, EndedAt: t0.Add(time.Minute)},
		{Turn: 4, Prompt: "now the docs", StartedAt: t0.Add(2 * time.Minute), Interrupted: true},
		{Turn: 5, Running: true},
	}}
	want := `# Session s1 (claude-code)

Checkpoint 0123456789abcdef, turns 2-5.

## Turn 2

(continued from an earlier checkpoint)

## Turn 3

_started 2026-05-01T10:00:00Z, ended 2026-05-01T10:01:00Z_

fix the bug

## Turn 4 (interrupted)

_started 2026-05-01T10:02:00Z_

now the docs

## Turn 5 (running when condensed)

(no prompt recorded)
`
	if got := string(c.promptsMarkdown()); got != want {
		t.Errorf("promptsMarkdown:\n%s\nwant:\n%s", got, want)
	}
}

func TestParseCheckpoint(t *testing.T) {
	c := &Checkpoint{Version: 1, ID: "0123456789abcdef", Session: "s", Turns: []Turn{{Turn: 1, Prompt: "p", StartedAt: t0}}}
	data, err := c.marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseCheckpoint(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("round trip: got %+v, want %+v", got, c)
	}
	for _, bad := range []string{``, `{}`, `{"version":1,"id":"../../x"}`, `{"version":0,"id":"abcd"}`, `[1]`} {
		if _, err := parseCheckpoint([]byte(bad)); err == nil {
			t.Errorf("parseCheckpoint(%q): no error", bad)
		}
	}
}

func FuzzParseCheckpoint(f *testing.F) {
	f.Add([]byte(`{"version":1,"id":"0123456789abcdef","session":"s","turns":[{"turn":1}],"transcript":{"from":0,"to":5}}`))
	f.Add([]byte(`{"version":2,"id":"abcd","turns":null}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseCheckpoint(data)
		if err != nil {
			return
		}
		if c.Version < 1 || !validID(c.ID) {
			t.Fatalf("accepted %+v", c)
		}
		// What was accepted re-encodes and parses to the same value.
		again, err := c.marshal()
		if err != nil {
			t.Fatal(err)
		}
		c2, err := parseCheckpoint(again)
		if err != nil {
			t.Fatal(err)
		}
		third, err := c2.marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, third) {
			t.Fatalf("round trip changed\n%s\nto\n%s", again, third)
		}
	})
}
