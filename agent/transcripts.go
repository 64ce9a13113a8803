package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// A payload names its session's transcript, but a payload is only data: it
// could name /etc/shadow, a FIFO, or a symlink out of the agent's
// directory. tether reads a transcript only inside the directory where its
// agent keeps transcripts (TranscriptRoot), resolved from the agent's own
// environment when its hook runs, and only a regular file there, opened
// without blocking (OpenTranscript).

// transcriptHome says where one agent keeps its transcripts: in dir inside
// the agent's home, which is the directory named by env when it is set,
// else home under the user's home directory.
type transcriptHome struct {
	agent string // canonical name
	env   string // variable that moves the agent's home; "" for none
	home  string // the agent's home under the user's home ("" for the user's home itself)
	dir   string // the transcripts' directory inside the agent's home
	// dirEnv names a variable that moves the transcripts' directory
	// itself, winning over the home's ("" for none).
	dirEnv string
}

// transcriptHomes is the table of where each agent keeps its transcripts,
// as recorded from the real CLIs (agent/testdata/recorded) and their docs.
// An agent missing here has no transcript tether reads.
var transcriptHomes = []transcriptHome{
	{"claude-code", "CLAUDE_CONFIG_DIR", ".claude", "projects", ""},                       // projects/<project>/<session>.jsonl
	{"codex", "CODEX_HOME", ".codex", "sessions", ""},                                     // sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl
	{"gemini", "GEMINI_CLI_HOME", "", ".gemini/tmp", ""},                                  // .gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl
	{"copilot", "COPILOT_HOME", ".copilot", "session-state", ""},                          // session-state/<session>/events.jsonl
	{"cursor", "", ".cursor", "projects", ""},                                             // projects/<project>/agent-transcripts/<session>.txt
	{"droid", "", ".factory", "sessions", ""},                                             // sessions/<cwd, / as ->/<session>.jsonl
	{"pi", "PI_CODING_AGENT_DIR", ".pi/agent", "sessions", "PI_CODING_AGENT_SESSION_DIR"}, // sessions/--<cwd, / as ->--/<time>_<session>.jsonl
	{"qwen", "QWEN_HOME", ".qwen", "projects", ""},                                        // projects/<cwd, / as ->/chats/<session>.jsonl
}

// TranscriptRoot is the directory the agent keeps its transcripts in, as
// the environment getenv reads describes it: the hook passes the agent's
// own environment, where variables such as CLAUDE_CONFIG_DIR are the ones
// the agent used. The result is absolute and clean; "" when the agent is
// unknown or has no home to find.
func TranscriptRoot(agentName string, getenv func(string) string) string {
	a, ok := find(agentName)
	if !ok {
		return ""
	}
	for _, t := range transcriptHomes {
		if t.agent != a.info.Name {
			continue
		}
		if t.dirEnv != "" {
			if dir := getenv(t.dirEnv); dir != "" {
				root, err := filepath.Abs(dir)
				if err != nil {
					return ""
				}
				return root
			}
		}
		home := ""
		if t.env != "" {
			home = getenv(t.env)
		}
		if home == "" {
			user := userHome(getenv)
			if user == "" {
				return ""
			}
			home = filepath.Join(user, t.home)
		}
		root, err := filepath.Abs(filepath.Join(home, filepath.FromSlash(t.dir)))
		if err != nil {
			return ""
		}
		return root
	}
	return ""
}

// userHome is the user's home directory as os.UserHomeDir finds it, from
// the given environment.
func userHome(getenv func(string) string) string {
	switch runtime.GOOS {
	case "windows":
		return getenv("USERPROFILE")
	case "plan9":
		return getenv("home")
	}
	return getenv("HOME")
}

// Errors OpenTranscript wraps.
var (
	ErrTranscriptOutside    = errors.New("transcript is outside the directory its agent keeps transcripts in")
	ErrTranscriptNotRegular = errors.New("transcript is not a regular file")
)

// TranscriptInRoot reports whether path names a file inside root, by the
// names alone (symlinks are OpenTranscript's business), and returns it
// relative to root.
func TranscriptInRoot(root, path string) (string, bool) {
	if root == "" || !filepath.IsAbs(root) || !filepath.IsAbs(path) {
		return "", false
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// OpenTranscript opens the transcript at path for reading, if it is a
// regular file inside root. It is opened through os.Root, so no symlink in
// or below root leads out of it, and without blocking, so a FIFO or a
// device is refused instead of hanging the reader; that it is a regular
// file is checked on the opened descriptor, so nothing swapped in between
// a check and the open gets read.
func OpenTranscript(root, path string) (*os.File, error) {
	rel, ok := TranscriptInRoot(root, path)
	if !ok {
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrTranscriptOutside, root)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("transcript directory: %w", err)
	}
	defer r.Close()
	f, err := r.OpenFile(rel, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrTranscriptNotRegular, fi.Mode().Type())
	}
	return f, nil
}
