import { Effect, Layer } from "effect"
import type { PolicyRule } from "../domain/AppConfig.js"
import { globToRegExp } from "../domain/Glob.js"
import { MyclawConfig } from "../services/MyclawConfig.js"
import { Policy, type PolicyDecision, type PolicyInput } from "../services/Policy.js"

interface CompiledRule {
  readonly rule: PolicyRule
  readonly tool: RegExp
  readonly target: RegExp | undefined
}

const compile = (rule: PolicyRule): CompiledRule => {
  const colon = rule.match.indexOf(":")
  const tool = colon === -1 ? rule.match : rule.match.slice(0, colon)
  const target = colon === -1 ? undefined : rule.match.slice(colon + 1)
  return {
    rule,
    tool: new RegExp(`^${tool.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`),
    target: target === undefined ? undefined : globToRegExp(target)
  }
}

const deny = (rule: string, reason: string): PolicyDecision => ({ verdict: "deny", rule, reason })

/** Denials no rule can lift. */
const hardDenial = ({ provenance, target, tool }: PolicyInput): PolicyDecision | undefined => {
  if (tool.targetKind === "host" && provenance.untrustedHosts.has(target) && !provenance.userMessage.includes(target)) {
    return deny("builtin:untrusted-egress", `${target} first appeared in untrusted content and you did not name it`)
  }
  if (tool.targetKind !== "path" || !tool.hasSideEffects) return undefined
  if (target.startsWith("/") || target === ".." || target.startsWith("../")) {
    return deny("builtin:outside-workspace", `${target} is outside the workspace`)
  }
  if (target === "SOUL.md") {
    return deny("builtin:constitution", "the constitution (SOUL.md) is changed only by its owner")
  }
  if (target === ".audit" || target.startsWith(".audit/")) {
    return deny("builtin:audit", "the audit log is append-only and written by myclaw alone")
  }
  if (target === ".state" || target.startsWith(".state/")) {
    return deny("builtin:state", "myclaw's own state (approvals) is not for tools to change")
  }
  return undefined
}

/**
 * Rules from the configuration, first match wins, after the built-in denials and before the defaults. In a
 * turn that carries untrusted content every side-effecting call needs a fresh approval, whatever the rules.
 */
export const makePolicy = (initial: ReadonlyArray<PolicyRule>, trusted: ReadonlyArray<string> = []) =>
  Effect.sync(() => {
    let compiled = initial.map(compile)
    const trustedGlobs = trusted.map((glob) => [glob, globToRegExp(glob)] as const)
    const decide = (input: PolicyInput): PolicyDecision => {
      const denied = hardDenial(input)
      if (denied !== undefined) return denied
      for (const { rule, target, tool } of compiled) {
        if (tool.test(input.tool.name) && (target === undefined || target.test(input.target))) {
          return {
            verdict: rule.decision,
            rule: rule.match,
            reason: rule.reason ?? `configured rule ${rule.match}`,
            forceTier: rule.forceTier
          }
        }
      }
      return input.tool.hasSideEffects
        ? { verdict: "approve_required", rule: "default:side-effects", reason: "the tool changes things" }
        : { verdict: "allow", rule: "default:read-only", reason: "the tool has no side effects" }
    }
    const evaluate = (input: PolicyInput): Effect.Effect<PolicyDecision> =>
      Effect.sync(() => {
        const decision = decide(input)
        const sources = input.provenance.untrustedSources
        if (decision.verdict === "deny" || !input.tool.hasSideEffects || sources.length === 0) return decision
        return {
          ...decision,
          verdict: "approve_required",
          reason: `${decision.reason}; it follows untrusted content from ${sources.join(", ")}`,
          taintedBy: sources
        }
      })
    const setRules = (rules: ReadonlyArray<PolicyRule>) => Effect.sync(() => void (compiled = rules.map(compile)))
    const trustedSource = (source: string) =>
      Effect.sync(() => {
        const path = /^(?:file|dir):(.*)$/.exec(source)?.[1]
        if (path === undefined || path.startsWith("/") || path === ".." || path.startsWith("../")) return undefined
        return trustedGlobs.find(([, glob]) => glob.test(path))?.[0]
      })
    return Policy.of({ evaluate, setRules, trustedSource })
  })

export const PolicyLive = Layer.effect(
  Policy,
  Effect.flatMap(MyclawConfig, ({ config }) => makePolicy(config.policy.rules, config.policy.trusted))
)
