//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tetherdev/tether/internal/mockllm"
	"github.com/tetherdev/tether/sweep"
)

// The waits of issue 26, in each agent's TUI, its default permission mode
// and no bypass flag: a tool call that needs the user's approval makes the
// session wait (kind permission, the tool) within a second of the agent's
// dialog; approved, it works on and ends its turn; denied, its turn ends;
// killed while it waits, it was interrupted. Two status --watch follow it
// all: one in a tmux pane, redrawn in place; one --json, whose lines are
// checked.

// waitWithin is how soon after the agent's dialog shows the watch must
// report the wait.
const waitWithin = time.Second

// watchLine is one line of status --watch --json, with when it came.
type watchLine struct {
	Change  string    `json:"change"`
	Session sweep.Row `json:"session"`
	at      time.Time
}

// watchStream is a status --watch --json running in the repository.
type watchStream struct {
	t     *testing.T
	lines chan watchLine
	mu    sync.Mutex
	seen  []watchLine
}

// startWatch starts `tether-sweep status --watch --json` in the repository
// and reads its lines as they come.
func startWatch(r *repo) *watchStream {
	r.t.Helper()
	p := r.command("tether-sweep", "status", "--watch", "--json")
	out, err := p.StdoutPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	var stderr lockedBuffer
	p.Stderr = &stderr
	if err := p.Start(); err != nil {
		r.t.Fatal(err)
	}
	ws := &watchStream{t: r.t, lines: make(chan watchLine, 256)}
	r.t.Cleanup(func() {
		p.Process.Signal(syscall.SIGINT)
		p.Wait()
	})
	r.onFailure(func() string {
		ws.mu.Lock()
		defer ws.mu.Unlock()
		var b strings.Builder
		for _, l := range ws.seen {
			fmt.Fprintf(&b, "%s %s %s %s %+v\n", l.at.Format("15:04:05.000"), l.Change, l.Session.ID, l.Session.Phase, l.Session.Waiting)
		}
		return "status --watch --json saw:\n" + b.String() + "stderr: " + stderr.String()
	})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			var l watchLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				r.t.Errorf("status --watch --json printed %q: %v", sc.Text(), err)
				continue
			}
			l.at = time.Now()
			ws.mu.Lock()
			ws.seen = append(ws.seen, l)
			ws.mu.Unlock()
			ws.lines <- l
		}
		io.Copy(io.Discard, out)
		close(ws.lines)
	}()
	return ws
}

// next waits for the next line that want accepts, skipping others.
func (ws *watchStream) next(what string, timeout time.Duration, want func(watchLine) bool) watchLine {
	ws.t.Helper()
	l, ok := ws.within(what, timeout, want)
	if !ok {
		ws.t.Fatalf("waited %s for %s from status --watch --json", timeout, what)
	}
	return l
}

// within is next that reports, rather than fails, a line not come within
// timeout.
func (ws *watchStream) within(what string, timeout time.Duration, want func(watchLine) bool) (watchLine, bool) {
	ws.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-ws.lines:
			if !ok {
				ws.t.Fatalf("status --watch --json ended before %s", what)
			}
			if want(l) {
				return l, true
			}
		case <-deadline:
			return watchLine{}, false
		}
	}
}

// dialogWait is a dialog of the agent's and the wait the watch reports
// for it.
type dialogWait struct {
	words  string // words the agent's screen shows only while the dialog is open
	kind   string // permission or question
	detail string // how the wait's detail begins: the tool, the question
	shown  string // what the status --watch pane, if any, shows of the wait
}

// waitStory is what an agent's test needs to tell the waits' story.
type waitStory struct {
	r          *repo
	tm         *tmuxSession // the agent's TUI
	ws         *watchStream
	pane       *tmuxSession // status --watch in a pane of its own, or nil
	wait       time.Duration
	marker     string     // the mock's marker of a call that needs approval: write, or escalate (Codex)
	permission dialogWait // the dialog of that call
	prompt     func(string)
	approve    []string // the keys that approve the call
	deny       []string // the keys that deny it
	// question, when not nil, is the dialog of the agent's tool for
	// asking its user ([[ask]]); answer, the keys that pick its first
	// choice.
	question *dialogWait
	answer   []string
	agent    func() int
	// afterDenial, when not nil, checks more of the session after the
	// denied turn's end.
	afterDenial func(id string)
}

