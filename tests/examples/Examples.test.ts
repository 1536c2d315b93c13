import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as NodePath from "node:path"
import { AppConfig } from "../../src/domain/AppConfig.js"
import { ReplayBaseTemp } from "../../src/layers/ReplayBase.js"
import { ToolRegistryLive } from "../../src/layers/tools/ToolRegistryLive.js"
import { evalFolder } from "../../src/programs/replay/Eval.js"
import { defaultToolReplay } from "../../src/programs/replay/Replay.js"

describe("the example traces (npm run demo)", () => {
  it.scoped("every one replays identically with the default configuration in a fresh workspace", () =>
    Effect.gen(function*() {
      const result = yield* evalFolder(NodePath.resolve("examples/traces"), {
        ...defaultToolReplay,
        tools: ToolRegistryLive
      })
      assert.strictEqual(result.totals.traces, 4)
      for (const row of result.rows) assert.isTrue(row.report?.identical, `${row.file}: ${JSON.stringify(row)}`)
      const outcomes = result.rows.map((row) => row.report?.outcome.recorded)
      assert.deepStrictEqual(outcomes, ["success", "success", "success", "policy_denied"])
    }).pipe(Effect.provide(ReplayBaseTemp(Schema.decodeUnknownSync(AppConfig)({})))))
})
