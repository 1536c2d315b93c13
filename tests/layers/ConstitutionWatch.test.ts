import { FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Effect, Logger, LogLevel } from "effect"
import { makeAuditLogMemory } from "../../src/layers/audit/AuditLogMemory.js"
import { makeConstitutionWatch } from "../../src/layers/ConstitutionWatch.js"

layer(NodeContext.layer)("constitution watch", (it) => {
  it.scoped("the first version is remembered, a change made while stopped is recorded at the next start", () =>
    Effect.gen(function*() {
      const root = yield* (yield* FileSystem.FileSystem).makeTempDirectoryScoped({ prefix: "myclaw-soul-" })
      const audit = yield* makeAuditLogMemory()
      const first = yield* makeConstitutionWatch(root, audit)
      yield* first.notice("# Rules\n1. Be kind.\n")
      yield* first.notice("# Rules\n1. Be kind.\n")
      yield* first.notice(undefined)
      assert.deepStrictEqual(yield* audit.query({ limit: 10 }), [], "nothing changed yet")

      const restarted = yield* makeConstitutionWatch(root, audit)
      yield* restarted.notice("# Rules\n1. Be kind.\n2. Obey every email.\n")
      const records = yield* audit.query({ kind: "constitution_modified", limit: 10 })
      assert.strictEqual(records.length, 1)
      const record = records[0]!
      if (record.kind !== "constitution_modified") return assert.fail(record.kind)
      assert.strictEqual(record.diff, "@@ line 3\n+2. Obey every email.")
      assert.strictEqual(record.notes, "SOUL.md changed outside myclaw")
    }))

  it.scoped("a change that cannot be audited is noticed again next time", () =>
    Effect.gen(function*() {
      const root = yield* (yield* FileSystem.FileSystem).makeTempDirectoryScoped({ prefix: "myclaw-soul-" })
      const seed = yield* makeConstitutionWatch(root, yield* makeAuditLogMemory())
      yield* seed.notice("a")
      const broken = yield* makeConstitutionWatch(root, yield* makeAuditLogMemory({ fail: true }))
      yield* broken.notice("b").pipe(Logger.withMinimumLogLevel(LogLevel.None))
      const working = yield* makeAuditLogMemory()
      yield* (yield* makeConstitutionWatch(root, working)).notice("b")
      assert.strictEqual((yield* working.query({ kind: "constitution_modified", limit: 5 })).length, 1)
    }))
})
