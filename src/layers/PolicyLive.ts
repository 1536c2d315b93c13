import { FileSystem } from "@effect/platform"
import { Effect, Either, Layer, Option } from "effect"
import * as NodePath from "node:path"
import type { PolicyRule } from "../domain/AppConfig.js"
import { globCovers, globToRegExp } from "../domain/Glob.js"
import { canonicalHost, hostsIn } from "../domain/Hosts.js"
import { relativeInside } from "../domain/Paths.js"
import type { PolicyVerdict } from "../domain/ToolCall.js"
import { MyclawConfig } from "../services/MyclawConfig.js"
import { Policy, type PolicyDecision, type PolicyInput } from "../services/Policy.js"
import { Workspace } from "../services/Workspace.js"

interface CompiledRule {
  readonly rule: PolicyRule
  readonly tool: RegExp
  /** The target glob, matched exactly and, for paths on a case-insensitive file system, ignoring case. */
  readonly target: { readonly exact: RegExp; readonly folded: RegExp } | undefined
}

const compile = (rule: PolicyRule): CompiledRule => {
  const colon = rule.match.indexOf(":")
  const tool = colon === -1 ? rule.match : rule.match.slice(0, colon)
  const target = colon === -1 ? undefined : rule.match.slice(colon + 1)
  const exact = target === undefined ? undefined : globToRegExp(target)
  return {
    rule,
    tool: new RegExp(`^${tool.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`),
    target: exact === undefined ? undefined : { exact, folded: new RegExp(exact.source, "i") }
  }
}

/** A command is allowed without asking only by a rule that names it exactly (`shell_run:git status`). */
const namesExactly = (rule: PolicyRule, input: PolicyInput, target: string): boolean => {
  if (input.tool.targetKind !== "command") return true
  const colon = rule.match.indexOf(":")
  return colon !== -1 && rule.match.slice(colon + 1) === target
}

const deny = (rule: string, reason: string): PolicyDecision => ({ verdict: "deny", rule, reason })

const parts = (rule: PolicyRule) => {
  const colon = rule.match.indexOf(":")
  // In the tool part `*` spans the whole name; a rule without a target part matches every target.
  const tool = (colon === -1 ? rule.match : rule.match.slice(0, colon)).replaceAll("*", "**")
  return { tool, target: colon === -1 ? "**" : rule.match.slice(colon + 1) }
}

/** Rules that can never match because an earlier rule matches everything they would (first match wins). */
export const shadowedRules = (rules: ReadonlyArray<PolicyRule>) => {
  const found: Array<{ readonly index: number; readonly by: number }> = []
  rules.forEach((rule, index) => {
    const later = parts(rule)
    const by = rules.slice(0, index).findIndex((earlier) => {
      const first = parts(earlier)
      return globCovers(first.tool, later.tool) && globCovers(first.target, later.target)
    })
    if (by !== -1) found.push({ index, by })
  })
  return found
}

const warnShadowed = (rules: ReadonlyArray<PolicyRule>) =>
  Effect.forEach(shadowedRules(rules), ({ by, index }) =>
    Effect.logWarning(
      `policy rule ${index + 1} "${rules[index]!.match}" (${rules[index]!.decision}) can never match: rule ${by + 1} ` +
        `"${rules[by]!.match}" (${rules[by]!.decision}) comes first and matches everything it would; rules are ` +
        "tried in order and the first match decides, so put narrower rules first"
    ), { discard: true })

const severity: Record<PolicyVerdict, number> = { allow: 0, approve_required: 1, deny: 2 }

/** Options of the policy beyond its rules. */
export interface PolicyOptions {
  /** Globs of workspace paths whose content does not taint a turn. */
  readonly trusted?: ReadonlyArray<string>
  /** The configuration file in force (absolute): as untouchable by tools as the constitution. */
  readonly configFile?: string
  /** Whether names in the workspace ignore case; probed on the workspace when not given. */
  readonly caseInsensitive?: boolean
}

/** Where a path target really is: its workspace-relative names (as written, and resolved) and the file there. */
interface PathFacts {
  /** The target as written, then its resolved real path, both workspace-relative; one entry when they agree. */
  readonly names: ReadonlyArray<string>
  /** Set when the target leads outside the workspace (lexically or through a link). */
  readonly outside?: string
  /** The existing file at the resolved path. */
  readonly file?: { readonly dev: number; readonly ino: number; readonly nlink: number }
}

/**
 * Rules from the configuration, first match wins, after the built-in denials and before the defaults. A path
 * is judged on the name written and on the resolved real path (a link cannot carry a read or a write past a
 * rule); when the two decide differently the stricter decision stands. In a turn that carries untrusted
 * content every side-effecting call, and every call to the network, needs a fresh approval whatever the rules.
 */
