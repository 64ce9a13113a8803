#!/usr/bin/env bash
# The whole tether story on a scratch repository: an agent works three
# turns and commits, is killed -9 in the middle of a fourth, the sweep
# finalizes the session and saves its checkpoint with what each turn
# changed, and rewind puts back what the killed turn left half done. A few seconds once built;
# the first build compiles tether's dependencies (about a minute on a small
# machine), and install.sh reuses what it compiled.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tether-demo.XXXXXX")
trap 'kill -9 "${agent_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
[ -n "${NO_COLOR:-}" ] || [ ! -t 1 ] && say() { printf '\n== %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

say "1. build tether-hook, tether-sweep and a stand-in agent named claude"
bash "$root/scripts/build.sh" "$work/bin" --standin
export PATH="$work/bin:$PATH"
ls "$work/bin"

say "2. a scratch repository, with tether installed"
repo="$work/repo"
mkdir -p "$repo" && cd "$repo"
git init -q -b main
git config user.name "Demo" && git config user.email "demo@example.invalid"
echo "# demo" > README.md && git add README.md && git commit -qm "initial commit"
run tether-sweep install --agent claude-code

session=5e551011-dead-4bad-beef-000000000001
# The stand-in keeps its transcript where Claude Code does, under
# $CLAUDE_CONFIG_DIR/projects: tether reads transcripts only there.
export CLAUDE_CONFIG_DIR="$work/claude"
transcript="$CLAUDE_CONFIG_DIR/projects/demo/$session.jsonl"
# exec: in the background, the agent's PID must be the agent itself, not a subshell.
agent() { exec claude --hook "$work/bin/tether-hook claude-code" --session "$session" --transcript "$transcript" "$@"; }

say "3. the agent works through three turns, committing as it goes"
(agent start "begin=add a greeting" "commit=add a greeting" stop "begin=add a farewell" "commit=add a farewell" stop "begin=write the docs" "commit=write the docs" stop)

say "4. a fourth turn starts, edits, creates and deletes files... and the agent is killed -9 in the middle of it"
agent "start=resume" "begin=refactor everything" "write=work-1.txt:half refactored" "write=src/new.go:package half" "remove=work-2.txt" hang > "$work/agent.out" &
agent_pid=$!
for _ in $(seq 100); do grep -q 'waiting to be killed' "$work/agent.out" 2>/dev/null && break; sleep 0.05; done
cat "$work/agent.out"
# The group's stderr takes bash's own "Killed" notice for the job.
{ run kill -9 "$agent_pid"; wait "$agent_pid"; } 2>/dev/null || true
echo "(no Stop hook ran: the session still says it is active)"

say "5. status before the sweep: the session claims to be active, but its owner is dead"
run tether-sweep status --no-sweep

say "6. status sweeps first: the session is finalized as interrupted and its turns condensed"
run tether-sweep status --all

say "7. the record: checkpoints with what each turn changed, linked by notes to the commits they made"
run tether-sweep show HEAD
run git log --oneline tether/checkpoints/v1
run git notes --ref=tether show HEAD
echo "a commit of a file no turn touched gets no note"
echo "the user's own notes" > notes.txt
git add notes.txt && git commit -qm "the user's notes"
run tether-sweep show HEAD

say "8. how to pick the work up again: starting afresh says what the killed turn left"
run tether-sweep resume
run tether-sweep resume --fresh "$session" || true

say "9. rewind puts those files back as they were when the turn started"
run git status --short
run tether-sweep rewind "$session" --dry-run
run tether-sweep rewind "$session"
run git status --short
echo "(only what the user had; tether-sweep rewind --undo would put the turn's edits back)"
