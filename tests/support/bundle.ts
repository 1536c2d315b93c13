import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

const dist = NodePath.resolve("dist")
const bundle = NodePath.join(dist, "cli", "myclaw.cjs")

/** The newest modification time of the tsc output (the bundle's own files left out). */
const newestOutput = (dir: string): number =>
  NodeFs.readdirSync(dir, { withFileTypes: true }).reduce((newest, entry) => {
    const path = NodePath.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === "myclaw-chunks" ? newest : Math.max(newest, newestOutput(path))
    return entry.name.endsWith(".js") ? Math.max(newest, NodeFs.statSync(path).mtimeMs) : newest
  }, 0)

/**
 * The CLI tests run the bundle `npm run build` makes; after a bare `tsc` it would be older than the code it
 * bundles, so it is made again first. Without a tsc output there is nothing to bundle: the CLI tests say so.
 */
export default function setup() {
  if (!NodeFs.existsSync(NodePath.join(dist, "cli", "main.js"))) return
  if (NodeFs.existsSync(bundle) && NodeFs.statSync(bundle).mtimeMs >= newestOutput(dist)) return
  execFileSync(process.execPath, [NodePath.resolve("scripts", "bundle-cli.mjs")], { stdio: "inherit" })
}