// tell tells the story: a call approved, a question answered, a call
// denied, and one left waiting while its agent is killed with -9; the
// --json lines of the session said each change in order; doctor and git
// fsck are clean.
func (st *waitStory) tell() {
	st.r.t.Helper()
	s := st.askAndWait("make a file [["+st.marker+" a.txt]]", st.permission)
	st.answered(s.ID, st.permission, st.approve)
	want := []string{"waiting:waiting", "phase:active", "turn:idle"}
	if st.question != nil {
		st.askAndWait("pick one [[ask]]", *st.question)
		st.answered(s.ID, *st.question, st.answer)
		want = append(want, "turn:active", "waiting:waiting", "phase:active", "turn:idle")
	}
	st.askAndWait("another [["+st.marker+" b.txt]]", st.permission)
	st.denied(s.ID)
	if st.afterDenial != nil {
		st.afterDenial(s.ID)
	}
	st.askAndWait("a third [["+st.marker+" c.txt]]", st.permission)
	st.killed(s.ID)
	st.checkStory(s.ID, append(want, "turn:active", "waiting:waiting", "turn:idle", "turn:active", "waiting:waiting", "ended:ended")...)
	st.r.checkClean()
}

// newWatchPane runs status --watch in a tmux pane of its own, where the
// table is redrawn in place.
func newWatchPane(r *repo) *tmuxSession {
	r.t.Helper()
	pane := newTmux(r, "tether-sweep status --watch")
	pane.waitText("q quits", 2*time.Minute)
	return pane
}

// askAndWait gives a prompt that opens the agent's dialog d and returns
// the session once the watch reports it waiting, within waitWithin of the
// dialog on the agent's screen.
func (st *waitStory) askAndWait(prompt string, d dialogWait) sweep.Row {
	t := st.r.t
	t.Helper()
	st.prompt(prompt)
	var shown time.Time
	waitFor(t, "the agent's dialog", st.wait, func() bool {
		if strings.Contains(st.tm.capture(), d.words) {
			shown = time.Now()
			return true
		}
		return false
	})
	l := st.ws.next("the wait", st.wait, func(l watchLine) bool { return l.Change == "waiting" })
	w := l.Session.Waiting
	if w == nil || l.Session.Phase != "waiting" || w.Kind != d.kind || !strings.HasPrefix(w.Detail, d.detail) {
		t.Fatalf("the wait: %+v, waiting %+v; want a %s, %q", l.Session, w, d.kind, d.detail)
	}
	// The dialog is polled on the screen every 100 ms: its time is known
	// that closely. The wait may well come first (the agent's signal
	// goes out as its dialog is drawn).
	if late := l.at.Sub(shown); late > waitWithin+100*time.Millisecond {
		t.Errorf("the wait was reported %s after the dialog showed, over %s", late, waitWithin)
	} else {
		t.Logf("the wait was reported %s after the dialog showed", late.Round(time.Millisecond))
	}
	if st.pane != nil {
		st.pane.waitText(d.shown, st.wait)
	}
	return l.Session
}

// answered: keys answer the dialog, the wait is over, the agent works on,
// then its turn ends.
func (st *waitStory) answered(id string, d dialogWait, keys []string) {
	st.r.t.Helper()
	st.press(keys, d, "the wait over", func(l watchLine) bool {
		return l.Session.ID == id && l.Change == "phase" && l.Session.Phase == "active" && l.Session.Waiting == nil
	})
	st.ws.next("the turn's end", st.wait, func(l watchLine) bool {
		return l.Session.ID == id && l.Change == "turn" && l.Session.Phase == "idle"
	})
	if st.pane != nil {
		st.pane.waitGone("WAITS FOR", st.wait)
	}
}

