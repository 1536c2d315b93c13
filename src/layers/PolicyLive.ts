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

/** Writes that no rule can allow (DESIGN section 7): the constitution, the audit log, outside the workspace. */
const hardDenial = ({ target, tool }: PolicyInput): PolicyDecision | undefined => {
  if (tool.targetKind !== "path" || !tool.hasSideEffects) return undefined
  if (target.startsWith("/") || target === ".." || target.startsWith("../")) {
    return deny("builtin:outside-workspace", `${target} is outside the workspace`)
  }
  if (target === "SOUL.md") return deny("builtin:constitution", "the constitution (SOUL.md) is changed only by its owner")
  if (target === ".audit" || target.startsWith(".audit/")) {
    return deny("builtin:audit", "the audit log is append-only and written by myclaw alone")
  }
  return undefined
}

/** Rules from the configuration, first match wins, after the built-in denials and before the defaults. */
export const makePolicy = (rules: ReadonlyArray<PolicyRule>) => {
  const compiled = rules.map(compile)
  const evaluate = (input: PolicyInput): Effect.Effect<PolicyDecision> => {
    const denied = hardDenial(input)
    if (denied !== undefined) return Effect.succeed(denied)
    for (const { rule, target, tool } of compiled) {
      if (tool.test(input.tool.name) && (target === undefined || target.test(input.target))) {
        return Effect.succeed({
          verdict: rule.decision,
          rule: rule.match,
          reason: rule.reason ?? `configured rule ${rule.match}`,
          forceTier: rule.forceTier
        })
      }
    }
    return Effect.succeed(
      input.tool.hasSideEffects
        ? { verdict: "approve_required", rule: "default:side-effects", reason: "the tool changes things" }
        : { verdict: "allow", rule: "default:read-only", reason: "the tool has no side effects" }
    )
  }
  return Policy.of({ evaluate })
}

export const PolicyLive = Layer.effect(Policy, Effect.map(MyclawConfig, ({ config }) => makePolicy(config.policy.rules)))
