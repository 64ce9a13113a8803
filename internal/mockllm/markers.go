package mockllm

import (
	"regexp"
	"strings"
)

// Kind is what a marker asks the mock to do.
type Kind int

const (
	// Plain is a short text reply (no marker).
	Plain Kind = iota
	// Write is one tool call writing Marker.Path with Content.
	Write
	// Hold starts the stream and keeps it open.
	Hold
	// Fail is an HTTP 400 with the API's error body.
	Fail
	// Ask is one call of the agent's own tool for asking its user a
	// question (Question), when the request offers one; else Plain.
	Ask
)

// Reply is the text of every plain answer.
const Reply = "done."

// HoldText is what a held stream says before it stops, where its API
// streams text.
const HoldText = "Thinking it over"

// Content is what a [[write PATH]] turn makes the agent write.
const Content = "written by the agent\n"

// Marker is what a prompt asks of the mock.
type Marker struct {
	Kind Kind
	Path string // for Write: the file, relative to the agent's working directory
	// Escalate: the write asks to run outside the agent's sandbox, which
	// its user must approve ([[escalate PATH]]): Codex's shell tool with
	// sandbox_permissions require_escalated. The other agents ask their
	// user about any write in their default modes: for them it is a write.
	Escalate bool
}

var markerRE = regexp.MustCompile(`\[\[(?:(write|escalate) ([^\]\s]+)|(hold)|(fail)|(ask))\]\]`)

// Parse finds the marker in a user message's text; the last one counts
// when there are several (a prompt may quote an earlier one).
func Parse(text string) Marker {
	all := markerRE.FindAllStringSubmatch(text, -1)
	if len(all) == 0 {
		return Marker{Kind: Plain}
	}
	m := all[len(all)-1]
	switch {
	case m[2] != "":
		return Marker{Kind: Write, Path: m[2], Escalate: m[1] == "escalate"}
	case m[3] != "":
		return Marker{Kind: Hold}
	case m[4] != "":
		return Marker{Kind: Fail}
	default:
		return Marker{Kind: Ask}
	}
}

// ShellWrite is the shell command that writes Content to path, for mocks
// whose agent writes files through its shell tool.
func ShellWrite(path string) string {
	return "printf 'written by the agent\\n' > '" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}
