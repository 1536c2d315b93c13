import { NodeContext } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Effect, Either, Layer, Logger, Schema } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { AppConfig, type PolicyRule } from "../../src/domain/AppConfig.js"
import { defineTool, type Tool } from "../../src/domain/Tool.js"
import { MyclawConfigFixed } from "../../src/layers/MyclawConfigLive.js"
import { makePolicy, PolicyLive, type PolicyOptions, shadowedRules } from "../../src/layers/PolicyLive.js"
import { WorkspaceTemp } from "../../src/layers/Test.js"
import { makeFsTools } from "../../src/layers/tools/FsTools.js"
import { Policy, type Provenance } from "../../src/services/Policy.js"
import { Workspace } from "../../src/services/Workspace.js"

const Env = Layer.provideMerge(WorkspaceTemp, NodeContext.layer)

/** A turn with no untrusted content in it. */
const clean: Provenance = { untrustedSources: [], untrustedHosts: new Set(), userMessage: "" }

const fsTool = (name: "fs_read" | "fs_list" | "fs_write") =>
  Effect.map(makeFsTools, (tools) => tools.find((tool) => tool.name === name)!)

/** The verdict and deciding rule for a call, with the target the tool itself derives from its arguments. */
const decide = (rules: ReadonlyArray<PolicyRule>, tool: Tool, args: unknown, options?: PolicyOptions) =>
  Effect.gen(function*() {
    const prepared = Either.getOrThrow(tool.prepare(args))
    const policy = yield* makePolicy(rules, options)
    const decision = yield* policy.evaluate({ tool, target: prepared.target, args: prepared.args, provenance: clean })
    return `${decision.verdict} ${decision.rule}`
  })

const write = (rules: ReadonlyArray<PolicyRule>, path: string, options?: PolicyOptions) =>
  Effect.flatMap(fsTool("fs_write"), (tool) => decide(rules, tool, { path, content: "x" }, options))

const read = (rules: ReadonlyArray<PolicyRule>, path: string) =>
  Effect.flatMap(fsTool("fs_read"), (tool) => decide(rules, tool, { path }))

/** Runs a file-system action inside the test workspace. */
const inWorkspace = (action: (root: string) => Promise<unknown>) =>
  Effect.flatMap(Workspace, ({ root }) => Effect.promise(() => action(root)))

const allowAllWrites: ReadonlyArray<PolicyRule> = [{ match: "fs_write:*", decision: "allow" }]

