// tether: records this OpenCode session (its owner process, its turns and
// their prompts) in the repository's git dir. Written by `tether-sweep
// install`, removed by `tether-sweep uninstall`: edits here are overwritten.
//
// It never blocks or breaks OpenCode: each event starts tether-hook detached,
// hands it a small JSON payload on stdin and returns; a missing binary, a slow
// hook or any error is ignored. The payload carries OpenCode's PID, because
// `opencode run` may exit before the hook of its last event runs.
import { spawn } from "node:child_process"

const HOOK = __TETHER_HOOK__

export const TetherPlugin = async ({ directory }) => {
  const subagents = new Set() // sessions of the task tool: not the user's turns
  const send = (event, sessionID, fields) => {
    if (typeof sessionID !== "string" || subagents.has(sessionID)) return
    try {
      const child = spawn(HOOK, ["opencode", event], {
        cwd: directory,
        detached: true,
        stdio: ["pipe", "ignore", "ignore"],
        env: { ...process.env, OPENCODE_PID: String(process.pid) },
      })
      child.on("error", () => {})
      child.stdin.on("error", () => {})
      child.stdin.end(JSON.stringify({
        hook_event_name: event,
        session_id: sessionID,
        cwd: directory,
        opencode_pid: process.pid,
        ...fields,
      }))
      child.unref()
    } catch {}
  }
  return {
    event: async ({ event }) => {
      try {
        const p = event.properties || {}
        switch (event.type) {
          case "session.created":
            if (p.info && p.info.parentID) subagents.add(p.info.id)
            else if (p.info) send("sessionStart", p.info.id, { source: "new" })
            break
          case "session.idle":
            send("turnEnd", p.sessionID, {})
            break
          case "session.error": {
            const e = p.error || {}
            send("error", p.sessionID, { error: { name: e.name, message: e.data && e.data.message } })
            break
          }
          case "session.deleted":
            if (p.info) send("sessionEnd", p.info.id, { reason: "deleted" })
            break
        }
      } catch {}
    },
    "chat.message": async (input, output) => {
      try {
        const text = (output.parts || [])
          .filter((part) => part.type === "text" && !part.synthetic && !part.ignored)
          .map((part) => part.text)
          .join("\n")
        send("turnStart", input.sessionID, { prompt: text, message_id: output.message && output.message.id })
      } catch {}
    },
  }
}
