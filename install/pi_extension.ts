// tether: records this Pi session (its owner process, its turns and their
// prompts) in the repository's git dir. Written by `tether-sweep install`,
// removed by `tether-sweep uninstall`: edits here are overwritten.
//
// It never breaks Pi: each event runs tether-hook detached with a small JSON
// payload on stdin, one at a time and in order, waiting at most a few
// seconds for each; a missing binary, a slow hook or any error is ignored.
// The payload carries Pi's PID and its session file.
import { spawn } from "node:child_process"

const HOOK = __TETHER_HOOK__
const WAIT_MS = 10000

export default function (pi: any) {
  let queue: Promise<void> = Promise.resolve()
  const run = (payload: string) =>
    new Promise<void>((resolve) => {
      try {
        const child = spawn(HOOK, ["pi", JSON.parse(payload).hook_event_name], {
          detached: true,
          stdio: ["pipe", "ignore", "ignore"],
        })
        const timer = setTimeout(() => { child.unref(); resolve() }, WAIT_MS)
        child.on("error", () => { clearTimeout(timer); resolve() })
        child.on("exit", () => { clearTimeout(timer); resolve() })
        child.stdin.on("error", () => {})
        child.stdin.end(payload)
      } catch {
        resolve()
      }
    })
  // send queues one event; Pi awaits the handler, so a turn starts only
  // once tether has seen it, and Pi exits only once the last hook ran.
  const send = (event: string, ctx: any, fields: object) => {
    try {
      const sm = ctx.sessionManager
      const payload = JSON.stringify({
        hook_event_name: event,
        session_id: sm.getSessionId(),
        transcript_path: sm.getSessionFile() ?? null,
        cwd: ctx.cwd,
        pi_pid: process.pid,
        ...fields,
      })
      queue = queue.then(() => run(payload))
    } catch {}
    return queue
  }
  // Pi says "startup" when `pi --session ID` opens a session that already
  // has a conversation: that is a resume.
  const resumed = (ctx: any) => {
    try {
      return ctx.sessionManager.getEntries().some((e: any) => e.type === "message")
    } catch {
      return false
    }
  }
  pi.on("session_start", (event: any, ctx: any) =>
    send("sessionStart", ctx, { source: event.reason === "startup" && resumed(ctx) ? "resume" : event.reason }))
  pi.on("before_agent_start", (event: any, ctx: any) => send("turnStart", ctx, { prompt: event.prompt }))
  pi.on("agent_end", (event: any, ctx: any) => {
    const messages = Array.isArray(event.messages) ? event.messages : []
    const last = messages.filter((m: any) => m && m.role === "assistant").pop()
    if (last && last.stopReason === "error") {
      return send("error", ctx, { error: last.errorMessage || "model call failed" })
    }
    return send("turnEnd", ctx, { stop_reason: last ? last.stopReason : null })
  })
  pi.on("session_shutdown", (event: any, ctx: any) => {
    // A reload goes on with the same session.
    if (event.reason !== "reload") return send("sessionEnd", ctx, { reason: event.reason })
  })
}
