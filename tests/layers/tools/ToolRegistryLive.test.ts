import { NodeContext } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Logger, LogLevel, Option, Redacted, Schema, TestClock } from "effect"
import { AppConfig } from "../../../src/domain/AppConfig.js"
import { ToolExecutionError } from "../../../src/domain/Errors.js"
import { defineTool } from "../../../src/domain/Tool.js"
import { MyclawConfigFixed } from "../../../src/layers/MyclawConfigLive.js"
import { SecretsMemory } from "../../../src/layers/secrets/SecretsMemory.js"
import { WorkspaceTemp } from "../../../src/layers/Test.js"
import { ToolRegistryFrom, ToolRegistryLive } from "../../../src/layers/tools/ToolRegistryLive.js"
import { Secrets } from "../../../src/services/Secrets.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"

const config = AppConfig.make({ timeouts: { llmMs: 60_000, toolMs: 1_000 } })

const Live = ToolRegistryLive.pipe(
  Layer.provide(Layer.mergeAll(MyclawConfigFixed(config), WorkspaceTemp, SecretsMemory())),
  Layer.provide(NodeContext.layer)
)

const slow = defineTool({
  name: "slow",
  description: "answers after a minute",
  parameters: Schema.Struct({}),
  hasSideEffects: false,
  external: false,
  execute: () => Effect.as(Effect.sleep("1 minute"), { status: "success", content: "late" } as const)
})
const crashy = defineTool({
  name: "crashy",
  description: "throws",
  parameters: Schema.Struct({ how: Schema.Literal("throw", "die", "throw-early") }),
  hasSideEffects: false,
  external: false,
  execute: ({ how }) => {
    if (how === "throw-early") throw new Error("thrown before any Effect")
    return how === "die" ? Effect.dieMessage("invariant broken") : Effect.sync(() => {
      throw new Error("boom")
    })
  }
})
const Custom = ToolRegistryFrom([slow, crashy]).pipe(
  Layer.provide(Layer.merge(MyclawConfigFixed(config), SecretsMemory()))
)

const prepared = (name: string, args: unknown) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const validated = registry.validate({ id: "c1", name, args })
    if (validated._tag === "Invalid") return assert.fail(validated.message)
    return { registry, validated }
  })

layer(Live)("ToolRegistryLive: catalog and validate", (it) => {
  it.effect("shows the built-in tools with self-contained object schemas", () =>
    Effect.gen(function*() {
      const { catalog } = yield* ToolRegistry
      assert.deepStrictEqual(catalog.map((spec) => spec.name), ["fs_read", "fs_list", "fs_write", "now", "memory_note"])
      for (const spec of catalog) {
        assert.strictEqual(spec.parameters.type, "object", spec.name)
        assert.notMatch(JSON.stringify(spec.parameters), /\$ref|\$defs|\$schema/)
        assert.isAbove(spec.description.length, 0)
      }
    }))

  it.effect("accepts a valid call and gives the policy a normalised target", () =>
    Effect.gen(function*() {
      const { validated } = yield* prepared("fs_write", { path: "notes/../todo.md", content: "x" })
      assert.strictEqual(validated._tag, "Valid")
      if (validated._tag === "Valid") {
        assert.strictEqual(validated.prepared.target, "todo.md")
        assert.strictEqual(validated.prepared.summary, "write 1 bytes to notes/../todo.md")
      }
    }))

  it.effect("an unknown tool: the message lists the catalog and the nearest name", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const call = { id: "c1", name: "fs_reed", args: { path: "a" } }
      const validated = registry.validate(call)
      assert.strictEqual(validated._tag, "Invalid")
      if (validated._tag !== "Invalid") return
      assert.strictEqual(validated.validation, "unknown_tool")
      assert.strictEqual(validated.call, call)
      assert.include(validated.message, "\"fs_reed\" (not in the catalog)")
      assert.include(validated.message, "Nearest tool name: \"fs_read\"")
      assert.include(validated.message, "Available tools: \"fs_read\", \"fs_list\", \"fs_write\", \"now\"")
    }))

  it.effect("a schema error names the missing field and shows the expected schema", () =>
    Effect.gen(function*() {
      const validated = (yield* ToolRegistry).validate({ id: "c1", name: "fs_read", args: { max_bytes: 10 } })
      assert.strictEqual(validated._tag, "Invalid")
      if (validated._tag !== "Invalid") return
      assert.strictEqual(validated.validation, "schema_error")
      assert.include(validated.message, "- Argument \"path\": missing (required)")
      assert.include(validated.message, "- Expected schema: { \"path\": string, \"max_bytes\"?: integer }")
    }))

  it.effect("a schema error for an unexpected field and for a wrong type", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const extra = registry.validate({ id: "c1", name: "fs_write", args: { path: "a", content: "b", mode: "w" } })
      assert.include(extra._tag === "Invalid" ? extra.message : "", "- Argument \"mode\": not in the schema")
      const typed = registry.validate({ id: "c2", name: "fs_write", args: { path: "a", content: 3 } })
      assert.include(typed._tag === "Invalid" ? typed.message : "", "- Argument \"content\": Expected string")
    }))

  it.effect("arguments that are not valid JSON are a schema error saying so", () =>
    Effect.gen(function*() {
      const validated = (yield* ToolRegistry).validate({
        id: "c1",
        name: "fs_read",
        args: null,
        raw_arguments: "{\"path\": \"a.md\""
      })
      assert.strictEqual(validated._tag, "Invalid")
      if (validated._tag !== "Invalid") return
      assert.strictEqual(validated.validation, "schema_error")
      assert.include(validated.message, "not valid JSON")
      assert.include(validated.message, "\"path\\\": \\\"a.md\\\"")
      assert.include(validated.message, "Expected schema: { \"path\": string")
    }))
})

