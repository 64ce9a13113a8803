// tether: records this OpenCode session (its owner process, its turns and
// their prompts) in the repository's git dir. Written by `tether-sweep
// install`, removed by `tether-sweep uninstall`: edits here are overwritten.
//
// It never blocks or breaks OpenCode: each event starts tether-hook detached,
// hands it a small JSON payload on stdin and returns; a missing binary, a slow
// hook or any error is ignored. The payload carries OpenCode's PID, because
// `opencode run` may exit before the hook of its last event runs. A
// permission or question asked and its answer come a few milliseconds apart
// at times: the hooks of a session's waits run one after the other, in the
// order OpenCode sent them, each with the time it did.
import { spawn } from "node:child_process"

const HOOK = __TETHER_HOOK__

export const TetherPlugin = async ({ directory }) => {
  const subagents = new Map() // sessions of the task tool (not the user's turns) → their parent
  const waits = new Map() // session → its last wait signal's hook, done or not
  const send = (event, sessionID, fields) => {
    if (typeof sessionID !== "string" || subagents.has(sessionID)) return
    return spawnHook(event, sessionID, fields)
  }
  // A subagent's dialog waits for the user of the session that started it.
  const sendWait = (event, sessionID, fields) => {
    if (typeof sessionID !== "string") return
    for (let depth = 0; depth < 8 && subagents.has(sessionID); depth++) sessionID = subagents.get(sessionID)
    const at = Date.now()
    const previous = waits.get(sessionID) || Promise.resolve()
    const next = previous.then(() => new Promise((done) => {
      const child = spawnHook(event, sessionID, { ...fields, at })
      if (!child) return done()
      child.on("exit", done)
      child.on("error", done)
      setTimeout(done, 5000).unref() // a hook that hangs holds the next one no longer
    }))
    waits.set(sessionID, next)
  }
  const spawnHook = (event, sessionID, fields) => {
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
      return child
    } catch {}
  }
  return {
    event: async ({ event }) => {
      try {
        const p = event.properties || {}
        switch (event.type) {
          case "session.created":
            if (p.info && p.info.parentID) subagents.set(p.info.id, p.info.parentID)
            else if (p.info) send("sessionStart", p.info.id, { source: "new" })
            break
          case "permission.asked":
            sendWait("permissionAsked", p.sessionID, { request_id: p.id, permission: p.permission, patterns: p.patterns })
            break
          case "question.asked":
            sendWait("questionAsked", p.sessionID, { request_id: p.id, questions: p.questions })
            break
          case "permission.replied":
            sendWait("permissionReplied", p.sessionID, { request_id: p.requestID })
            break
          case "question.replied":
          case "question.rejected":
            sendWait(event.type === "question.replied" ? "questionReplied" : "questionRejected", p.sessionID, { request_id: p.requestID })
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
