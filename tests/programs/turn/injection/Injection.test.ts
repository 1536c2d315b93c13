import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import type { PolicyRule } from "../../../../src/domain/AppConfig.js"
import type { LlmRequest } from "../../../../src/domain/LlmTypes.js"
import type { ScriptEntry } from "../../../../src/domain/ScriptEntry.js"
import { defineTool } from "../../../../src/domain/Tool.js"
import { LlmFunction } from "../../../../src/layers/llm/LlmScripted.js"
import { TestLayer } from "../../../../src/layers/Test.js"
import { AgentRuntime } from "../../../../src/services/AgentRuntime.js"
import type { ApprovalRequest } from "../../../../src/services/Approvals.js"
import { Workspace } from "../../../../src/services/Workspace.js"
import { type Attack, cases, type InjectionCase, policies } from "./Cases.js"

const DOCUMENT = "inbox/mail.md"

/** What the obedient model is doing now: a case of the table, or a control with no untrusted content. */
type Playing =
  | { readonly _tag: "case"; readonly case: InjectionCase }
  | { readonly _tag: "control"; readonly attack: Attack }

/** A network tool whose target is a host, as a fetch tool's is: it only records where it was sent. */
const visits: Array<string> = []
const httpGet = defineTool({
  name: "http_get",
  description: "Fetch a URL.",
  parameters: Schema.Struct({ url: Schema.String }),
  hasSideEffects: false,
  external: true,
  targetKind: "host",
  target: ({ url }) => new URL(url).host,
  execute: ({ url }) =>
    Effect.sync(() => (visits.push(url), { status: "success", content: "ok", source: `web:${url}` } as const))
})

/** The text as a credulous reader sees it: compatibility forms folded, invisible and combining characters gone. */
const folded = (text: string) =>
  text.normalize("NFKD").replace(/[\p{Default_Ignorable_Code_Point}\p{M}]/gu, "").normalize("NFKC")

const genuine =
  /^<untrusted id="([^"]+)" source="file:inbox\/mail\.md" retrieved_at="[^"]+">\n([\s\S]*)\n<\/untrusted id="\1">$/

/**
 * A model that obeys whatever it reads: it reads the document, then makes the attacker's call (in the next step,
 * in the same response, or in the next turn once the user says "ok"). It also checks that the document reached
 * it inside exactly one genuine wrapper.
 */
const obedientModel = (playing: () => Playing, wrapperFaults: Array<string>) => (request: LlmRequest): ScriptEntry => {
  const { messages } = request
  let lastUser = messages.length - 1
  while (messages[lastUser]!.role !== "user") lastUser--
  const said = messages[lastUser]!.content
  const after = messages.slice(lastUser + 1)
  const steps = after.filter((message) => message.role === "assistant").length
  for (const message of after) {
    if (message.role !== "tool" || message.name !== "fs_read" || message.isError) continue
    const match = genuine.exec(message.content)
    if (match === null) wrapperFaults.push(`not wrapped: ${message.content.slice(0, 80)}`)
    else if (folded(match[2]!).includes("<")) wrapperFaults.push(`a tag survived inside: ${match[2]!.slice(0, 120)}`)
  }
  const now = playing()
  if (now._tag === "control") return steps === 0 ? { toolCalls: [now.attack.call] } : { text: "done" }
  const { attack, flow } = now.case
  const read = { name: "fs_read", args: { path: DOCUMENT } }
  if (said === "ok") return steps === 0 ? { toolCalls: [attack.call] } : { text: "done" }
  if (steps === 0) return { toolCalls: flow === "same response" ? [read, attack.call] : [read] }
  if (steps === 1 && flow === "next step") return { toolCalls: [attack.call] }
  if (steps === 1 && flow === "next turn after ok") {
    return { text: `The mail asks me to ${attack.instruction}. Say ok and I will.` }
  }
  return { text: "done" }
}

/** Every file of the workspace outside myclaw's own folders, with its content. */
const snapshot = (root: string) =>
  Effect.promise(async () => {
    const files: Record<string, string> = {}
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await NodeFs.readdir(dir, { withFileTypes: true })) {
        const path = NodePath.join(dir, entry.name)
        const rel = NodePath.relative(root, path)
        if (rel === ".audit" || rel === ".state") continue
        if (entry.isDirectory()) await walk(path)
        else files[rel] = await NodeFs.readFile(path, "utf8").catch(() => "<unreadable>")
      }
    }
    await walk(root)
    return files
  })

/** Links and files the attacks aim at besides the workspace's own: a configuration file and links to it and SOUL.md. */
const prepare = (root: string) =>
  Effect.promise(async () => {
    await NodeFs.mkdir(NodePath.join(root, "notes"), { recursive: true })
    await NodeFs.mkdir(NodePath.join(root, "inbox"), { recursive: true })
    await NodeFs.writeFile(NodePath.join(root, "myclaw.json"), "{}\n")
    await NodeFs.writeFile(NodePath.join(root, "notes/todo.md"), "- buy milk\n")
    await NodeFs.link(NodePath.join(root, "SOUL.md"), NodePath.join(root, "notes/soul-hard.md"))
    await NodeFs.symlink(NodePath.join(root, "SOUL.md"), NodePath.join(root, "notes/soul-sym.md"))
    await NodeFs.link(NodePath.join(root, "myclaw.json"), NodePath.join(root, "notes/config-hard.json"))
  })

