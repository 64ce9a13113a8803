package agent

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/tetherdev/tether/internal/jsontext"
)

// ToolWrites is what a turn's tool calls did to files, as the agent
// recorded them in its transcript.
type ToolWrites struct {
	// Paths are the files its file tools wrote, as the agent named them
	// (absolute, or relative to its working directory), each once.
	Paths []string
	// Shell: a tool that may write any file ran (a shell command, a
	// subagent, a tool tether does not know): what the transcript names
	// is not all the turn may have changed.
	Shell bool
}

// Span is a turn's part of its transcript: the bytes [From, To), To < 0
// for all that follows From.
type Span struct {
	From, To int64
}

// maxWritesScan bounds the bytes of a session's turns TurnWrites reads in
// one call.
const maxWritesScan = 64 << 20

// TurnWrites reads the tool calls the agent recorded in its transcript
// for each turn, a span of the transcript OpenTranscript opens inside
// root: the file is opened once and each span read once. ws[i] is what
// the calls in spans[i] wrote, and told[i] whether the transcript could
// tell: not for an agent whose transcript tether does not read for tools
// (the adapter's writes is nil, or it keeps no transcript file: see
// ConversationWrites), nor when the transcript cannot be read, nor for a
// span that starts nowhere (From < 0) or is longer than the bound left:
// the caller then has only the captures.
func TurnWrites(agentName, root, path string, spans []Span) (ws []ToolWrites, told []bool) {
	ws, told = make([]ToolWrites, len(spans)), make([]bool, len(spans))
	a, found := find(agentName)
	if !found || a.writes == nil || a.info.Database || path == "" {
		return ws, told
	}
	f, err := OpenTranscript(root, path)
	if err != nil {
		return ws, told
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ws, told
	}
	budget := int64(maxWritesScan)
	for i, sp := range spans {
		to := sp.To
		if to < 0 || to > fi.Size() {
			to = fi.Size()
		}
		if sp.From < 0 || to-sp.From > budget {
			continue
		}
		if to <= sp.From {
			told[i] = true // nothing recorded: no tool ran
			continue
		}
		budget -= to - sp.From
		told[i] = readWrites(a, io.NewSectionReader(f, sp.From, to-sp.From), &ws[i]) == nil
	}
	return ws, told
}

// ConversationWrites reads what the tool calls in one turn's messages
// wrote, for an agent that keeps its conversation in a database (OpenCode:
// the turn's messages as `opencode export` gave them, one JSON object a
// line, as package conversation selects them). ok is false when they
// cannot tell: an agent without a reader, or more than the bound.
func ConversationWrites(agentName string, messages []byte) (w ToolWrites, ok bool) {
	a, found := find(agentName)
	if !found || a.writes == nil || !a.info.Database || len(messages) > maxWritesScan {
		return ToolWrites{}, false
	}
	if err := readWrites(a, bytes.NewReader(messages), &w); err != nil {
		return ToolWrites{}, false
	}
	return w, true
}

// readWrites passes each line of r to the agent's reader.
func readWrites(a adapter, r io.Reader, w *ToolWrites) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			a.writes(bytes.TrimSpace(line), w)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// add records a path once.
func (w *ToolWrites) add(p string) {
	if p != "" && !slices.Contains(w.Paths, p) {
		w.Paths = append(w.Paths, p)
	}
}

// elements calls f on each element of raw, a JSON array; nothing for
// anything else.
func elements(raw []byte, f func(elem []byte)) {
	v, err := jsontext.Parse(raw)
	if err != nil || v.Kind() != jsontext.Array {
		return
	}
	for e := range v.Elements() {
		f(e.Raw())
	}
}

// patchPaths records the files a patch in the format of Codex's
// apply_patch (which OpenCode's apply_patch takes too) adds, updates,
// deletes or moves, by its headers: "*** Add File: P", "*** Update File:
// P", "*** Delete File: P", "*** Move to: P", each at the start of a line
// (a hunk's lines start with +, -, a space or @@, so none is taken for a
// header).
func patchPaths(patch string, w *ToolWrites) {
	for line := range strings.Lines(patch) {
		for _, header := range []string{"*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:"} {
			if p, ok := strings.CutPrefix(line, header); ok {
				w.add(strings.TrimSpace(p))
			}
		}
	}
}