// denied: the turn ends, the session idle and its agent alive.
func (st *waitStory) denied(id string) {
	st.r.t.Helper()
	l := st.press(st.deny, st.permission, "the denied turn's end", func(l watchLine) bool {
		return l.Session.ID == id && l.Change == "turn" && l.Session.Phase == "idle"
	})
	if l.Session.Waiting != nil || l.Session.Liveness != "alive" {
		st.r.t.Fatalf("after the denial: %+v", l.Session)
	}
	if st.pane != nil {
		st.pane.waitGone("WAITS FOR", st.wait)
	}
}

// press sends keys to the dialog d and waits for the line want accepts.
// A TUI under load can drop a key: while the dialog still shows, 10 s
// on, the keys are sent again.
func (st *waitStory) press(keys []string, d dialogWait, what string, want func(watchLine) bool) watchLine {
	st.r.t.Helper()
	deadline := time.Now().Add(st.wait)
	for {
		st.tm.keys(keys...)
		if l, ok := st.ws.within(what, 10*time.Second, want); ok {
			return l
		}
		if time.Now().After(deadline) {
			st.r.t.Fatalf("waited %s for %s from status --watch --json", st.wait, what)
		}
		if !strings.Contains(st.tm.capture(), d.words) {
			// The keys were taken: the agent is slow to go on.
			return st.ws.next(what, time.Until(deadline), want)
		}
		st.r.t.Logf("the dialog still shows 10 s after %q: sent again", keys)
	}
}

// killed: kill -9 while it waits; the watch sees its owner gone, sweeps,
// and reports it ended, interrupted.
func (st *waitStory) killed(id string) {
	t := st.r.t
	t.Helper()
	signal(t, st.agent(), syscall.SIGKILL)
	l := st.ws.next("the end of the killed session", 4*time.Minute, func(l watchLine) bool {
		return l.Session.ID == id && l.Change == "ended"
	})
	if l.Session.EndReason != "interrupted" || !l.Session.Interrupted || l.Session.Waiting != nil {
		t.Fatalf("killed while waiting: %+v", l.Session)
	}
}

// checkStory checks the --json lines of a session from its first to its
// end, in order: its start, the waits, their ends.
func (st *waitStory) checkStory(id string, want ...string) {
	t := st.r.t
	t.Helper()
	st.ws.mu.Lock()
	var got []string
	for _, l := range st.ws.seen {
		if l.Session.ID == id {
			got = append(got, l.Change+":"+l.Session.Phase)
		}
	}
	st.ws.mu.Unlock()
	// want is a subsequence of got: turns may start in a look of their own.
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("status --watch --json said %v of the session; want, in that order, %v", got, want)
	}
}

// unattended runs an agent's non-interactive mode (name args...) to its
// end, which must be a success, and checks that no wait was recorded:
// nobody is asked there.
func unattended(r *repo, timeout time.Duration, name string, args ...string) {
	r.t.Helper()
	p := r.start(name, args...)
	if err := p.wait(timeout); err != nil {
		r.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, p.output())
	}
	noWaits(r.t, r)
}

// noWaits fails the test when tether.log records a wait: for a mode in
// which the agent gives no signal, tether invents none.
func noWaits(t *testing.T, r *repo) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Dir, ".git", "tether", "log", "tether.log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"to":"waiting"`) {
		t.Errorf("a wait was recorded where the agent signals none:\n%s", b)
	}
}

// waitGone waits until the pane no longer shows text.
func (s *tmuxSession) waitGone(text string, timeout time.Duration) {
	s.t.Helper()
	waitFor(s.t, fmt.Sprintf("%q gone from the tmux pane", text), timeout, func() bool {
		return !strings.Contains(s.capture(), text)
	})
}

