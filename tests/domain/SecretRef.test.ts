import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { makeRedactionSet, MIN_SECRET_LENGTH } from "../../src/domain/Redaction.js"
import { resolveSecretRefs, secretNamesOf, SecretOrString } from "../../src/domain/SecretRef.js"
import { makeSecretsMemory } from "../../src/layers/secrets/SecretsMemory.js"

const decode = Schema.decodeUnknownEither(Schema.Record({ key: Schema.String, value: SecretOrString }))

describe("SecretRef", () => {
  it.effect("a record of plain values and {secret} references decodes; a bad name is named as such", () =>
    Effect.sync(() => {
      const env = decode({ PATH: "/usr/bin", GITHUB_TOKEN: { secret: "GITHUB_TOKEN" } })
      assert.isTrue(Either.isRight(env))
      assert.deepStrictEqual(secretNamesOf(Either.getOrThrow(env)), ["GITHUB_TOKEN"])
      const bad = decode({ TOKEN: { secret: "not a name" } })
      assert.isTrue(Either.isLeft(bad))
      assert.include(String(Either.isLeft(bad) && bad.left.message), "expected a secret name")
    }))

  it.effect("resolveSecretRefs fills every reference at call time, and fails naming the first missing secret", () =>
    Effect.gen(function*() {
      const { secrets } = yield* makeSecretsMemory({ API_KEY: "key-value-0123456789" })
      const resolved = yield* resolveSecretRefs({ MODE: "fast", KEY: { secret: "API_KEY" } }, secrets.resolve)
      assert.deepStrictEqual(resolved, { MODE: "fast", KEY: "key-value-0123456789" })
      assert.strictEqual(secrets.redact("Bearer key-value-0123456789"), "Bearer [secret:API_KEY]")
      const missing = yield* Effect.flip(resolveSecretRefs({ KEY: { secret: "NOPE" } }, secrets.resolve))
      assert.strictEqual(missing.reason, "Missing")
      assert.strictEqual(missing.name, "NOPE")
    }))
})

describe("redaction", () => {
  it.effect("longest value first, so a value containing another is replaced whole; unknown text is left alone", () =>
    Effect.sync(() => {
      const set = makeRedactionSet()
      assert.strictEqual(set.redact("nothing known yet"), "nothing known yet")
      set.add("SHORT", "abcdefgh")
      set.add("LONG", "abcdefgh-ijklmnop")
      assert.strictEqual(set.redact("x abcdefgh-ijklmnop y abcdefgh z"), "x [secret:LONG] y [secret:SHORT] z")
      assert.strictEqual(set.redact("abcdefg"), "abcdefg")
      assert.strictEqual(MIN_SECRET_LENGTH, 8)
    }))
})
