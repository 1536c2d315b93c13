import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Logger, LogLevel, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import type { SecretError } from "../../../src/domain/SecretError.js"
import { parseSecretKey } from "../../../src/layers/secrets/SecretKey.js"
import { SecretsLive } from "../../../src/layers/secrets/SecretsLive.js"
import { SecretStoreFile } from "../../../src/layers/secrets/SecretStoreFile.js"
import { WorkspaceTemp } from "../../../src/layers/Test.js"
import { Secrets } from "../../../src/services/Secrets.js"
import { SecretStore } from "../../../src/services/SecretStore.js"
import { Workspace } from "../../../src/services/Workspace.js"

const VALUE = "sk-canary-7d1e0c55b2a94f3e"
const keyA = randomBytes(32).toString("base64")
const keyB = randomBytes(32).toString("hex")

const withKey = (env: Record<string, string>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

/** A fresh temp workspace with its store; `secrets` builds a new SecretsLive (a restarted service) over it. */
const Store = SecretStoreFile.pipe(
  Layer.provideMerge(WorkspaceTemp),
  Layer.provideMerge(NodeContext.layer)
)
const secrets = Effect.flatMap(
  Workspace,
  (workspace) => Effect.provide(Secrets, SecretsLive.pipe(Layer.provide(Layer.succeed(Workspace, workspace))))
)

const storeFile = Effect.map(Workspace, (workspace) => NodePath.join(workspace.root, ".state", "secrets.json"))

const failureOf = <A, R>(effect: Effect.Effect<A, SecretError, R>) =>
  Effect.flatMap(
    Effect.either(effect),
    (result) => Either.isLeft(result) ? Effect.succeed(result.left) : Effect.dieMessage("expected a SecretError")
  )

/** A key file in a folder of its own outside any workspace, removed with the scope. */
const keyFile = (mode: number, dir?: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const folder = dir ?? NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "myclaw-key-"))
      const file = NodePath.join(folder, "secret.key")
      NodeFs.writeFileSync(file, `${keyA}\n`, { mode })
      NodeFs.chmodSync(file, mode)
      return { folder, file }
    }),
    ({ file, folder }) =>
      Effect.sync(
        () => (dir === undefined ? NodeFs.rmSync(folder, { recursive: true }) : NodeFs.rmSync(file, { force: true }))
      )
  ).pipe(Effect.map(({ file }) => file))