describe("ToolRegistry.execute", () => {
  it.effect("a tool that outlives timeouts.toolMs becomes a failed result naming the timeout", () =>
    Effect.gen(function*() {
      const { registry, validated } = yield* prepared("slow", {})
      if (validated._tag !== "Valid") return
      const fiber = yield* Effect.fork(registry.execute(validated.prepared, validated.tool))
      yield* TestClock.adjust("999 millis")
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)), "still running before the timeout")
      yield* TestClock.adjust("1 millis")
      const result = yield* Fiber.join(fiber)
      assert.deepStrictEqual(result, { status: "failed", content: "timed out after 1000 ms" })
    }).pipe(Effect.provide(Custom)))

  it.effect("a tool that throws or dies becomes a failed result", () =>
    Effect.gen(function*() {
      for (const how of ["throw", "die", "throw-early"] as const) {
        const { registry, validated } = yield* prepared("crashy", { how })
        if (validated._tag !== "Valid") return
        const result = yield* registry.execute(validated.prepared, validated.tool)
        assert.strictEqual(result.status, "failed", how)
        assert.include(result.content, "the tool crashy crashed")
        assert.include(
          result.content,
          how === "throw" ? "boom" : how === "die" ? "invariant broken" : "thrown before any Effect"
        )
      }
    }).pipe(Effect.provide(Custom), Logger.withMinimumLogLevel(LogLevel.None)))

  it.effect("interrupting a running tool interrupts, it is not turned into a result", () =>
    Effect.gen(function*() {
      const { registry, validated } = yield* prepared("slow", {})
      if (validated._tag !== "Valid") return
      const fiber = yield* Effect.fork(registry.execute(validated.prepared, validated.tool))
      yield* TestClock.adjust("10 millis")
      const exit = yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isInterrupted(exit))
    }).pipe(Effect.provide(Custom)))

  it.effect("refuses two tools with the same name", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        Effect.provide(
          ToolRegistry,
          ToolRegistryFrom([slow, slow]).pipe(
            Layer.provide(Layer.merge(MyclawConfigFixed(config), SecretsMemory()))
          )
        )
      )
      assert.isTrue(Exit.isFailure(exit))
    }))
})

describe("ToolRegistryLive: redaction", () => {
  const CANARY = "canary-5b0d9e1f7a2c"
  const echo = Effect.map(Secrets, (secrets) =>
    defineTool({
      name: "echo_secret",
      description: "resolves a secret and echoes it",
      parameters: Schema.Struct({ how: Schema.Literal("result", "error", "crash") }),
      hasSideEffects: false,
      external: true,
      execute: ({ how }) =>
        Effect.flatMap(Effect.orDie(secrets.resolve("CANARY")), (secret) => {
          const value = Redacted.value(secret)
          return how === "result"
            ? Effect.succeed({ status: "success", content: `token ${value}`, source: `https://x/?t=${value}` } as const)
            : how === "error"
            ? Effect.fail(new ToolExecutionError({ tool: "echo_secret", message: `rejected ${value}` }))
            : Effect.dieMessage(`crashed holding ${value}`)
        })
    }))
  const Echo = Layer.unwrapEffect(Effect.map(echo, (tool) => ToolRegistryFrom([tool]))).pipe(
    Layer.provide(Layer.merge(MyclawConfigFixed(config), SecretsMemory({ CANARY })))
  )

  it.effect("a resolved value echoed in a result, a source, an error or a crash (and its log) becomes [secret:NAME]", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const capture = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logs.push(String(message))))
      const outputs: Array<string> = []
      for (const how of ["result", "error", "crash"] as const) {
        const { registry, validated } = yield* prepared("echo_secret", { how })
        const result = yield* registry.execute(validated.prepared, validated.tool).pipe(Effect.provide(capture))
        outputs.push(JSON.stringify(result))
        assert.include(result.content, "[secret:CANARY]")
      }
      assert.strictEqual(logs.length, 1)
      assert.include(logs[0]!, "[secret:CANARY]")
      for (const text of [...outputs, ...logs]) assert.notInclude(text, CANARY)
    }).pipe(Effect.provide(Echo)))
})