// TestClaudeWaits: Claude Code's TUI with --permission-mode default (its
// default auto mode approves most calls itself); a denial fires no hook,
// and the watch reads the cancel from the transcript. Before it, -p,
// which shows no dialog: no wait.
func TestClaudeWaits(t *testing.T) {
	t.Parallel()
	mock := mockllm.NewAnthropic(t)
	r := claudeRepo(t, mock)

	// -p with no tool allowed: Claude Code denies the call itself.
	unattended(r, 4*time.Minute, "claude", "-p", "make a file [[write p.txt]]")

	ws := startWatch(r)
	pane := newWatchPane(r)
	tm := newTmux(r, "claude --permission-mode default")
	pid := findProc(t, tm.pid(), "claude", 90*time.Second)
	tm.waitText("? for shortcuts", 3*time.Minute)
	st := &waitStory{r: r, tm: tm, ws: ws, pane: pane, wait: 3 * time.Minute, marker: "write",
		permission: dialogWait{"Do you want to proceed?", "permission", "Bash", "permission to run Bash"},
		prompt:     tm.prompt, approve: []string{"Enter"}, deny: []string{"Escape"},
		question: &dialogWait{"Chat about this", "question", mockllm.Question, "an answer: " + mockllm.Question},
		answer:   []string{"Enter"}, agent: func() int { return pid }}

	// The denial fires no hook: the watch reads its cancel from the
	// transcript.
	st.afterDenial = func(id string) {
		if !strings.Contains(claudeTranscript(t, r, id), claudeCancel) {
			t.Error("no cancel in the transcript after the denial")
		}
	}
	st.tell()
}

// codexAsks sets Codex's approval policy and sandbox to those of a
// trusted project, on-request and workspace-write (codexRepo runs with
// never and danger-full-access): a command asked to run outside the
// sandbox ([[escalate PATH]]) needs the user's approval. The hooks'
// trusted hashes, which install --trust wrote beside them, stay.
func codexAsks(r *repo) {
	r.t.Helper()
	path := filepath.Join(r.Home, ".codex", "config.toml")
	b, err := os.ReadFile(path)
	if err != nil {
		r.t.Fatal(err)
	}
	cfg := strings.Replace(string(b), `approval_policy = "never"`, `approval_policy = "on-request"`, 1)
	cfg = strings.Replace(cfg, `sandbox_mode = "danger-full-access"`, `sandbox_mode = "workspace-write"`, 1)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		r.t.Fatal(err)
	}
}

// TestCodexWaits: Codex's TUI, on-request, asked to run a write outside
// its sandbox; Esc on its dialog fires Interrupt. Before it, codex exec,
// which asks nothing: no wait.
func TestCodexWaits(t *testing.T) {
	t.Parallel()
	mock := mockllm.NewResponses(t)
	r := codexRepo(t, mock, "--trust")
	codexAsks(r)

	unattended(r, codexWait, "codex", "exec", "--json", "make a file [[escalate p.txt]]")

	ws := startWatch(r)
	pane := newWatchPane(r)
	tm := codexTUI(r, "codex", "? for shortcuts")
	pid := findProc(t, tm.pid(), "codex", codexWait)
	st := &waitStory{r: r, tm: tm, ws: ws, pane: pane, wait: codexWait, marker: "escalate",
		permission: dialogWait{"Would you like to run the following command?", "permission", "Bash", "permission to run Bash"},
		prompt:     tm.prompt, approve: []string{"y"}, deny: []string{"Escape"}, agent: func() int { return pid }}

	st.tell()
}

// askIn is the prompt of a TUI that can drop the Enter that submits it:
// the prompt is typed once the TUI is ready and submitted, and Enter is
// pressed again until submitted says the input box let it go, but never
// once one of the dialogs shows, where Enter answers.
func askIn(tm *tmuxSession, ready func(), submitted func(pane, prompt string) bool, dialogs ...string) func(string) {
	return func(prompt string) {
		tm.t.Helper()
		tm.typeWhole(prompt, ready)
		tm.keys("Enter")
		for range 5 {
			if poll(5*time.Second, func() bool {
				pane := tm.capture()
				return slices.ContainsFunc(dialogs, func(d string) bool { return strings.Contains(pane, d) }) || submitted(pane, prompt)
			}) {
				return
			}
			tm.keys("Enter")
		}
	}
}

