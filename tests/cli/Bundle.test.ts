import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { main, myclaw } from "../support/Cli.js"

const packageVersion = (JSON.parse(NodeFs.readFileSync("package.json", "utf8")) as { version: string }).version

/** `node <file> <args>`: its exit code and stdout. */
const node = (file: string, args: ReadonlyArray<string>) =>
  Effect.async<{ readonly code: number; readonly stdout: string }>((resume) => {
    execFile(
      "node",
      [file, ...args],
      (error, stdout) =>
        resume(Effect.succeed({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout }))
    )
  })

const chunksDir = NodePath.resolve("dist/cli/myclaw-chunks")

/** The bundle files `file` imports statically (import declarations, not `import()`). */
const staticImports = (file: string): ReadonlyArray<string> =>
  [...NodeFs.readFileSync(file, "utf8").matchAll(/^import\b[^;]*?from\s+"([^"]+)"|^import\s+"([^"]+)"/gm)]
    .map((match) => match[1] ?? match[2] ?? "")
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => NodePath.resolve(NodePath.dirname(file), specifier))

/** The file and every file it imports statically, transitively: what loading it loads. */
const closure = (entry: string): ReadonlySet<string> => {
  const files = new Set<string>()
  const visit = (file: string) => {
    if (files.has(file)) return
    files.add(file)
    staticImports(file).forEach(visit)
  }
  visit(entry)
  return files
}

/** Whether one of the files bundles a module of the package (esbuild names each module's path in a comment). */
const bundles = (files: ReadonlySet<string>, pkg: RegExp) =>
  [...files].some((file) => new RegExp(`node_modules/${pkg.source}/`).test(NodeFs.readFileSync(file, "utf8")))

describe("the bundled command line", () => {
  it("the build leaves one entry file and its chunks beside the tsc output", () => {
    assert.isTrue(NodeFs.existsSync(main), `${main} is missing: run npm run build`)
    assert.isTrue(NodeFs.existsSync(NodePath.resolve("dist/cli/main.js")), "the tsc output stays")
    const chunks = NodeFs.readdirSync(NodePath.resolve("dist/cli/myclaw-chunks"))
    assert.isAbove(chunks.filter((name) => name.endsWith(".mjs")).length, 1)
    // Effect is inside the bundle: no import of the package's index is left.
    for (const file of [main, ...chunks.map((name) => NodePath.resolve("dist/cli/myclaw-chunks", name))]) {
      assert.notMatch(NodeFs.readFileSync(file, "utf8"), /from "effect"/, file)
    }
  })

  it("--help and --version load no Effect: the entry's static imports hold none of its modules", () => {
    assert.isFalse(bundles(closure(main), /(effect|@effect)/))
    // The check can fail: the command runner, loaded for every other command, holds them.
    const runner = NodeFs.readFileSync(main, "utf8").match(/import\("(\.\/myclaw-chunks\/Cli-[^"]+\.mjs)"\)/)
    assert.isNotNull(runner)
    assert.isTrue(bundles(closure(NodePath.resolve(NodePath.dirname(main), runner![1]!)), /effect/))
  })

  it("serve loads no HTTP client (undici) before it listens; the client's own chunk holds it", () => {
    const chunk = (prefix: string) => {
      const name = NodeFs.readdirSync(chunksDir).find((file) => file.startsWith(`${prefix}-`))
      assert.isDefined(name, prefix)
      return NodePath.join(chunksDir, name!)
    }
    assert.isFalse(bundles(closure(chunk("Serve")), /undici/))
    assert.isTrue(bundles(closure(chunk("NodeHttpClient")), /undici/))
  })

  it.effect("--version prints the package's version, from the bundle and from bin/myclaw.js", () =>
    Effect.gen(function*() {
      const bundled = yield* myclaw(["--version"])
      assert.strictEqual(bundled.code, 0, bundled.stderr)
      assert.strictEqual(bundled.stdout, `myclaw ${packageVersion}\n`)
      const bin = yield* node(NodePath.resolve("bin/myclaw.js"), ["--version"])
      assert.strictEqual(bin.code, 0)
      assert.strictEqual(bin.stdout, `myclaw ${packageVersion}\n`)
    }))

  it.effect("--help prints the usage of every command; an unknown command exits 2 with it", () =>
    Effect.gen(function*() {
      const help = yield* myclaw(["--help"])
      assert.strictEqual(help.code, 0, help.stderr)
      assert.match(help.stdout, /^Usage:/)
      for (const command of ["chat", "serve", "budget", "audit verify", "trace list", "replay", "eval"]) {
        assert.include(help.stdout, `myclaw ${command}`)
      }
      const unknown = yield* myclaw(["frobnicate"])
      assert.strictEqual(unknown.code, 2)
      assert.include(unknown.stderr, "frobnicate")
      assert.include(unknown.stderr, "Usage:")
    }))
})
