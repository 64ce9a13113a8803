// Command standin is a stand-in coding agent for tests, the demo and the
// stress driver. It behaves like Claude Code where tether can see it: it
// exports CLAUDE_PID, writes a JSONL transcript, and runs its hook command
// through `/bin/sh -c` with a Claude Code payload on stdin, for each action
// it is given:
//
//	standin --hook 'tether-hook claude-code' --session ID --transcript PATH [--cwd DIR] ACTION...
//	standin --settings --session ID --transcript PATH [--cwd DIR] ACTION...
//
// With --settings it runs, for each event, the hook commands of the
// project's .claude/settings.json, as Claude Code does.
//
// Actions: start[=source], turn=PROMPT (a whole turn), open=PROMPT (a turn
// that never ends: the agent then waits to be killed), begin=PROMPT (a turn
// that goes on with the actions after it), write=PATH[:TEXT] and
// remove=PATH (tool calls editing the worktree in the turn begun,
// recorded in the transcript as Claude Code's Write and Bash tool calls),
// stop (that turn ends), hang (wait to be killed), commit=MESSAGE
// (git add -A and commit, as an agent does mid-turn), end[=reason],
// sleep=DURATION, replay=FILE (fire a recorded Claude Code payload, such as
// one of agent/testdata/recorded/claude-code, with its session, transcript and
// cwd replaced by the stand-in's). Build it as "claude" to look like the
// real thing.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

type agent struct {
	// thinking: the turn begun has yet to make its first tool call, which
	// waits for the capture of the turn's start.
	thinking     bool
	startsBefore []string // the start captures recorded before it began
	prompt       string   // of the turn begun
	hook         string
	session      string
	transcript   string
	cwd          string
	turn         int
	quiet        bool
	settings     bool // run the hooks .claude/settings.json gives, not hook
}

func main() {
	a := &agent{}
	flag.StringVar(&a.hook, "hook", "tether-hook claude-code", "hook command, run with /bin/sh -c")
	flag.StringVar(&a.session, "session", "", "session ID")
	flag.StringVar(&a.transcript, "transcript", "", "transcript path (JSONL)")
	flag.StringVar(&a.cwd, "cwd", "", "working directory (default: current)")
	flag.BoolVar(&a.quiet, "quiet", false, "do not narrate")
	flag.BoolVar(&a.settings, "settings", false, "run the hooks the project's .claude/settings.json configures, as Claude Code does, instead of --hook")
	flag.Parse()
	if a.session == "" || a.transcript == "" {
		fmt.Fprintln(os.Stderr, "standin: --session and --transcript are required")
		os.Exit(2)
	}
	if a.cwd == "" {
		a.cwd, _ = os.Getwd()
	}
	os.Setenv("CLAUDE_PID", strconv.Itoa(os.Getpid()))
	os.Setenv("CLAUDE_CODE_SESSION_ID", a.session)
	for _, act := range flag.Args() {
		name, arg, _ := strings.Cut(act, "=")
		if err := a.do(name, arg); err != nil {
			fmt.Fprintf(os.Stderr, "standin: %s: %v\n", act, err)
			os.Exit(1)
		}
	}
}

func (a *agent) do(name, arg string) error {
	switch name {
	case "start":
		if arg == "" {
			arg = "startup"
		}
		return a.fire(map[string]any{"hook_event_name": "SessionStart", "source": arg})
	case "begin":
		a.thinking, a.startsBefore = true, a.startCaptures()
		a.turn++
		a.say("prompt: %q", arg)
		if err := a.write("user", arg); err != nil {
			return err
		}
		if err := a.fire(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": arg}); err != nil {
			return err
		}
		a.prompt = arg
		return a.write("assistant", "working on: "+arg)
	case "write", "remove":
		a.think()
		path, text, _ := strings.Cut(arg, ":")
		// The tool call into the transcript as Claude Code records it: a
		// write is its Write tool (the content left out: tests look for
		// where a file's bytes end up), a removal a shell command (Bash).
		if name == "write" {
			if err := a.toolUse("Write", map[string]any{"file_path": filepath.Join(a.cwd, path)}); err != nil {
				return err
			}
		} else if err := a.toolUse("Bash", map[string]any{"command": "rm " + path}); err != nil {
			return err
		}
		if err := a.edit(name, path, text); err != nil {
			return err
		}
		// Into the transcript once done, as the agent records a tool's result.
		return a.write("user", name+" "+path+": done")
	case "stop":
		a.thinking = false
		if err := a.write("assistant", "done: "+a.prompt); err != nil {
			return err
		}
		return a.fire(map[string]any{"hook_event_name": "Stop", "stop_hook_active": false})
	case "hang":
		a.say("the turn is running (pid %d); waiting to be killed", os.Getpid())
		for {
			time.Sleep(time.Hour)
		}
	case "turn", "open":
		// A turn whose agent calls no tool: nothing to wait for.
		if err := a.do("begin", arg); err != nil {
			return err
		}
		a.thinking = false
		if name == "open" {
			return a.do("hang", "")
		}
		return a.do("stop", "")
	case "commit":
		a.think()
		if err := a.toolUse("Bash", map[string]any{"command": "git add -A && git commit -m " + strconv.Quote(arg)}); err != nil {
			return err
		}
		f := filepath.Join(a.cwd, fmt.Sprintf("work-%d.txt", a.turn))
		if err := os.WriteFile(f, []byte(arg+"\n"), 0o644); err != nil {
			return err
		}
		for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", arg}} {
			cmd := exec.Command("git", args...)
			cmd.Dir, cmd.Stdout, cmd.Stderr = a.cwd, os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("git %s: %w", args[0], err)
			}
		}
		a.say("committed %q", arg)
		return nil
	case "end":
		if arg == "" {
			arg = "other"
		}
		return a.fire(map[string]any{"hook_event_name": "SessionEnd", "reason": arg})
	case "replay":
		return a.replay(arg)
	case "sleep":
		d, err := time.ParseDuration(arg)
		if err != nil {
			return err
		}
		time.Sleep(d)
		return nil
	}
	return fmt.Errorf("unknown action %q", name)
}

