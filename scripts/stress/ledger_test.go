package main

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// line renders a transcript line as the stand-in writes it.
func line(role, text string) string {
	return `{"message":{"content":` + quote(text) + `,"role":"` + role + `"},"sessionId":"s","timestamp":"2026-05-01T12:00:00Z","type":"` + role + `"}` + "\n"
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func TestPromptFates(t *testing.T) {
	transcript := line("user", "p1") + line("assistant", "working on: p1") + line("assistant", "done: p1") +
		line("user", "p2") + line("assistant", "working on: p2") +
		line("user", "p3") + `{"message":{"role":"assis` // torn by a kill
	entries := parseTranscript([]byte(transcript))
	if len(entries) != 6 {
		t.Fatalf("%d entries, want 6: %v", len(entries), entries)
	}
	want := []promptFate{
		{prompt: "p1", submitted: true, hookOK: true, done: true},
		{prompt: "p2", submitted: true, hookOK: true},
		{prompt: "p3", submitted: true},
	}
	if got := promptFates(entries); !reflect.DeepEqual(got, want) {
		t.Errorf("fates = %+v, want %+v", got, want)
	}
}

func TestActivity(t *testing.T) {
	tests := []struct {
		transcript, want string
	}{
		{"", atStarting},
		{line("user", "p1"), atMidTurn},
		{line("user", "p1") + line("assistant", "working on: p1"), atMidTurn},
		{line("user", "p1") + line("assistant", "working on: p1") + line("assistant", "done: p1"), atIdle},
	}
	for _, tt := range tests {
		if got := activity(parseTranscript([]byte(tt.transcript))); got != tt.want {
			t.Errorf("activity(%q) = %q, want %q", tt.transcript, got, tt.want)
		}
	}
}

func TestClassifyExit(t *testing.T) {
	tests := []struct {
		name         string
		e            exitReport
		want, wantEv string
	}{
		{"clean", exitReport{}, outOK, ""},
		{"killed by us", exitReport{killedByUs: true, signal: "killed", code: -1}, outKilled, ""},
		{"killed by someone else", exitReport{signal: "killed", code: -1}, outOther, ""},
		{"hook killed, shell exec'd it", exitReport{code: 1, stderr: "standin: turn=a b: hook UserPromptSubmit: signal: killed\n"}, outHookKilled, "UserPromptSubmit"},
		{"hook killed under a shell", exitReport{code: 1, stderr: "tether-hook: x\nstandin: end=other: hook SessionEnd: exit status 137\n"}, outHookKilled, "SessionEnd"},
		{"hook failed", exitReport{code: 1, stderr: "standin: start: hook SessionStart: exit status 2\n"}, outHookFailed, "SessionStart"},
		{"commit failed", exitReport{code: 1, stderr: "fatal: Unable to create index.lock\nstandin: commit=agent 3: git add: exit status 128\n"}, outCommitFailed, ""},
		{"something else", exitReport{code: 2, stderr: "standin: --session and --transcript are required\n"}, outOther, ""},
	}
	for _, tt := range tests {
		got, ev := classifyExit(tt.e)
		if got != tt.want || ev != tt.wantEv {
			t.Errorf("%s: classifyExit = %q, %q; want %q, %q", tt.name, got, ev, tt.want, tt.wantEv)
		}
	}
}

func TestMakeScript(t *testing.T) {
	var hangs, ends, resumes int
	for seed := range uint64(500) {
		r := rand.New(rand.NewPCG(seed, 1))
		resume := seed%3 == 0
		s := makeScript(r, int(seed), resume)
		if again := makeScript(rand.New(rand.NewPCG(seed, 1)), int(seed), resume); !reflect.DeepEqual(s, again) {
			t.Fatalf("seed %d: not deterministic", seed)
		}
		first := "start"
		if resume {
			first, resumes = "start=resume", resumes+1
		}
		if s.actions[0] != first {
			t.Fatalf("seed %d: first action %q, want %q", seed, s.actions[0], first)
		}
		var prompts []string
		for i, a := range s.actions {
			name, arg, _ := strings.Cut(a, "=")
			switch name {
			case "turn", "open":
				prompts = append(prompts, arg)
				if name == "open" && i != len(s.actions)-1 {
					t.Fatalf("seed %d: open= is not last: %v", seed, s.actions)
				}
			case "end":
				if i != len(s.actions)-1 {
					t.Fatalf("seed %d: end is not last: %v", seed, s.actions)
				}
			case "start", "commit", "sleep":
			default:
				t.Fatalf("seed %d: unknown action %q", seed, a)
			}
		}
		if !reflect.DeepEqual(prompts, s.prompts) {
			t.Fatalf("seed %d: prompts %v, actions %v", seed, s.prompts, s.actions)
		}
		last := s.actions[len(s.actions)-1]
		if s.hangs != strings.HasPrefix(last, "open=") || s.ends != strings.HasPrefix(last, "end") || s.hangs && s.ends {
			t.Fatalf("seed %d: hangs %v ends %v, last action %q", seed, s.hangs, s.ends, last)
		}
		if s.hangs {
			hangs++
		}
		if s.ends {
			ends++
		}
	}
	// Each kind of life must be common: the stress depends on the mix.
	if hangs < 25 || ends < 100 || resumes == 0 {
		t.Errorf("in 500 scripts: %d hang, %d end, %d resume", hangs, ends, resumes)
	}
}
