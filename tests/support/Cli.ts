import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

/** The built command line: the bundle `npm run build` makes of the tsc output (tests/support/bundle.ts refreshes it). */
export const main = NodePath.resolve("dist/cli/myclaw.cjs")

export interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs the built `myclaw` command (npm test builds it first) in its own workspace, `input` on its stdin. */
export const myclaw = (args: ReadonlyArray<string>, env: Record<string, string> = {}, input = "") =>
  Effect.async<Run>((resume) => {
    if (!NodeFs.existsSync(main)) throw new Error(`${main} is missing: run npm run build (npm test does)`)
    // The audit keys of each test workspace stay inside it, not in a shared folder next to it.
    const keys = env.MYCLAW_HOME === undefined ? {} : { MYCLAW_KEY_DIR: NodePath.join(env.MYCLAW_HOME, ".keys") }
    const child = execFile(
      "node",
      [main, ...args],
      // Past maxBuffer the child is killed and reported failed: a long `audit query` under load passes 1 MiB.
      { env: { ...process.env, ...keys, ...env }, maxBuffer: 256 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resume(Effect.succeed({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }))
    )
    child.stdin?.end(input)
  })

/**
 * What runs in a workspace leave next to it, named after it: the audit keys' default folder (a run without
 * MYCLAW_KEY_DIR), and the key folder and seed copy tests put beside it. Secrets: removed with the workspace.
 */
const leftoversOf = (home: string) => [
  NodePath.join(NodePath.dirname(home), ".myclaw-keys", NodePath.basename(home)),
  `${home}-keys`,
  `${home}-seed.json`
]

export const workspaceWith = (script: unknown, config: Record<string, unknown> = {}) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const home = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "myclaw-cli-"))
      NodeFs.writeFileSync(NodePath.join(home, "script.json"), JSON.stringify(script))
      NodeFs.writeFileSync(
        NodePath.join(home, "myclaw.json"),
        JSON.stringify({ tiers: { frontier: [{ provider: "scripted", script: "script.json" }] }, ...config })
      )
      return home
    }),
    (home) =>
      Effect.sync(() => {
        NodeFs.rmSync(home, { recursive: true, force: true })
        for (const left of leftoversOf(home)) NodeFs.rmSync(left, { recursive: true, force: true })
      })
  )