// edit is a tool call: write or remove a file of the worktree.
func (a *agent) edit(tool, path, text string) error {
	p := filepath.Join(a.cwd, path)
	if tool == "remove" {
		return os.Remove(p)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if text == "" {
		text = "written by the agent in turn " + strconv.Itoa(a.turn)
	}
	return os.WriteFile(p, []byte(text+"\n"), 0o644)
}

// think stands for the model's latency before the first tool call of a
// turn: a real model takes seconds to its first tool call, longer than
// tether's capture of the worktree at the turn's start takes to land
// (scripts/bench measures it), so the stand-in waits for that capture, up
// to a bound, rather than racing it.
func (a *agent) think() {
	if !a.thinking {
		return
	}
	a.thinking = false
	cmd := exec.Command("git", "config", "--bool", "tether.snapshots")
	cmd.Dir = a.cwd
	if out, _ := cmd.Output(); strings.TrimSpace(string(out)) == "false" {
		return // captures off: nothing to wait for
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if len(a.startCaptures()) > len(a.startsBefore) {
			return
		}
	}
	a.say("no capture of the turn's start landed")
}

// startCaptures lists the session's captures of a turn's start.
func (a *agent) startCaptures() []string {
	cmd := exec.Command("git", "log", "--format=%s", "refs/tether/snapshots/"+a.session, "--")
	cmd.Dir = a.cwd
	out, _ := cmd.Output()
	var starts []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "tether: turn ") && strings.HasSuffix(line, " start") {
			starts = append(starts, line)
		}
	}
	return starts
}

// replay fires a recorded payload. A prompt it submits goes into the
// transcript first, as the agent records the user's message before its hook
// runs.
func (a *agent) replay(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var payload map[string]any
	if err := json.Unmarshal(b, &payload); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if _, ok := payload["hook_event_name"].(string); !ok {
		return fmt.Errorf("%s: not a hook payload (no hook_event_name)", file)
	}
	if prompt, ok := payload["prompt"].(string); ok {
		a.turn++
		a.say("prompt: %q (replayed)", prompt)
		if err := a.write("user", prompt); err != nil {
			return err
		}
	}
	return a.fire(payload)
}

// fire runs the hook command the way Claude Code does: through /bin/sh -c,
// payload on stdin, in the session's working directory.
func (a *agent) fire(payload map[string]any) error {
	payload["session_id"] = a.session
	payload["transcript_path"] = a.transcript
	payload["cwd"] = a.cwd
	b, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	event, _ := payload["hook_event_name"].(string)
	hooks := []string{a.hook}
	if a.settings {
		if hooks, err = settingsHooks(a.cwd, event); err != nil {
			return err
		}
	}
	for _, h := range hooks {
		cmd := exec.Command("/bin/sh", "-c", h)
		cmd.Dir = a.cwd
		cmd.Stdin = strings.NewReader(string(b))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("hook %s: %w", event, err)
		}
	}
	return nil
}

// settingsHooks are the commands the project's .claude/settings.json
// gives for an event, as Claude Code reads them.
func settingsHooks(dir, event string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, ".claude", "settings.json"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf(".claude/settings.json: %w", err)
	}
	var cmds []string
	for _, group := range cfg.Hooks[event] {
		for _, h := range group.Hooks {
			cmds = append(cmds, h.Command)
		}
	}
	return cmds, nil
}

// write appends one message to the transcript, as the agent records its
// conversation.
func (a *agent) write(role, text string) error {
	return a.append(map[string]any{
		"type": role, "sessionId": a.session, "timestamp": time.Now().UTC().Format(time.RFC3339Nano),
		"message": map[string]any{"role": role, "content": text},
	})
}

// append adds one line to the transcript.
func (a *agent) append(entry map[string]any) error {
	if err := os.MkdirAll(filepath.Dir(a.transcript), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(a.transcript, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	line, _ := json.Marshal(entry)
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// toolUse appends the assistant's call of a tool, in Claude Code's shape.
func (a *agent) toolUse(name string, input map[string]any) error {
	return a.append(map[string]any{
		"type": "assistant", "sessionId": a.session, "timestamp": time.Now().UTC().Format(time.RFC3339Nano),
		"message": map[string]any{"role": "assistant", "content": []any{map[string]any{
			"type": "tool_use", "id": fmt.Sprintf("toolu_standin_%d_%d", a.turn, time.Now().UnixNano()), "name": name, "input": input,
		}}},
	})
}

func (a *agent) say(format string, args ...any) {
	if !a.quiet {
		fmt.Printf("  [agent %d] "+format+"\n", append([]any{os.Getpid()}, args...)...)
	}
}