describe("ToolRegistry.execute: a tool written as an async function", () => {
  const CANARY = "canary-0c3e8a91d2b4"
  /** What the last call was given, and how to end it: the tests play the tool's promise. */
  const calls: Array<{
    readonly args: { readonly how: string }
    readonly signal: AbortSignal
    readonly resolve: (content: string) => void
  }> = []
  const asyncTool = Effect.map(Secrets, (secrets) =>
    defineTool({
      name: "lookup",
      description: "looks something up",
      parameters: Schema.Struct({ how: Schema.Literal("answer", "wait", "reject", "throw", "leak") }),
      hasSideEffects: false,
      external: false,
      run: async (args, { signal }) => {
        if (args.how === "throw") throw new Error("bad lookup")
        const secret = Redacted.value(await Effect.runPromise(Effect.orDie(secrets.resolve("CANARY"))))
        if (args.how === "reject") throw new Error(`refused with ${secret}`)
        if (args.how === "leak") return { status: "success", content: `found ${secret}` }
        if (args.how === "answer") return { status: "success", content: "42" }
        return new Promise((resolve) =>
          calls.push({ args, signal, resolve: (content) => resolve({ status: "success", content }) })
        )
      }
    }))
  const Async = Layer.unwrapEffect(Effect.map(asyncTool, (tool) => ToolRegistryFrom([tool]))).pipe(
    Layer.provide(Layer.merge(MyclawConfigFixed(config), SecretsMemory({ CANARY })))
  )
  const call = (how: string) =>
    Effect.flatMap(
      prepared("lookup", { how }),
      ({ registry, validated }) =>
        validated._tag === "Valid" ? registry.execute(validated.prepared, validated.tool) : Effect.die("invalid")
    )

  it.live("its result is the answer; a rejection or a throw is a failed result with the message, redacted", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* call("answer"), { status: "success", content: "42" })
      assert.deepStrictEqual(yield* call("throw"), { status: "failed", content: "bad lookup" })
      assert.deepStrictEqual(yield* call("reject"), { status: "failed", content: "refused with [secret:CANARY]" })
      assert.deepStrictEqual(yield* call("leak"), { status: "success", content: "found [secret:CANARY]" })
    }).pipe(Effect.provide(Async)))

  it.effect("past timeouts.toolMs: a failed result naming the timeout, and the tool's signal aborted", () =>
    Effect.gen(function*() {
      calls.length = 0
      const fiber = yield* Effect.fork(call("wait"))
      yield* TestClock.adjust("999 millis")
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)), "still waiting before the timeout")
      assert.strictEqual(calls.length, 1)
      assert.isFalse(calls[0]!.signal.aborted)
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(yield* Fiber.join(fiber), { status: "failed", content: "timed out after 1000 ms" })
      assert.isTrue(calls[0]!.signal.aborted)
      assert.strictEqual((calls[0]!.signal.reason as DOMException).name, "TimeoutError")
      calls[0]!.resolve("too late")
    }).pipe(Effect.provide(Async)))

  it.effect("interrupting the call interrupts (no result) and aborts the tool's signal", () =>
    Effect.gen(function*() {
      calls.length = 0
      const fiber = yield* Effect.fork(call("wait"))
      yield* TestClock.adjust("10 millis")
      const exit = yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isInterrupted(exit))
      assert.isTrue(calls[0]!.signal.aborted)
    }).pipe(Effect.provide(Async)))

  it.effect("the same call as an effect (PreparedCall.execute) behaves alike", () =>
    Effect.gen(function*() {
      const { validated } = yield* prepared("lookup", { how: "throw" })
      if (validated._tag !== "Valid") return
      const exit = yield* Effect.exit(validated.prepared.execute)
      assert.deepStrictEqual(exit, Exit.fail(new ToolExecutionError({ tool: "lookup", message: "bad lookup" })))
    }).pipe(Effect.provide(Async)))
})