export const makePolicy = (initial: ReadonlyArray<PolicyRule>, options: PolicyOptions = {}) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const workspace = yield* Workspace
    const { root } = workspace
    const foldCase = options.caseInsensitive ?? (yield* caseInsensitive(fs, root))
    const fold = (name: string) => (foldCase ? name.toLowerCase() : name)
    yield* warnShadowed(initial)
    let compiled = initial.map(compile)
    const trustedGlobs = (options.trusted ?? []).map((glob) => [glob, globToRegExp(glob)] as const)

    const identity = (path: string) =>
      fs.stat(path).pipe(
        Effect.map((info) =>
          Option.isSome(info.ino)
            ? { dev: info.dev, ino: info.ino.value, nlink: Option.getOrElse(info.nlink, () => 1) }
            : undefined
        ),
        Effect.orElseSucceed(() => undefined)
      )
    const realOf = (path: string) => fs.realPath(path).pipe(Effect.orElseSucceed(() => path))

    // The files tools never change, by identity and by name: the constitution and the configuration (the one
    // in force, and the default one at the workspace root that a start without MYCLAW_CONFIG would load).
    const configFiles = [NodePath.join(root, "myclaw.json")]
    if (options.configFile !== undefined && NodePath.isAbsolute(options.configFile)) {
      configFiles.push(options.configFile)
    }
    const protectedFiles = Effect.gen(function*() {
      const entries: Array<
        {
          readonly rule: string
          readonly reason: string
          readonly name?: string
          readonly file?: { readonly dev: number; readonly ino: number }
        }
      > = []
      const soul = NodePath.join(root, "SOUL.md")
      entries.push({ ...constitution, name: "SOUL.md", ...withFile(yield* identity(soul)) })
      for (const config of configFiles) {
        const real = yield* realOf(config)
        const name = relativeInside(root, real)
        entries.push({ ...configuration, ...(name === undefined ? {} : { name }), ...withFile(yield* identity(real)) })
      }
      return entries
    })

    const facts = (target: string) =>
      Effect.gen(function*() {
        if (NodePath.isAbsolute(target) || target === ".." || target.startsWith("../")) {
          return { names: [target], outside: `${target} is outside the workspace` } satisfies PathFacts
        }
        const resolved = yield* Effect.either(workspace.resolve(target))
        if (Either.isLeft(resolved)) {
          return { names: [target], outside: resolved.left.message } satisfies PathFacts
        }
        const real = relativeInside(root, resolved.right) ?? resolved.right
        const names = real === target ? [target] : [target, real]
        const file = yield* identity(resolved.right)
        return { names, ...(file === undefined ? {} : { file }) } satisfies PathFacts
      })

    /** The denial no rule can lift for a request to a host: one that first appeared in untrusted content. */
    const hostDenial = ({ provenance, target, tool }: PolicyInput): PolicyDecision | undefined => {
      if (tool.targetKind !== "host") return undefined
      const host = canonicalHost(target)
      if (
        host !== undefined && provenance.untrustedHosts.has(host) && !hostsIn(provenance.userMessage).includes(host)
      ) {
        return deny("builtin:untrusted-egress", `${host} first appeared in untrusted content and you did not name it`)
      }
      return undefined
    }

    /** The denials no rule can lift for a path a side-effecting tool would change. */
    const pathDenial = Effect.fnUntraced(function*(input: PolicyInput, path: PathFacts) {
      if (path.outside !== undefined) return deny("builtin:outside-workspace", path.outside)
      const names = path.names.map(fold)
      for (const entry of yield* protectedFiles) {
        const sameName = entry.name !== undefined && names.includes(fold(entry.name))
        const sameFile = entry.file !== undefined && path.file !== undefined &&
          entry.file.dev === path.file.dev && entry.file.ino === path.file.ino
        if (sameName || sameFile) return deny(entry.rule, entry.reason)
      }
      if (names.some((name) => name === ".audit" || name.startsWith(".audit/"))) {
        return deny("builtin:audit", "the audit log is append-only and written by myclaw alone")
      }
      if (names.some((name) => name === ".state" || name.startsWith(".state/"))) {
        return deny("builtin:state", "myclaw's own state (approvals) is not for tools to change")
      }
      if (path.file !== undefined && path.file.nlink > 1) {
        return deny(
          "builtin:hard-link",
          `${input.target} has ${path.file.nlink} names (hard links): a write would change the file under every name`
        )
      }
      return undefined
    })

    const matching = (input: PolicyInput, target: string) => {
      const folded = (foldCase && input.tool.targetKind === "path") || input.tool.targetKind === "host"
      return compiled.find(({ target: glob, tool }) =>
        tool.test(input.tool.name) && (glob === undefined || (folded ? glob.folded : glob.exact).test(target))
      )
    }

    const ruleFor = (input: PolicyInput, target: string): PolicyDecision => {
      const found = matching(input, target)
      if (found !== undefined && found.rule.decision === "allow" && !namesExactly(found.rule, input, target)) {
        return {
          verdict: "approve_required",
          rule: found.rule.match,
          reason: `a rule allows a command only by naming it exactly, and ${found.rule.match} does not: ask`
        }
      }
      if (found !== undefined) {
        const { rule } = found
        return {
          verdict: rule.decision,
          rule: rule.match,
          reason: rule.reason ?? `configured rule ${rule.match}`,
          forceTier: rule.forceTier
        }
      }
      return input.tool.hasSideEffects
        ? { verdict: "approve_required", rule: "default:side-effects", reason: "the tool changes things" }
        : { verdict: "allow", rule: "default:read-only", reason: "the tool has no side effects" }
    }

    /** The rules' decision on the target and on every other name it leads to: the stricter one stands. */
    const ruled = (input: PolicyInput, path: PathFacts | undefined): PolicyDecision => {
      let decision = ruleFor(input, input.target)
      const host = input.tool.targetKind === "host" ? canonicalHost(input.target) : undefined
      const others = path?.names.slice(1) ?? (host !== undefined && host !== input.target ? [host] : [])
      for (const name of others) {
        const other = ruleFor(input, name)
        if (severity[other.verdict] > severity[decision.verdict]) {
          decision = { ...other, reason: `${other.reason} (${input.target} leads to ${name})` }
        }
      }
      return decision
    }

    /**
     * A request the owner vouched for after taint: to a host they named in this turn, or one an allow rule names
     * (a catch-all rule such as `*` names no host).
     */
    const vouchedHost = (input: PolicyInput): boolean => {
      const host = canonicalHost(input.target)
      if (host === undefined) return false
      if (hostsIn(input.provenance.userMessage).includes(host)) return true
      const found = matching(input, host)
      return found !== undefined && found.rule.decision === "allow" && found.target !== undefined &&
        /[^*?.]/.test(found.rule.match.slice(found.rule.match.indexOf(":") + 1))
    }

    /** After taint, a request can carry data out in its URL: read-only or not, it needs the owner. */
    const afterTaint = (input: PolicyInput, decision: PolicyDecision): PolicyDecision => {
      const sources = input.provenance.untrustedSources
      if (decision.verdict === "deny" || sources.length === 0) return decision
      const egress = input.tool.targetKind === "host"
      if (!input.tool.hasSideEffects && (!egress || vouchedHost(input))) return decision
      return {
        ...decision,
        verdict: "approve_required",
        reason: `${decision.reason}; it follows untrusted content from ${sources.join(", ")}`,
        taintedBy: sources
      }
    }

    // Only a path needs the file system (where it leads, which file is there): a call with any other target is
    // decided in one synchronous step.
    const evaluate = (input: PolicyInput): Effect.Effect<PolicyDecision> => {
      if (input.tool.targetKind !== "path") {
        return Effect.sync(() => afterTaint(input, hostDenial(input) ?? ruled(input, undefined)))
      }
      return Effect.flatMap(facts(input.target), (path) =>
        input.tool.hasSideEffects
          ? Effect.map(pathDenial(input, path), (denied) => afterTaint(input, denied ?? ruled(input, path)))
          : Effect.sync(() => afterTaint(input, ruled(input, path))))
    }
    const setRules = (rules: ReadonlyArray<PolicyRule>) =>
      Effect.zipRight(warnShadowed(rules), Effect.sync(() => void (compiled = rules.map(compile))))
    const trustedSource = (source: string) =>
      Effect.sync(() => {
        const path = /^(?:file|dir):(.*)$/.exec(source)?.[1]
        if (path === undefined || path.startsWith("/") || path === ".." || path.startsWith("../")) return undefined
        return trustedGlobs.find(([, glob]) => (foldCase ? new RegExp(glob.source, "i") : glob).test(path))?.[0]
      })
    return Policy.of({ evaluate, setRules, trustedSource })
  })

