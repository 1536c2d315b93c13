import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Queue, TestClock } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { OwnerNoticesLive } from "../../src/layers/OwnerNoticesLive.js"
import { TestLayer } from "../../src/layers/Test.js"
import { BackupScheduleLive } from "../../src/programs/BackupSchedule.js"
import { OwnerNotices } from "../../src/services/OwnerNotices.js"

describe("the daily backup", () => {
  it.scoped("when it fails, the owner is told on their channels, not only the log", () => {
    const outside = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "myclaw-backup-dest-"))
    // The destination is a file: no folder can be made there.
    const dest = NodePath.join(outside, "not-a-folder")
    NodeFs.writeFileSync(dest, "x")
    return Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-04-22T03:29:00.000Z"))
      const told = yield* Queue.unbounded<string>()
      yield* (yield* OwnerNotices).register("test", (text) => Queue.offer(told, text))
      yield* Layer.build(BackupScheduleLive)
      yield* TestClock.adjust("1 minute")
      const notice = yield* Queue.take(told)
      assert.match(notice, /^myclaw: the daily backup failed: .*not-a-folder/)
    }).pipe(
      Effect.provide(Layer.merge(
        TestLayer({ config: { backup: { dest, dailyAt: "03:30" } } }),
        OwnerNoticesLive
      )),
      Logger.withMinimumLogLevel(LogLevel.None),
      Effect.ensuring(Effect.sync(() => NodeFs.rmSync(outside, { recursive: true, force: true })))
    )
  })
})
