import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { pathToFileURL } from "node:url"

const dist = NodePath.resolve("dist")
const library = NodePath.join(dist, "Myclaw.js")

/** Every compiled module of the library (the bundled command line's own files left out). */
const compiledModules = (dir: string): ReadonlyArray<string> =>
  NodeFs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = NodePath.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name.startsWith("myclaw-") ? [] : compiledModules(path)
    return entry.name.endsWith(".js") ? [path] : []
  })

const barrelImport = /from "(effect|@effect\/(platform|platform-node|sql|sql-sqlite-node))";/

/** The files a fresh `node` process loads when it imports `entry`, seen by a module loader hook. */
const filesLoadedBy = (entry: string) =>
  Effect.gen(function*() {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "myclaw-load-"))),
      (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
    )
    const log = NodePath.join(dir, "loaded.txt")
    NodeFs.writeFileSync(
      NodePath.join(dir, "hooks.mjs"),
      `import { appendFileSync } from "node:fs"
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(log)}, url + "\\n")
  return next(url, context)
}
`
    )
    NodeFs.writeFileSync(
      NodePath.join(dir, "register.mjs"),
      `import { register } from "node:module"
register(${JSON.stringify(pathToFileURL(NodePath.join(dir, "hooks.mjs")).href)})
`
    )
    const script = `await import(${JSON.stringify(pathToFileURL(entry).href)})`
    yield* Effect.async<void, Error>((resume) => {
      execFile(
        process.execPath,
        ["--import", pathToFileURL(NodePath.join(dir, "register.mjs")).href, "--input-type=module", "-e", script],
        (error, _stdout, stderr) =>
          resume(error ? Effect.fail(new Error(`importing ${entry} failed: ${stderr}`)) : Effect.void)
      )
    })
    return NodeFs.readFileSync(log, "utf8").split("\n").filter((line) => line !== "")
  })

describe("the library's load cost", () => {
  it("every compiled module imports Effect's modules by subpath, never a package's index", () => {
    assert.isTrue(NodeFs.existsSync(library), `${library} is missing: run npm run build`)
    const modules = compiledModules(dist)
    assert.isAbove(modules.length, 100)
    for (const file of modules) {
      const source = NodeFs.readFileSync(file, "utf8")
      assert.notMatch(source, barrelImport, NodePath.relative(dist, file))
    }
    // The sources keep the idiomatic imports: the build is what rewrites them (so the check can fail).
    assert.match(NodeFs.readFileSync(NodePath.resolve("src/programs/turn/Turn.ts"), "utf8"), /from "effect"$/m)
  })

  it.scoped("importing the library loads no package index and no HTTP client (undici) until one is used", () =>
    Effect.gen(function*() {
      const loaded = yield* filesLoadedBy(library)
      const indexes = loaded.filter((url) => /node_modules\/(effect|@effect\/[a-z-]+)\/dist\/esm\/index\.js$/.test(url))
      assert.deepStrictEqual(indexes, [])
      assert.deepStrictEqual(loaded.filter((url) => url.includes("/node_modules/undici/")), [])
      // What it does load, seen by the same hook.
      assert.isTrue(loaded.some((url) => url.endsWith("/node_modules/effect/dist/esm/Effect.js")))
      assert.isTrue(loaded.some((url) => url.endsWith("/dist/programs/turn/Turn.js")))
    }))
})
