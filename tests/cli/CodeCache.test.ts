import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { myclaw, workspaceWith } from "../support/Cli.js"

/** A cache folder of the test's own, removed after it. */
const cacheFolder = Effect.acquireRelease(
  Effect.sync(() => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "myclaw-code-cache-"))),
  (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
)

interface Report {
  readonly files: number
  readonly used: number
  readonly rejected: number
  readonly missing: number
  readonly written: number
  readonly failure: string
}

/** The line MYCLAW_CODE_CACHE_DEBUG=1 writes on stderr at exit. */
const report = (stderr: string): Report => {
  const match = /code cache [^\n]*: (\d+) files, (\d+) used, (\d+) rejected, (\d+) missing, (\d+) written([^\n]*)/
    .exec(stderr)
  assert.isNotNull(match, stderr)
  const [files, used, rejected, missing, written] = match!.slice(1, 6).map(Number) as [
    number,
    number,
    number,
    number,
    number
  ]
  return { files, used, rejected, missing, written, failure: match![6]! }
}

/** `myclaw budget` with its caches in `cacheDir`. */
const budget = (home: string, cacheDir: string, env: Record<string, string> = {}) =>
  myclaw(["budget"], { MYCLAW_HOME: home, MYCLAW_CODE_CACHE_DIR: cacheDir, MYCLAW_CODE_CACHE_DEBUG: "1", ...env })

/** The budget's lines but the one that counts down to the reset (it moves with the clock). */
const steady = (stdout: string) => stdout.split("\n").filter((line) => !line.startsWith("resets at")).join("\n")

const cacheFiles = (dir: string): Array<string> =>
  NodeFs.readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".cache"))
    .map((name) => NodePath.join(dir, name))
    .sort((a, b) => NodeFs.statSync(b).size - NodeFs.statSync(a).size)

const sha256 = (bytes: Uint8Array) => NodeCrypto.createHash("sha256").update(bytes).digest()

describe("the code cache of the bundled command line", () => {
  it.scoped("the first run writes it, the next compiles every file from it, with the same answer", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([])
      const cacheDir = yield* cacheFolder
      const withoutCache = yield* budget(home, cacheDir, { MYCLAW_CODE_CACHE: "off" })
      assert.strictEqual(withoutCache.code, 0, withoutCache.stderr)
      assert.notInclude(withoutCache.stderr, "code cache", "off loads the ES modules")
      assert.deepStrictEqual(cacheFiles(cacheDir), [], "and writes no cache")

      // The cache of a file an older build had.
      const runtimeDir = NodePath.join(cacheDir, `${process.versions.v8}-${process.arch}`, "budget")
      NodeFs.mkdirSync(runtimeDir, { recursive: true })
      NodeFs.writeFileSync(NodePath.join(runtimeDir, "chunk-GONE0000.cjs.cache"), "old")

      const first = yield* budget(home, cacheDir)
      assert.strictEqual(first.code, 0, first.stderr)
      const written = report(first.stderr)
      assert.isFalse(NodeFs.existsSync(NodePath.join(runtimeDir, "chunk-GONE0000.cjs.cache")), "removed")
      assert.isAbove(written.files, 1)
      assert.deepInclude(written, { used: 0, rejected: 0, missing: written.files, written: written.files })
      assert.strictEqual(cacheFiles(cacheDir).length, written.files)

      const second = yield* budget(home, cacheDir)
      assert.strictEqual(second.code, 0, second.stderr)
      assert.deepInclude(report(second.stderr), { files: written.files, used: written.files, rejected: 0, written: 0 })
      assert.strictEqual(steady(second.stdout), steady(withoutCache.stdout))
      assert.strictEqual(steady(first.stdout), steady(withoutCache.stdout))
    }))

  it.scoped("a damaged, foreign or refused cache file is ignored and written again; the command still works", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([])
      const cacheDir = yield* cacheFolder
      const first = yield* budget(home, cacheDir)
      assert.strictEqual(first.code, 0, first.stderr)
      const files = cacheFiles(cacheDir)
      assert.isAtLeast(files.length, 5)
      const [damaged, foreign, truncated, refused, other] = files as [string, string, string, string, string]
      // Damaged V8 data under intact hashes' place: V8 would crash on some of it, the data's hash catches it.
      const bytes = NodeFs.readFileSync(damaged)
      for (let at = Math.floor(bytes.length / 2); at < Math.floor(bytes.length / 2) + 64; at++) {
        bytes[at] = bytes[at]! ^ 0x5a
      }
      NodeFs.writeFileSync(damaged, bytes)
      // A valid cache of another file.
      NodeFs.copyFileSync(other, foreign)
      NodeFs.writeFileSync(truncated, NodeFs.readFileSync(truncated).subarray(0, 40))
      // Intact by its hashes, but V8 refuses it (its header names no V8 it knows).
      const refusedBytes = NodeFs.readFileSync(refused)
      const data = Buffer.from(refusedBytes.subarray(64))
      data[0] = data[0]! ^ 0xff
      NodeFs.writeFileSync(refused, Buffer.concat([refusedBytes.subarray(0, 32), sha256(data), data]))

      const run = yield* budget(home, cacheDir)
      assert.strictEqual(run.code, 0, run.stderr)
      assert.strictEqual(steady(run.stdout), steady(first.stdout))
      const ignored = report(run.stderr)
      assert.deepInclude(ignored, { rejected: 4, missing: 0, written: 4, used: ignored.files - 4 })

      const again = yield* budget(home, cacheDir)
      assert.strictEqual(again.code, 0, again.stderr)
      assert.deepInclude(report(again.stderr), { used: ignored.files, rejected: 0, written: 0 })
    }))

  it.scoped("a cache that cannot be written costs nothing but speed", () =>
    Effect.gen(function*() {
      const home = yield* workspaceWith([])
      const cacheDir = yield* cacheFolder
      // A file where the cache's folder would be.
      const blocked = NodePath.join(cacheDir, "blocked")
      NodeFs.writeFileSync(blocked, "")
      const run = yield* budget(home, blocked)
      assert.strictEqual(run.code, 0, run.stderr)
      assert.include(run.stdout, "spent today")
      const outcome = report(run.stderr)
      assert.deepInclude(outcome, { used: 0, written: 0 })
      assert.include(outcome.failure, "not written")
    }))
})
