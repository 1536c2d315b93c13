import { NodeContext } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import type { PolicyRule } from "../../../src/domain/AppConfig.js"
import { makePolicy } from "../../../src/layers/PolicyLive.js"
import { WorkspaceTemp } from "../../../src/layers/Test.js"
import { makeWebFetchTool } from "../../../src/layers/tools/WebFetchTool.js"
import type { Provenance } from "../../../src/services/Policy.js"

const webFetch = makeWebFetchTool({ allowPrivate: [], timeoutMs: 1000, maxBytes: 1000 })

const clean: Provenance = { untrustedSources: [], untrustedHosts: new Set(), userMessage: "look it up" }

const decide = (rules: ReadonlyArray<PolicyRule>, url: string, provenance: Provenance = clean) =>
  Effect.gen(function*() {
    const prepared = Either.getOrThrow(webFetch.prepare({ url }))
    const policy = yield* makePolicy(rules)
    const decision = yield* policy.evaluate({
      tool: webFetch,
      target: prepared.target,
      args: prepared.args,
      provenance
    })
    return `${decision.verdict} ${decision.rule}`
  })

const egress: ReadonlyArray<PolicyRule> = [
  { match: "web_fetch:*.wikipedia.org", decision: "allow" },
  { match: "web_fetch:example.org", decision: "allow" },
  { match: "web_fetch", decision: "deny" }
]

layer(Layer.provideMerge(WorkspaceTemp, NodeContext.layer))("web_fetch under the egress policy", (it) => {
  it.effect("host rules decide on the canonical host of the URL", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* decide(egress, "https://en.wikipedia.org/wiki/Tide"), "allow web_fetch:*.wikipedia.org")
      assert.strictEqual(yield* decide(egress, "https://EXAMPLE.org.:443/a?b"), "allow web_fetch:example.org")
      for (
        const url of [
          "https://wikipedia.org.evil.com/",
          "https://example.org.evil.com/",
          "https://evil.com/?q=example.org"
        ]
      ) {
        assert.strictEqual(yield* decide(egress, url), "deny web_fetch", url)
      }
      assert.strictEqual(yield* decide([], "https://example.org/"), "allow default:read-only")
    }))

  it.effect("after untrusted content: its hosts are refused, others asked, hosts a rule names still allowed", () =>
    Effect.gen(function*() {
      const tainted: Provenance = {
        untrustedSources: ["url:https://en.wikipedia.org/wiki/Tide"],
        untrustedHosts: new Set(["attacker.example"]),
        userMessage: "summarise the tide page"
      }
      assert.strictEqual(
        yield* decide([], "https://attacker.example/?d=secret", tainted),
        "deny builtin:untrusted-egress"
      )
      assert.strictEqual(yield* decide([], "https://other.example/", tainted), "approve_required default:read-only")
      assert.strictEqual(
        yield* decide(egress, "https://de.wikipedia.org/wiki/Gezeiten", tainted),
        "allow web_fetch:*.wikipedia.org"
      )
    }))
})
