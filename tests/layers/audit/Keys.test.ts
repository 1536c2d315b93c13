import { NodeContext } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Effect, Either, Logger, TestClock } from "effect"
import { createHmac, randomBytes } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { deriveKey, epochOf, keyring, makeKeyStore, parseKeyFile } from "../../../src/layers/audit/Keys.js"
import { appendTraces, makeDirs, openLog, settle, startAt } from "./support.js"

layer(NodeContext.layer)("audit keys", (it) => {
  it.effect("each epoch's key is HMAC(previous key, \"myclaw-audit-epoch\"); keys never go back", () =>
    Effect.sync(() => {
      const seed = { epoch: 20_000, key: randomBytes(32) }
      const k1 = createHmac("sha256", seed.key).update("myclaw-audit-epoch").digest()
      const k2 = createHmac("sha256", k1).update("myclaw-audit-epoch").digest()
      assert.deepStrictEqual(deriveKey(seed, 20_002)!.key, k2)
      assert.strictEqual(deriveKey({ epoch: 20_002, key: k2 }, 20_001), undefined)
      const ring = keyring(seed)
      assert.deepStrictEqual(ring(20_002), k2)
      assert.deepStrictEqual(ring(20_001), k1)
      assert.deepStrictEqual(ring(20_000), seed.key)
      assert.strictEqual(ring(19_999), undefined)
      assert.strictEqual(epochOf(Date.parse("1970-01-02T00:00:00.000Z")), 1)
      assert.isTrue(Either.isLeft(parseKeyFile(Buffer.from("{}"))))
      assert.isTrue(Either.isLeft(parseKeyFile(Buffer.from("not json"))))
    }))

  it.scoped("the first append creates the seed and the owner is told to move it and the current key; a day later only the new key is on disk", () =>
    Effect.gen(function*() {
      yield* startAt()
      const dirs = yield* makeDirs
      const logs: Array<string> = []
      const capture = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logs.push(String(message))))
      const { close, log } = yield* openLog(dirs).pipe(Effect.provide(capture))
      assert.isFalse(NodeFs.existsSync(dirs.keyDir), "a log that is only read creates no key")
      yield* appendTraces(log, 1)
      const seedFile = NodePath.join(dirs.keyDir, "audit-seed.json")
      assert.isTrue(logs.some((line) => line.includes(seedFile) && line.includes("move it off this machine")))
      const store = makeKeyStore(dirs.keyDir)
      const first = (yield* store.load)!
      const seed = Either.getOrThrow(parseKeyFile(NodeFs.readFileSync(seedFile)))
      assert.deepStrictEqual(first, seed)

      yield* TestClock.adjust("1 day")
      yield* settle(log)
      const second = (yield* store.load)!
      assert.strictEqual(second.epoch, first.epoch + 1, "the key moves on at midnight even with nothing to write")
      assert.deepStrictEqual(second.key, deriveKey(seed, first.epoch + 1)!.key)
      const onDisk = NodeFs.readdirSync(dirs.keyDir).map((name) =>
        NodeFs.readFileSync(NodePath.join(dirs.keyDir, name))
      )
      const keyFile = NodeFs.readFileSync(NodePath.join(dirs.keyDir, "audit-key.json"), "utf8")
      assert.notInclude(keyFile, first.key.toString("hex"), "yesterday's key is gone from the key file")
      assert.strictEqual(onDisk.length, 3, "key, seed, checkpoints")
      yield* close

      const idle = yield* openLog(dirs)
      yield* TestClock.adjust("1 day")
      yield* settle(idle.log)
      assert.strictEqual(
        (yield* store.load)!.epoch,
        first.epoch + 2,
        "a process that never writes moves the key on too"
      )
      yield* idle.close
    }))
})