describe("secret store", () => {
  it.scoped("round trip: set, resolve after a restart, redact; the file holds no value and is 0600", () =>
    Effect.gen(function*() {
      const store = yield* SecretStore
      assert.strictEqual(yield* store.set("API_TOKEN", Redacted.make(VALUE)), "created")
      assert.strictEqual(yield* store.set("API_TOKEN", Redacted.make(VALUE)), "updated")
      const file = yield* storeFile
      const text = NodeFs.readFileSync(file, "utf8")
      assert.notInclude(text, VALUE)
      assert.notInclude(text, Buffer.from(VALUE).toString("base64"))
      assert.strictEqual(NodeFs.statSync(file).mode & 0o777, 0o600)
      const service = yield* secrets
      assert.strictEqual(Redacted.value(yield* service.resolve("API_TOKEN")), VALUE)
      assert.strictEqual(service.redact(`token=${VALUE};`), "token=[secret:API_TOKEN];")
    }).pipe(withKey({ MYCLAW_SECRET_KEY: keyA }), Effect.provide(Store)))

  it.scoped("stored values are redacted before anything resolved them, in their JSON, URL and base64 forms", () =>
    Effect.gen(function*() {
      const value = "p@ss word\"with/quotes-0042"
      yield* (yield* SecretStore).set("DB_PASSWORD", Redacted.make(value))
      const service = yield* secrets
      const echoed = [value, JSON.stringify(value), encodeURIComponent(value), Buffer.from(value).toString("base64")]
      const redacted = service.redact(echoed.join(" | "))
      assert.notInclude(redacted, "word")
      assert.notInclude(redacted, Buffer.from(value).toString("base64"))
      assert.strictEqual(redacted.split("[secret:DB_PASSWORD]").length - 1, 4)
    }).pipe(withKey({ MYCLAW_SECRET_KEY: keyA }), Effect.provide(Store)))

  it.scoped("a wrong key fails with BadKey, and neither the error nor the warning holds the value", () =>
    Effect.gen(function*() {
      yield* (yield* SecretStore).set("API_TOKEN", Redacted.make(VALUE))
      const error = yield* failureOf(
        Effect.flatMap(secrets, (s) => s.resolve("API_TOKEN")).pipe(
          withKey({ MYCLAW_SECRET_KEY: keyB })
        )
      )
      assert.strictEqual(error.reason, "BadKey")
      assert.strictEqual(error.name, "API_TOKEN")
      assert.notInclude(JSON.stringify(error), VALUE)
      const other = yield* failureOf(
        (yield* SecretStore).set("OTHER", Redacted.make("another-value-123")).pipe(withKey({ MYCLAW_SECRET_KEY: keyB }))
      )
      assert.strictEqual(other.reason, "BadKey")
    }).pipe(withKey({ MYCLAW_SECRET_KEY: keyA }), Effect.provide(Store), Logger.withMinimumLogLevel(LogLevel.None)))

  it.scoped("a tampered ciphertext, or a value moved under another name, fails as Corrupt", () =>
    Effect.gen(function*() {
      const store = yield* SecretStore
      yield* store.set("FIRST", Redacted.make(VALUE))
      yield* store.set("SECOND", Redacted.make("second-value-abcdef"))
      const file = yield* storeFile
      const document = JSON.parse(NodeFs.readFileSync(file, "utf8")) as {
        secrets: Record<string, { ciphertext: string }>
      }
      const bytes = Buffer.from(document.secrets.FIRST!.ciphertext, "base64")
      bytes[0] = bytes[0]! ^ 1
      document.secrets.SECOND = document.secrets.FIRST!
      NodeFs.writeFileSync(
        file,
        JSON.stringify({ ...document, secrets: { ...document.secrets, SECOND: { ...document.secrets.SECOND } } })
      )
      const moved = yield* failureOf(Effect.flatMap(secrets, (s) => s.resolve("SECOND")))
      assert.strictEqual(moved.reason, "Corrupt")
      document.secrets.FIRST = { ...document.secrets.FIRST!, ciphertext: bytes.toString("base64") }
      NodeFs.writeFileSync(file, JSON.stringify(document))
      const tampered = yield* failureOf(Effect.flatMap(secrets, (s) => s.resolve("FIRST")))
      assert.strictEqual(tampered.reason, "Corrupt")
      assert.include(tampered.message, "FIRST")
      const missing = yield* failureOf(Effect.flatMap(secrets, (s) => s.resolve("NOPE")))
      assert.strictEqual(missing.reason, "Missing")
    }).pipe(withKey({ MYCLAW_SECRET_KEY: keyA }), Effect.provide(Store)))

  it.scoped("a key file readable by others, or inside the workspace, is refused, naming the path and the problem", () =>
    Effect.gen(function*() {
      const store = yield* SecretStore
      const open = yield* keyFile(0o644)
      const loose = yield* failureOf(
        store.set("API_TOKEN", Redacted.make(VALUE)).pipe(withKey({ MYCLAW_SECRET_KEY_FILE: open }))
      )
      assert.strictEqual(loose.reason, "BadKey")
      assert.include(loose.message, open)
      assert.include(loose.message, "0644")
      const inside = yield* keyFile(0o600, (yield* Workspace).root)
      const kept = yield* failureOf(
        store.set("API_TOKEN", Redacted.make(VALUE)).pipe(withKey({ MYCLAW_SECRET_KEY_FILE: inside }))
      )
      assert.strictEqual(kept.reason, "BadKey")
      assert.include(kept.message, "inside the workspace")
      const good = yield* keyFile(0o600)
      assert.strictEqual(
        yield* store.set("API_TOKEN", Redacted.make(VALUE)).pipe(withKey({ MYCLAW_SECRET_KEY_FILE: good })),
        "created"
      )
      const resolved = yield* Effect.flatMap(secrets, (s) => s.resolve("API_TOKEN")).pipe(
        withKey({ MYCLAW_SECRET_KEY: keyA })
      )
      assert.strictEqual(Redacted.value(resolved), VALUE)
      const none = yield* failureOf(store.set("API_TOKEN", Redacted.make(VALUE)).pipe(withKey({})))
      assert.strictEqual(none.reason, "NoKey")
    }).pipe(Effect.provide(Store)))

  it.effect("the key format: 64 hex digits or base64 of 32 bytes; anything else is named, never quoted", () =>
    Effect.sync(() => {
      assert.isTrue(Either.isRight(parseSecretKey(keyA)))
      assert.isTrue(Either.isRight(parseSecretKey(` ${keyB}\n`)))
      assert.isTrue(Either.isRight(parseSecretKey(keyA.replace(/=$/, "").replaceAll("+", "-").replaceAll("/", "_"))))
      const short = parseSecretKey("hunter2-not-a-key")
      assert.isTrue(
        Either.isLeft(short) && short.left.includes("64 hex digits or as base64") && !short.left.includes("hunter2")
      )
      assert.isTrue(Either.isLeft(parseSecretKey(randomBytes(16).toString("hex"))))
      assert.isTrue(Either.isLeft(parseSecretKey("")))
    }))

  it.scoped("list shows names and change times only; rm removes; short values and bad names are refused", () =>
    Effect.gen(function*() {
      const store = yield* SecretStore
      yield* store.set("B_TOKEN", Redacted.make(VALUE))
      yield* store.set("A_TOKEN", Redacted.make("another-value-123"))
      const listed = yield* store.list
      assert.deepStrictEqual(listed.map((entry) => Object.keys(entry).sort()), [["changedAt", "name"], [
        "changedAt",
        "name"
      ]])
      assert.deepStrictEqual(listed.map((entry) => entry.name), ["A_TOKEN", "B_TOKEN"])
      assert.notInclude(JSON.stringify(listed), VALUE)
      assert.isTrue(yield* store.remove("B_TOKEN"))
      assert.isFalse(yield* store.remove("B_TOKEN"))
      assert.deepStrictEqual((yield* store.list).map((entry) => entry.name), ["A_TOKEN"])
      assert.strictEqual((yield* failureOf(store.set("PIN", Redacted.make("1234")))).reason, "InvalidValue")
      assert.strictEqual((yield* failureOf(store.set("../x", Redacted.make(VALUE)))).reason, "InvalidName")
    }).pipe(withKey({ MYCLAW_SECRET_KEY: keyA }), Effect.provide(Store)))
})