// geminiSubmitted: Gemini CLI's input box is empty.
func geminiSubmitted(pane, _ string) bool { return strings.Contains(pane, "Type your message") }

// TestGeminiWaits: Gemini CLI's TUI in its default approval mode, asked
// to write a file: its Notification ToolPermission comes before the
// dialog shows; a denial fires no hook, and the watch reads "Request
// cancelled." from its chat. Before it, -p, which shows no dialog: no
// wait.
func TestGeminiWaits(t *testing.T) {
	t.Parallel()
	r, _ := newGeminiRepo(t, true)

	// -p without --approval-mode yolo offers the model no tool that
	// writes: the call fails, and nothing is asked.
	unattended(r, geminiWait, "gemini", "-p", "make a file [[write p.txt]]")
	if _, err := os.Stat(filepath.Join(r.Dir, "p.txt")); !os.IsNotExist(err) {
		t.Errorf("gemini -p wrote p.txt (%v)", err)
	}

	ws := startWatch(r)
	pane := newWatchPane(r)
	tm := geminiTUI(r, "gemini")
	agent := geminiAgent(t, tm.pid())
	// ask_user's confirmation says nothing of the question.
	permission, question := dialogWait{"Apply this change?", "permission", "Edit", "permission to run Edit"},
		dialogWait{"Answer Questions", "question", "", "an answer"}
	st := &waitStory{r: r, tm: tm, ws: ws, pane: pane, wait: geminiWait, marker: "write", permission: permission,
		prompt:  askIn(tm, func() { geminiReady(tm) }, geminiSubmitted, permission.words, question.words),
		approve: []string{"Enter"}, deny: []string{"Escape"}, question: &question, answer: []string{"Enter"},
		agent: func() int { return agent }}

	st.tell()
}

// copilotSubmitted: Copilot CLI's input box no longer holds the prompt,
// alone on its line (the history shows it with its time). Copilot can
// drop the Enter just after a turn ended.
func copilotSubmitted(pane, prompt string) bool {
	for line := range strings.SplitSeq(pane, "\n") {
		if strings.TrimSpace(line) == "❯ "+prompt {
			return false
		}
	}
	return true
}

// TestCopilotWaits: Copilot CLI's TUI in a trusted folder, its default
// manual approval, asked to create a file: notification permission_prompt
// as its dialog shows; a denial fires no hook, and the watch reads the
// abort from events.jsonl. Before it, -p without --allow-all-tools,
// which notifies permission_prompt for a call it denies with no dialog:
// no wait.
func TestCopilotWaits(t *testing.T) {
	t.Parallel()
	r, _ := copilotRepo(t, true)

	// -p without --allow-all-tools: the call is denied with no dialog,
	// and notified all the same.
	unattended(r, 2*time.Minute, "copilot", "-p", "make a file [[write p.txt]]", "--output-format", "json")
	if _, err := os.Stat(filepath.Join(r.Dir, "p.txt")); !os.IsNotExist(err) {
		t.Errorf("copilot -p wrote p.txt (%v)", err)
	}

	ws := startWatch(r)
	pane := newWatchPane(r)
	tm := newTmux(r, "copilot")
	tm.waitText("/ commands", 2*time.Minute)
	agent := copilotAgent(t, tm.pid())
	permission, question := dialogWait{"Do you want to create", "permission", "Edit file", "permission: Edit file"},
		dialogWait{"Copilot needs information", "question", "Information requested", "an answer: Information requested"}
	st := &waitStory{r: r, tm: tm, ws: ws, pane: pane, wait: 2 * time.Minute, marker: "write", permission: permission,
		prompt:  askIn(tm, func() {}, copilotSubmitted, permission.words, question.words),
		approve: []string{"Enter"}, deny: []string{"Escape"}, question: &question, answer: []string{"Enter"},
		agent: func() int { return agent }}

	st.tell()
}

