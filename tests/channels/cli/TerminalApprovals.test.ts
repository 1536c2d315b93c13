import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import { execFile } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { pathToFileURL } from "node:url"
import { describePending, parseReply } from "../../../src/channels/cli/TerminalApprovals.js"
import { pendingJson } from "../../../src/channels/http/Approvals.js"
import { AppConfig } from "../../../src/domain/AppConfig.js"
import { ApprovalRouterLive } from "../../../src/layers/approvals/ApprovalRouterLive.js"
import { ApprovalsLive } from "../../../src/layers/approvals/ApprovalsLive.js"
import { ApprovalsStoreSqlite } from "../../../src/layers/approvals/Store.js"
import { makeAuditLogMemory } from "../../../src/layers/audit/AuditLogMemory.js"
import { IdGeneratorLive } from "../../../src/layers/ids/IdGeneratorLive.js"
import { MyclawConfigFixed } from "../../../src/layers/MyclawConfigLive.js"
import { Approvals } from "../../../src/services/Approvals.js"
import { AuditLog } from "../../../src/services/AuditLog.js"
import { approvalRecords, makeRequest, Start, tempFile } from "../../layers/approvals/Harness.js"

describe("TerminalApprovals", () => {
  it("reads y/once, b [N], s; anything else denies", () => {
    const cases: ReadonlyArray<readonly [string, unknown]> = [
      ["y", { _tag: "Once" }],
      [" Once \n", { _tag: "Once" }],
      ["b", { _tag: "ForMinutes", minutes: 10 }],
      ["b 25", { _tag: "ForMinutes", minutes: 25 }],
      ["s", { _tag: "ForSession" }],
      ["", { _tag: "Deny" }],
      ["n", { _tag: "Deny" }],
      ["b 0", { _tag: "Deny" }],
      ["b 1440", { _tag: "ForMinutes", minutes: 1440 }],
      // More than a day is not a window the owner can mean: denied, as the question says.
      ["b 1441", { _tag: "Deny" }],
      ["b 999999999999999", { _tag: "Deny" }],
      ["yes please", { _tag: "Deny" }],
      ["bs", { _tag: "Deny" }]
    ]
    for (const [reply, decision] of cases) assert.deepStrictEqual(parseReply(reply), decision, JSON.stringify(reply))
  })

  it("shows action, tool, target, why, exact args, the untrusted sources, and escapes control characters", () => {
    const request = makeRequest({
      summary: "write \u001b[2Jhello",
      args: { path: "notes/todo.md", content: "line\n\u001b[1A" },
      tainted: { sources: ["web_fetch:evil.example"] }
    })
    const text = describePending({ requestId: "ar_1", nonce: "n", expiresAt: Start + 300_000, request }, Start)
    assert.include(text, "action: write \\u001b[2Jhello")
    assert.include(text, "tool:   fs_write on notes/todo.md")
    assert.include(text, "why:    side effects need approval")
    assert.include(text, `args:   ${JSON.stringify(request.args)}`)
    assert.include(text, "This follows untrusted content from: web_fetch:evil.example")
    assert.include(text, "expires in 300 s")
    assert.notInclude(text, "\u001b")
  })

  it("shows bidirectional overrides and C1 controls as escapes, in every field and in the arguments", () => {
    const request = makeRequest({
      summary: "write 9 bytes to notes/\u202Edm.txt\u202C",
      target: "notes/\u202Edm.txt",
      args: { path: "notes/\u202Edm.txt", content: "\u009b2J\u2066x\u2069\u200f" },
      tainted: { sources: ["file:\u202Eevil"] }
    })
    const text = describePending({ requestId: "ar_1", nonce: "n", expiresAt: Start + 300_000, request }, Start)
    for (const c of ["\u202E", "\u202C", "\u009b", "\u2066", "\u2069", "\u200f"]) assert.notInclude(text, c)
    assert.include(text, "action: write 9 bytes to notes/\\u202edm.txt\\u202c")
    assert.include(text, "on notes/\\u202edm.txt")
    assert.include(text, "\\u009b2J\\u2066x\\u2069\\u200f")
    assert.include(text, "untrusted content from: file:\\u202eevil")
    const json = JSON.stringify(pendingJson({ requestId: "ar_1", nonce: "n", expiresAt: Start + 300_000, request }))
    for (const c of ["\u202E", "\u009b", "\u2066"]) {
      assert.notInclude(json.replace(/"args":\{[^}]*\}/, ""), c, "only the exact args keep them")
    }
    assert.include(json, "\\\\u202edm.txt")
  })

  it("names the channel a forwarded request comes from", () => {
    const request = makeRequest({ channel: "http", requester: "http" })
    const text = describePending({ requestId: "ar_1", nonce: "n", expiresAt: Start + 60_000, request }, Start)
    assert.include(text, "  from:   http")
  })

  it.scoped("without a terminal and no answering channel nobody can answer: denied at once, audited, with the reason", () =>
    Effect.gen(function*() {
      const audit = yield* makeAuditLogMemory()
      const context = yield* Layer.build(ApprovalsLive.pipe(
        Layer.provide(ApprovalRouterLive),
        Layer.provide(ApprovalsStoreSqlite(yield* tempFile)),
        Layer.provide(Layer.succeed(AuditLog, audit)),
        Layer.provide(IdGeneratorLive),
        Layer.provide(MyclawConfigFixed(Schema.decodeUnknownSync(AppConfig)({})))
      ))
      const verdict = yield* Context.get(context, Approvals).request(makeRequest())
      assert.strictEqual(verdict.granted, false)
      assert.strictEqual(verdict.via, "no_channel")
      assert.include(verdict.reason, "nobody can answer here")
      assert.include(verdict.reason, "MYCLAW_ADMIN_TOKEN")
      const events = (yield* approvalRecords(audit)).map((record) => [record.event, record.via])
      assert.deepStrictEqual(events, [["requested", "pending"], ["verdict", "no_channel"]])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("sees a person at a terminal only when stdin and stderr are one: in a pseudo-terminal, not through pipes", () =>
    Effect.gen(function*() {
      // The built module (npm test builds first), in a process of its own: a test's own stdin is not the question.
      const built = pathToFileURL(NodePath.resolve("dist/channels/cli/TerminalApprovals.js")).href
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "myclaw-tty-"))),
        (made) => Effect.sync(() => NodeFs.rmSync(made, { recursive: true, force: true }))
      )
      const probe = NodePath.join(dir, "probe.mjs")
      NodeFs.writeFileSync(
        probe,
        `import { isInteractive } from ${JSON.stringify(built)}\nprocess.stdout.write(String(isInteractive()))\n`
      )
      const run = (file: string, args: ReadonlyArray<string>) =>
        Effect.async<string, Error>((resume) => {
          execFile(file, args, (error, stdout) => resume(error ? Effect.fail(error) : Effect.succeed(stdout.trim())))
        })
      // script(1) (util-linux, on every Debian system) runs the command on a pseudo-terminal: stdin, stdout, stderr.
      assert.strictEqual(yield* run("script", ["-qec", `node ${probe}`, "/dev/null"]), "true")
      assert.strictEqual(yield* run("node", [probe]), "false")
    }))
})