layer(Env)("PolicyLive", (it) => {
  it.effect("defaults: read-only tools are allowed, side effects need approval", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* decide([], yield* fsTool("fs_read"), { path: "a.md" }), "allow default:read-only")
      assert.strictEqual(yield* decide([], yield* fsTool("fs_list"), {}), "allow default:read-only")
      assert.strictEqual(yield* write([], "notes/a.md"), "approve_required default:side-effects")
    }))

  it.effect("the first matching rule wins", () =>
    Effect.gen(function*() {
      const rules: ReadonlyArray<PolicyRule> = [
        { match: "fs_write:notes/*", decision: "allow" },
        { match: "fs_write:*", decision: "deny" }
      ]
      assert.strictEqual(yield* write(rules, "notes/a.md"), "allow fs_write:notes/*")
      assert.strictEqual(yield* write(rules, "todo.md"), "deny fs_write:*")
      assert.strictEqual(yield* write([...rules].reverse(), "notes/a.md"), "deny fs_write:*")
    }))

  it.effect("* stays within one folder, ** goes deeper, ? is one character", () =>
    Effect.gen(function*() {
      const one: ReadonlyArray<PolicyRule> = [{ match: "fs_write:notes/*", decision: "allow" }]
      assert.strictEqual(yield* write(one, "notes/a.md"), "allow fs_write:notes/*")
      assert.strictEqual(yield* write(one, "notes/sub/a.md"), "approve_required default:side-effects")
      assert.strictEqual(yield* write(one, "notes"), "approve_required default:side-effects")
      const deep: ReadonlyArray<PolicyRule> = [{ match: "fs_write:notes/**", decision: "allow" }]
      assert.strictEqual(yield* write(deep, "notes/sub/deeper/a.md"), "allow fs_write:notes/**")
      assert.strictEqual(yield* write(deep, "notesX/a.md"), "approve_required default:side-effects")
      const single: ReadonlyArray<PolicyRule> = [{ match: "fs_write:day-?.md", decision: "allow" }]
      assert.strictEqual(yield* write(single, "day-1.md"), "allow fs_write:day-?.md")
      assert.strictEqual(yield* write(single, "day-12.md"), "approve_required default:side-effects")
      const dots: ReadonlyArray<PolicyRule> = [{ match: "fs_write:a.md", decision: "allow" }]
      assert.strictEqual(yield* write(dots, "aXmd"), "approve_required default:side-effects")
    }))

  it.effect("the tool part of a rule is a glob, and a rule without ':' matches every target", () =>
    Effect.gen(function*() {
      const rules: ReadonlyArray<PolicyRule> = [{ match: "fs_*", decision: "deny" }]
      assert.strictEqual(yield* decide(rules, yield* fsTool("fs_read"), { path: "a.md" }), "deny fs_*")
      assert.strictEqual(yield* write(rules, "notes/deep/a.md"), "deny fs_*")
      const other: ReadonlyArray<PolicyRule> = [{ match: "fs_read", decision: "deny" }]
      assert.strictEqual(yield* write(other, "a.md"), "approve_required default:side-effects")
    }))

  it.effect("hard denials win over any rule: SOUL.md, .audit and outside the workspace", () =>
    Effect.gen(function*() {
      for (const rules of [allowAllWrites, [{ match: "*", decision: "allow" } as const]]) {
        assert.strictEqual(yield* write(rules, "SOUL.md"), "deny builtin:constitution")
        assert.strictEqual(yield* write(rules, ".audit/x"), "deny builtin:audit")
        assert.strictEqual(yield* write(rules, ".audit/traces/2025-01.jsonl"), "deny builtin:audit")
        assert.strictEqual(yield* write(rules, ".audit"), "deny builtin:audit")
        assert.strictEqual(yield* write(rules, "/etc/cron.d/x"), "deny builtin:outside-workspace")
        assert.strictEqual(yield* write(rules, "../x"), "deny builtin:outside-workspace")
        assert.strictEqual(yield* write(rules, "notes/a.md"), `allow ${rules[0]!.match}`)
      }
    }))

  it.effect("a ../ or ./ path cannot dodge a hard denial", () =>
    Effect.gen(function*() {
      const tool = yield* fsTool("fs_write")
      const prepared = Either.getOrThrow(tool.prepare({ path: "notes/../SOUL.md", content: "x" }))
      assert.strictEqual(prepared.target, "SOUL.md")
      for (const path of ["notes/../SOUL.md", "./SOUL.md", "notes/../.audit/x", "notes/../../x"]) {
        assert.match(yield* write(allowAllWrites, path), /^deny builtin:/, path)
      }
    }))

  it.effect("hard denials concern writes only: reading SOUL.md is fine", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* decide([], yield* fsTool("fs_read"), { path: "SOUL.md" }), "allow default:read-only")
    }))

  it.effect("a rule carries its reason and forceTier", () =>
    Effect.gen(function*() {
      const tool = yield* fsTool("fs_read")
      const rule: PolicyRule = {
        match: "fs_read:private/**",
        decision: "allow",
        forceTier: "frontier",
        reason: "keep it"
      }
      const policy = yield* makePolicy([rule])
      const decision = yield* policy.evaluate({ tool, target: "private/a.md", args: {}, provenance: clean })
      assert.deepStrictEqual(decision, { verdict: "allow", rule: rule.match, reason: "keep it", forceTier: "frontier" })
    }))

  it.effect("side-effecting tools without a path target are not hard-denied", () =>
    Effect.gen(function*() {
      const shell = defineTool({
        name: "shell",
        description: "run a command",
        parameters: Schema.Struct({ cmd: Schema.String }),
        hasSideEffects: true,
        external: false,
        targetKind: "command",
        target: ({ cmd }) => cmd,
        execute: () => Effect.succeed({ status: "success", content: "" } as const)
      })
      // A command is allowed without asking only by a rule that names it exactly.
      const rules: ReadonlyArray<PolicyRule> = [{ match: "shell:/bin/ls", decision: "allow" }]
      assert.strictEqual(yield* decide(rules, shell, { cmd: "/bin/ls" }), "allow shell:/bin/ls")
    }))

  it.effect("PolicyLive reads its rules from the configuration", () =>
    Effect.gen(function*() {
      const tool = yield* fsTool("fs_write")
      const policy = yield* Effect.provide(
        Policy,
        PolicyLive.pipe(Layer.provide(MyclawConfigFixed(AppConfig.make({
          policy: { rules: [{ match: "fs_write:notes/*", decision: "deny" }], trusted: [] }
        }))))
      )
      const decision = yield* policy.evaluate({ tool, target: "notes/a.md", args: {}, provenance: clean })
      assert.strictEqual(decision.verdict, "deny")
    }))

  it.effect("a read-deny rule holds through a symbolic link inside the workspace", () =>
    Effect.gen(function*() {
      yield* inWorkspace(async (root) => {
        await NodeFs.mkdir(NodePath.join(root, "notes/private"), { recursive: true })
        await NodeFs.writeFile(NodePath.join(root, "notes/private/diary.md"), "secret")
        await NodeFs.symlink(NodePath.join(root, "notes/private/diary.md"), NodePath.join(root, "public.md"))
        await NodeFs.symlink(NodePath.join(root, "notes/private"), NodePath.join(root, "pub"))
      })
      const rules: ReadonlyArray<PolicyRule> = [{ match: "fs_read:notes/private/**", decision: "deny" }]
      assert.strictEqual(yield* read(rules, "notes/private/diary.md"), "deny fs_read:notes/private/**")
      assert.strictEqual(yield* read(rules, "public.md"), "deny fs_read:notes/private/**")
      assert.strictEqual(yield* read(rules, "pub/diary.md"), "deny fs_read:notes/private/**")
      assert.strictEqual(yield* read(rules, "notes/other.md"), "allow default:read-only")
    }))

  it.effect("hard denials compare files, not names: a hard link to SOUL.md is SOUL.md", () =>
    Effect.gen(function*() {
      yield* inWorkspace(async (root) => {
        await NodeFs.mkdir(NodePath.join(root, "notes"), { recursive: true })
        await NodeFs.link(NodePath.join(root, "SOUL.md"), NodePath.join(root, "notes/soul-copy.md"))
        await NodeFs.writeFile(NodePath.join(root, "notes/a.md"), "a")
        await NodeFs.link(NodePath.join(root, "notes/a.md"), NodePath.join(root, "notes/b.md"))
        await NodeFs.symlink(NodePath.join(root, "SOUL.md"), NodePath.join(root, "notes/soul-link.md"))
      })
      for (const rules of [allowAllWrites, [{ match: "*", decision: "allow" } as const]]) {
        assert.strictEqual(yield* write(rules, "notes/soul-copy.md"), "deny builtin:constitution")
        assert.strictEqual(yield* write(rules, "notes/soul-link.md"), "deny builtin:constitution")
        assert.strictEqual(yield* write(rules, "notes/b.md"), "deny builtin:hard-link")
        assert.strictEqual(yield* write(rules, "notes/c.md"), `allow ${rules[0]!.match}`)
      }
    }))

  it.effect("the configuration file gets the same hard denial as SOUL.md, wherever it is", () =>
    Effect.gen(function*() {
      const outside = yield* Effect.acquireRelease(
        Effect.promise(() => NodeFs.mkdtemp(NodePath.join(NodeOs.tmpdir(), "myclaw-config-"))),
        (dir) => Effect.promise(() => NodeFs.rm(dir, { recursive: true, force: true }))
      )
      const external = NodePath.join(outside, "myclaw.json")
      yield* inWorkspace(async (root) => {
        await NodeFs.writeFile(external, "{}")
        await NodeFs.mkdir(NodePath.join(root, "conf"), { recursive: true })
        await NodeFs.writeFile(NodePath.join(root, "conf/agent.json"), "{}")
        await NodeFs.symlink(NodePath.join(root, "conf"), NodePath.join(root, "c"))
        await NodeFs.link(external, NodePath.join(root, "notes.json"))
      })
      const root = (yield* Workspace).root
      const inside = { configFile: NodePath.join(root, "conf/agent.json") }
      for (const path of ["conf/agent.json", "notes/../conf/agent.json", "c/agent.json", "myclaw.json"]) {
        assert.strictEqual(yield* write(allowAllWrites, path, inside), "deny builtin:configuration", path)
      }
      assert.strictEqual(
        yield* write(allowAllWrites, "notes.json", { configFile: external }),
        "deny builtin:configuration"
      )
      assert.strictEqual(yield* write(allowAllWrites, "conf/other.json", inside), "allow fs_write:*")
    }).pipe(Effect.scoped))

  it.effect("protected names ignore case where the file system does", () =>
    Effect.gen(function*() {
      const folded: PolicyOptions = { caseInsensitive: true }
      assert.strictEqual(yield* write(allowAllWrites, "soul.MD", folded), "deny builtin:constitution")
      assert.strictEqual(yield* write(allowAllWrites, "MyClaw.json", folded), "deny builtin:configuration")
      assert.strictEqual(yield* write(allowAllWrites, ".Audit/x", folded), "deny builtin:audit")
      const rules: ReadonlyArray<PolicyRule> = [
        { match: "fs_write:Notes/Private/**", decision: "deny" },
        { match: "fs_write:*", decision: "allow" }
      ]
      assert.strictEqual(yield* write(rules, "notes/private/a.md", folded), "deny fs_write:Notes/Private/**")
      const exact: PolicyOptions = { caseInsensitive: false }
      assert.strictEqual(yield* write(rules, "notes/private/a.md", exact), "allow fs_write:*")
      assert.strictEqual(yield* write(allowAllWrites, "soul.MD", exact), "allow fs_write:*")
    }))

  it.effect("after taint, every request to a host the owner did not name or allow by name needs approval", () =>
    Effect.gen(function*() {
      const httpGet = defineTool({
        name: "http_get",
        description: "Fetch a URL.",
        parameters: Schema.Struct({ url: Schema.String }),
        hasSideEffects: false,
        external: true,
        targetKind: "host",
        target: ({ url }) => new URL(url).host,
        execute: () => Effect.succeed({ status: "success", content: "" } as const)
      })
      const fetch = (
        rules: ReadonlyArray<PolicyRule>,
        url: string,
        userMessage: string,
        untrustedHosts: Array<string>
      ) =>
        Effect.gen(function*() {
          const prepared = Either.getOrThrow(httpGet.prepare({ url }))
          const policy = yield* makePolicy(rules)
          const provenance: Provenance = {
            untrustedSources: ["file:page.html"],
            untrustedHosts: new Set(untrustedHosts),
            userMessage
          }
          const decision = yield* policy.evaluate({ tool: httpGet, target: prepared.target, args: {}, provenance })
          return `${decision.verdict} ${decision.rule}`
        })
      const asked = "approve_required default:read-only"
      const user = "summarise the page and check docs.example"
      // Hosts the content named, in any spelling, are refused.
      for (const url of ["https://EVIL.example:8443/x", "http://0x7f.1/", "http://2130706433/"]) {
        assert.strictEqual(
          yield* fetch([], url, user, ["evil.example", "127.0.0.1"]),
          "deny builtin:untrusted-egress",
          url
        )
      }
      // Any other host: a substring of the message, a subdomain, a query string carrying data: asked.
      for (const url of ["https://docs.example.evil.com/", "https://example/", "https://other.example/?d=secret"]) {
        assert.strictEqual(yield* fetch([], url, user, []), asked, url)
      }
      assert.strictEqual(
        yield* fetch([{ match: "*", decision: "allow" }], "https://other.example/", user, []),
        "approve_required *"
      )
      // A host the owner named in this turn, or one a rule names, goes as before.
      assert.strictEqual(yield* fetch([], "https://docs.example/page?q=1", user, []), "allow default:read-only")
      const weather: ReadonlyArray<PolicyRule> = [{ match: "http_get:*.weather.example", decision: "allow" }]
      assert.strictEqual(
        yield* fetch(weather, "https://api.weather.example/", user, []),
        "allow http_get:*.weather.example"
      )
    }))

  it.effect("a rule an earlier one covers can never match: it is reported at load", () =>
    Effect.gen(function*() {
      const rules: ReadonlyArray<PolicyRule> = [
        { match: "fs_write:notes/**", decision: "allow" },
        { match: "fs_write:notes/private/**", decision: "deny" },
        { match: "fs_write:notes/*.md", decision: "deny" },
        { match: "fs_*:todo.md", decision: "deny" },
        { match: "fs_read:notes/**", decision: "deny" },
        { match: "fs_write:notesX/*", decision: "deny" },
        { match: "fs_read:notes/a?.md", decision: "allow" },
        { match: "*", decision: "approve_required" },
        { match: "fs_list:x", decision: "deny" }
      ]
      assert.deepStrictEqual(shadowedRules(rules), [{ index: 1, by: 0 }, { index: 2, by: 0 }, { index: 6, by: 4 }, {
        index: 8,
        by: 7
      }])
      const logged: Array<string> = []
      const logger = Logger.make(({ message }) => void logged.push(String(message)))
      yield* makePolicy(rules).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      assert.lengthOf(logged, 4)
      assert.include(logged[0], `policy rule 2 "fs_write:notes/private/**" (deny) can never match: rule 1`)
      assert.include(logged[0], "first match decides")
      // The order is what decides: the narrower deny first works.
      assert.deepStrictEqual(shadowedRules([rules[1]!, rules[0]!]), [])
      assert.strictEqual(yield* write([rules[1]!, rules[0]!], "notes/private/a.md"), "deny fs_write:notes/private/**")
    }))
})