const constitution = { rule: "builtin:constitution", reason: "the constitution (SOUL.md) is changed only by its owner" }
const configuration = {
  rule: "builtin:configuration",
  reason: "the configuration (policy, caps, where keys are sent) is changed only by its owner"
}
const withFile = (file: { readonly dev: number; readonly ino: number } | undefined) =>
  file === undefined ? {} : { file: { dev: file.dev, ino: file.ino } }

/**
 * Whether names in the workspace ignore case (macOS and Windows defaults): the `.audit` folder, which every
 * workspace has, is looked up under another case and compared by identity.
 */
const caseInsensitive = (fs: FileSystem.FileSystem, root: string) =>
  Effect.gen(function*() {
    const lower = yield* Effect.option(fs.stat(NodePath.join(root, ".audit")))
    const upper = yield* Effect.option(fs.stat(NodePath.join(root, ".AUDIT")))
    if (Option.isNone(lower) || Option.isNone(upper)) return false
    return Option.getEquivalence((a: number, b: number) => a === b)(lower.value.ino, upper.value.ino) &&
      lower.value.dev === upper.value.dev
  })

export const PolicyLive = Layer.effect(
  Policy,
  Effect.flatMap(
    MyclawConfig,
    ({ config, file }) => makePolicy(config.policy.rules, { trusted: config.policy.trusted, configFile: file })
  )
)
