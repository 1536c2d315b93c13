#!/usr/bin/env node
import { fileURLToPath } from "node:url"
import { version } from "../Version.js"
import { runnerBundle } from "./Bundled.js"
import { loadWithCodeCache } from "./CodeCache.js"
import { helpOrVersion, usage } from "./Usage.js"

type Runner = typeof import("./Cli.js")

/**
 * The command runner: in the bundle, its CommonJS copy compiled with V8's code cache (MYCLAW_CODE_CACHE=off loads
 * the ES modules instead); else, or when the copy is missing, the ES modules.
 */
const runner = async (argv: ReadonlyArray<string>): Promise<Runner> => {
  if (runnerBundle !== undefined && process.env.MYCLAW_CODE_CACHE !== "off") {
    const dir = fileURLToPath(new URL(runnerBundle.dir, import.meta.url))
    const loaded = loadWithCodeCache(dir, runnerBundle.entry, argv) as Runner | undefined
    if (loaded !== undefined) return loaded
  }
  return import("./Cli.js")
}

// The entry point: --help and --version are answered from plain strings; every other command line loads the
// command runner (Effect, the layers) first.
const argv = process.argv.slice(2)
const quick = helpOrVersion(argv)
if (quick === "help") process.stdout.write(`${usage}\n`)
else if (quick === "version") process.stdout.write(`myclaw ${version}\n`)
else void runner(argv).then(({ main }) => main(argv))
