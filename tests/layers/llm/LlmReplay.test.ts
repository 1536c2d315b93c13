import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ExecutionTrace, ThoughtStep } from "../../../src/domain/ExecutionTrace.js"
import type { LlmRequest, Message } from "../../../src/domain/LlmTypes.js"
import { fingerprintRequest } from "../../../src/domain/RequestFingerprint.js"
import { LlmReplay } from "../../../src/layers/llm/LlmReplay.js"
import { defaultToolReplay } from "../../../src/programs/replay/Replay.js"
import { Llm } from "../../../src/services/Llm.js"
import { CurrentReplay, makeReplaySession, type ReplaySession } from "../../../src/services/Replaying.js"

/** A tool result whose content counts how often it is read. */
const counted = (content: string, reads: { count: number }): Message => ({
  role: "tool",
  toolCallId: `call_${content}`,
  name: "add",
  get content() {
    reads.count++
    return content
  },
  isError: false
})

const request = (messages: ReadonlyArray<Message>): LlmRequest => ({
  tier: "frontier",
  system: [],
  messages,
  tools: []
})

/** A recorded turn whose Thoughts were asked `requests`, in order. */
const recording = (id: string, requests: ReadonlyArray<LlmRequest>): ExecutionTrace =>
  ({
    trace_id: id,
    session_id: id,
    metadata: {},
    replay: { ids: [] },
    steps: requests.map((asked): ThoughtStep => ({
      kind: "thought",
      model: "m",
      provider: "scripted",
      tier: "frontier",
      prompt_tokens: 1,
      cached_tokens: 0,
      response_tokens: 1,
      finish_reason: "stop",
      text: "ok",
      tool_call: null,
      tool_calls: [],
      cost_usd: 0,
      wall_ms: 0,
      failed_attempts: [],
      request_hash: fingerprintRequest(asked)
    }))
  }) as unknown as ExecutionTrace

describe("the replay model", () => {
  it.effect("checks each Thought of replays side by side against its own recording, hashing each message once", () =>
    Effect.gen(function*() {
      const llm = yield* Llm
      const turns = ["a", "b"].map((id) => {
        const reads = { count: 0 }
        const messages: Array<Message> = [{ role: "user", content: `turn ${id}` }]
        const requests: Array<LlmRequest> = []
        for (let i = 0; i < 4; i++) {
          messages.push(counted(`${id}${i}`, reads))
          requests.push(request([...messages]))
        }
        return { reads, requests, session: makeReplaySession(recording(id, requests), defaultToolReplay) }
      })
      const recordedReads = turns.map((turn) => turn.reads.count)
      const ask = (session: ReplaySession, asked: LlmRequest) =>
        Effect.locally(llm.generate(asked), CurrentReplay, session)
      for (let i = 0; i < 4; i++) {
        for (const turn of turns) yield* ask(turn.session, turn.requests[i]!)
      }
      for (const [n, turn] of turns.entries()) {
        assert.deepStrictEqual(turn.session.probe.requests, [])
        // Four messages, each read once by the replay (the recording's own fingerprints read them before).
        assert.strictEqual(turn.reads.count - recordedReads[n]!, 4)
      }
      // A request that differs from the recording is reported.
      const other = turns[0]!
      const changed = makeReplaySession(recording("c", other.requests), defaultToolReplay)
      yield* ask(changed, request([{ role: "user", content: "something else" }]))
      assert.deepStrictEqual(changed.probe.requests.map((mismatch) => mismatch.parts), [["messages"]])
    }).pipe(Effect.provide(LlmReplay)))
})