// opencodeAsks makes OpenCode ask before it edits a file, in the user's
// opencode.json (by default it edits without asking).
func opencodeAsks(r *repo) {
	r.t.Helper()
	path := filepath.Join(r.Home, ".config", "opencode", "opencode.json")
	b, err := os.ReadFile(path)
	if err != nil {
		r.t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		r.t.Fatal(err)
	}
	cfg["permission"] = map[string]any{"edit": "ask"}
	if b, err = json.Marshal(cfg); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// TestOpenCodeWaits: OpenCode's TUI, set to ask before an edit: tether's
// plugin hears permission.asked as the dialog opens and permission.replied
// as it is answered; Esc rejects, and the turn ends.
func TestOpenCodeWaits(t *testing.T) {
	t.Parallel()
	r, _ := opencodeRepo(t)
	opencodeAsks(r)

	ws := startWatch(r)
	pane := newWatchPane(r)
	tm := newTmux(r, "opencode")
	oc := findProc(t, tm.pid(), "opencode", time.Minute)
	tuiReady(t, tm)
	st := &waitStory{r: r, tm: tm, ws: ws, pane: pane, wait: opencodeTimeout, marker: "write",
		permission: dialogWait{"Permission required", "permission", "edit", "permission to run edit"},
		prompt:     tm.prompt, approve: []string{"Enter"}, deny: []string{"Escape"},
		question: &dialogWait{"esc dismiss", "question", mockllm.Question, "an answer: " + mockllm.Question},
		answer:   []string{"Enter"}, agent: func() int { return oc }}

	st.tell()
}

// TestDroidWaits: Droid's TUI in its default mode, Auto (Off), where every
// call asks. Its dialog's signal, a Notification permission_prompt, names
// no tool: the wait's is the call in Droid's transcript. Approved, the
// call's PostToolUse ends the wait, and Stop the turn. Before it, droid
// exec, which asks nobody: no wait.
func TestDroidWaits(t *testing.T) {
	t.Parallel()
	r, _ := newDroidRepo(t)
	unattended(r, droidWait, "droid", "exec", "-m", droidModel, "make a file [[write p.txt]]")

	ws := startWatch(r)
	tm := droidTUI(r, "droid")
	st := &waitStory{r: r, tm: tm, ws: ws, wait: droidWait, permission: dialogWait{"Yes, allow", "permission", "Create `a.txt`", ""},
		prompt: func(p string) { droidSend(tm, p) }, approve: []string{"Enter"}}
	s := st.askAndWait("make a file [[write a.txt]]", st.permission)
	st.answered(s.ID, st.permission, st.approve)
	st.checkStory(s.ID, "waiting:waiting", "phase:active", "turn:idle")
	r.checkClean()
}

// TestQwenWaits: Qwen Code's TUI asking for every call
// (--approval-mode default: its default mode, auto, runs a write in the
// worktree with no dialog). Its dialog's signal, a Notification
// permission_prompt, names the tool. Approved, the call's PostToolUse ends
// the wait, and Stop the turn. Before it, a headless run, which denies the
// call itself: no wait.
func TestQwenWaits(t *testing.T) {
	t.Parallel()
	r, _ := newQwenRepo(t)
	unattended(r, qwenWait, "qwen", "--approval-mode", "default", "run it [[shell p.txt]]")

	ws := startWatch(r)
	tm := qwenTUI(r, "qwen --approval-mode default")
	st := &waitStory{r: r, tm: tm, ws: ws, wait: qwenWait,
		permission: dialogWait{"Apply this change?", "permission", "Qwen Code needs your permission to use write_file", ""},
		prompt:     tm.prompt, approve: []string{"Enter"}}
	s := st.askAndWait("make a file [[write a.txt]]", st.permission)
	st.answered(s.ID, st.permission, st.approve)
	st.checkStory(s.ID, "waiting:waiting", "phase:active", "turn:idle")
	r.checkClean()
}
