// Package mockllm holds local mocks of the model APIs the real agent CLIs
// talk to, so tether's end-to-end suite (../../e2e) can run Claude Code,
// Codex, Gemini CLI, Copilot CLI, OpenCode, Factory's Droid, Pi and Qwen
// Code offline.
//
// Each mock is an httptest server on 127.0.0.1 (NewAnthropic, and one
// constructor per API beside it) that speaks its API's streaming format,
// records every request it receives (Server.Requests, Server.Saw), and
// answers according to the marker found in the last user message of the
// request (see Parse):
//
//   - no marker: a short plain reply, Reply ("done.");
//   - [[write PATH]]: one call of the agent's own write or shell tool that
//     makes it write PATH (relative to the agent's working directory) with
//     Content, then, on the request carrying the tool's result, Reply;
//   - [[hold]]: the stream starts (headers and a first event flushed) and
//     is then held open until the client goes away or the server closes,
//     so a test can kill the agent mid-turn (Server.Held signals it);
//   - [[escalate PATH]]: a write that asks to run outside the agent's
//     sandbox (Codex), which its user must approve; a write elsewhere;
//   - [[ask]]: one call of the agent's own tool for asking its user a
//     question (Question, with two options), then, on the request
//     carrying the answer, Reply;
//   - [[fail]]: an HTTP 400 with the API's error body.
//
// Side calls an agent makes on its own (a title, a router's choice of
// model, a quota probe) get a sensible answer and never act on a marker.
//
// The promises: a mock never reaches the network, a held stream is always
// released when the test ends (so Close never hangs), and what a mock
// answers depends only on the request.
package mockllm
