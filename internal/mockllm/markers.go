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
	// Edit is one call of the agent's own tool for editing a file, which
	// turns Marker.Path's Content into Edited: the file must hold Content
	// (a Write turn wrote it).
	Edit
	// Shell is one call of the agent's shell tool running ShellCommand.
	Shell
	// Delete deletes Marker.Path and Move renames it to Marker.To: with
	// the agent's own tool where it has one (Codex's apply_patch, which
	// moves a file holding Edited), else with its shell tool running
	// ShellCommand.
	Delete
	Move
)

// Reply is the text of every plain answer.
const Reply = "done."

// HoldText is what a held stream says before it stops, where its API
// streams text.
const HoldText = "Thinking it over"

// Content is what a [[write PATH]] turn makes the agent write, and
// Edited what an [[edit PATH]] turn makes of it.
const (
	Content = "written by the agent\n"
	Edited  = "edited by the agent\n"
)

// EditOld and EditNew are the text an [[edit PATH]] turn replaces, and
// what with: Content and Edited without their line end.
var (
	EditOld = strings.TrimSuffix(Content, "\n")
	EditNew = strings.TrimSuffix(Edited, "\n")
)

// Marker is what a prompt asks of the mock.
type Marker struct {
	Kind Kind
	Path string // the file, relative to the agent's working directory
	To   string // for Move: the new name
	// Escalate: the write asks to run outside the agent's sandbox, which
	// its user must approve ([[escalate PATH]]): Codex's shell tool with
	// sandbox_permissions require_escalated. The other agents ask their
	// user about any write in their default modes: for them it is a write.
	Escalate bool
}

var markerRE = regexp.MustCompile(`\[\[(?:(write|escalate|edit|shell|delete) ([^\]\s]+)|move ([^\]\s]+) ([^\]\s]+)|(hold)|(fail)|(ask))\]\]`)

// Parse finds the marker in a user message's text; the last one counts
// when there are several (a prompt may quote an earlier one).
func Parse(text string) Marker {
	all := markerRE.FindAllStringSubmatch(text, -1)
	if len(all) == 0 {
		return Marker{Kind: Plain}
	}
	m := all[len(all)-1]
	switch {
	case m[1] == "edit":
		return Marker{Kind: Edit, Path: m[2]}
	case m[1] == "shell":
		return Marker{Kind: Shell, Path: m[2]}
	case m[1] == "delete":
		return Marker{Kind: Delete, Path: m[2]}
	case m[2] != "":
		return Marker{Kind: Write, Path: m[2], Escalate: m[1] == "escalate"}
	case m[3] != "":
		return Marker{Kind: Move, Path: m[3], To: m[4]}
	case m[5] != "":
		return Marker{Kind: Hold}
	case m[6] != "":
		return Marker{Kind: Fail}
	default:
		return Marker{Kind: Ask}
	}
}

// ShellWrite is the shell command that writes Content to path, for mocks
// whose agent writes files through its shell tool.
func ShellWrite(path string) string {
	return "printf 'written by the agent\\n' > " + shellQuote(path)
}

// ShellCommand is the shell command that does what a Shell, Delete or
// Move marker asks, with paths as the marker gives them (relative to the
// agent's working directory): ShellWrite for Shell.
func ShellCommand(m Marker) string {
	switch m.Kind {
	case Delete:
		return "rm -- " + shellQuote(m.Path) // Codex refuses rm -f
	case Move:
		return "mv -- " + shellQuote(m.Path) + " " + shellQuote(m.To)
	}
	return ShellWrite(m.Path)
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