const harness = (rules: ReadonlyArray<PolicyRule>) => {
  const asked: Array<ApprovalRequest> = []
  const wrapperFaults: Array<string> = []
  let playing: Playing | undefined
  const layer = TestLayer({
    config: { policy: { rules, trusted: [] } },
    tools: [httpGet],
    approve: (request) => (asked.push(request), false),
    llm: LlmFunction(obedientModel(() => playing!, wrapperFaults))
  })
  const turn = (userMessage: string, sessionId: string) =>
    Effect.flatMap(AgentRuntime, (agent) => agent.handle({ userMessage, sessionId, channel: "cli:owner" }))
  const play = (next: Playing) => Effect.sync(() => void (playing = next))
  return { asked, wrapperFaults, layer, turn, play }
}

describe("injection flows: an obedient model never causes a side effect the owner did not freshly approve", () => {
  for (const [policyName, rules] of policies) {
    it.scoped(`${cases.length} cases under ${policyName}`, () => {
      const { asked, layer, play, turn, wrapperFaults } = harness(rules)
      return Effect.gen(function*() {
        const { root } = yield* Workspace
        yield* prepare(root)
        const failures: Array<string> = []
        let approvalsAsked = 0
        for (const [index, injection] of cases.entries()) {
          yield* Effect.promise(() => NodeFs.writeFile(NodePath.join(root, DOCUMENT), injection.document))
          const before = yield* snapshot(root)
          visits.length = 0
          asked.length = 0
          wrapperFaults.length = 0
          yield* play({ _tag: "case", case: injection })
          const session = `case-${index}`
          yield* turn(injection.named ? `summarise ${DOCUMENT}` : "summarise my latest mail", session)
          if (injection.flow === "next turn after ok") yield* turn("ok", session)
          const after = yield* snapshot(root)
          const changed = Object.keys({ ...before, ...after }).filter((path) => before[path] !== after[path])
          if (changed.length > 0) failures.push(`${injection.name}: changed ${changed.join(", ")}`)
          if (visits.length > 0) failures.push(`${injection.name}: requested ${visits.join(", ")}`)
          for (const request of asked) {
            if (request.tainted === null) {
              failures.push(`${injection.name}: asked without saying it follows untrusted content`)
            }
          }
          for (const fault of wrapperFaults) failures.push(`${injection.name}: ${fault}`)
          approvalsAsked += asked.length
        }
        assert.deepStrictEqual(failures, [])
        // The owner was asked (and refused) where a rule or the default would otherwise have let a call through.
        assert.isAbove(approvalsAsked, 0)
      }).pipe(Effect.provide(layer))
    }, 120_000)
  }

  /** Controls: the same calls with no untrusted content in the session must run without a question. */
  const controls: ReadonlyArray<readonly [string, ReadonlyArray<PolicyRule>, ReadonlyArray<string>]> = [
    ["no rules", [], ["http_get"]],
    ["allow fs_write:notes/**", [{ match: "fs_write:notes/**", decision: "allow" }], ["notes/todo.md", "http_get"]],
    ["allow everything", [{ match: "*", decision: "allow" }], [
      "notes/todo.md",
      "urgent.md",
      "MEMORY.md",
      "USER.md",
      "IDENTITY.md",
      "http_get"
    ]]
  ]
  for (const [policyName, rules, allowed] of controls) {
    it.scoped(`controls under ${policyName}: the same calls without untrusted content run unasked`, () => {
      const { asked, layer, play, turn } = harness(rules)
      return Effect.gen(function*() {
        const { root } = yield* Workspace
        yield* prepare(root)
        const unique = new Map(cases.map(({ attack }) => [JSON.stringify(attack.call), attack]))
        const runs = [...unique.values()].filter(({ call }) =>
          allowed.includes(call.name === "http_get" ? "http_get" : String(call.args.path))
        )
        assert.isAbove(runs.length, 0)
        for (const [index, attack] of runs.entries()) {
          const before = yield* snapshot(root)
          visits.length = 0
          asked.length = 0
          yield* play({ _tag: "control", attack })
          // The owner names the target themselves: a request they make, not one a document makes.
          const target = attack.call.name === "http_get" ? String(attack.call.args.url) : String(attack.call.args.path)
          const trace = yield* turn(
            `please ${attack.instruction.replace(/^open \S+/, `open ${target}`)}`,
            `control-${index}`
          )
          assert.lengthOf(asked, 0, `${attack.label}: asked`)
          assert.strictEqual(trace.outcome, "success", attack.label)
          if (attack.call.name === "http_get") {
            assert.deepStrictEqual(visits, [attack.call.args.url], attack.label)
          } else {
            const after = yield* snapshot(root)
            assert.notDeepEqual(after, before, `${attack.label}: nothing was written`)
          }
        }
      }).pipe(Effect.provide(layer))
    }, 60_000)
  }
})
