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
    const staticImports = (file: string): ReadonlyArray<string> =>
      [...NodeFs.readFileSync(file, "utf8").matchAll(/^import\b[^;]*?from\s+"([^"]+)"|^import\s+"([^"]+)"/gm)]
        .map((match) => match[1] ?? match[2] ?? "")
        .filter((specifier) => specifier.startsWith("."))
        .map((specifier) => NodePath.resolve(NodePath.dirname(file), specifier))
    /** The file and every file it imports statically, transitively. */
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
    for (const file of closure(main)) {
      // esbuild names each bundled module's source path in a comment.
      assert.notMatch(NodeFs.readFileSync(file, "utf8"), /node_modules\/(effect|@effect)\//, file)
    }
    // The check can fail: the command runner, loaded for every other command, holds them.
    const runner = NodeFs.readFileSync(main, "utf8").match(/import\("(\.\/myclaw-chunks\/Cli-[^"]+\.mjs)"\)/)
    assert.isNotNull(runner)
    const runnerFiles = closure(NodePath.resolve(NodePath.dirname(main), runner![1]!))
    assert.isTrue(
      [...runnerFiles].some((file) => /node_modules\/effect\//.test(NodeFs.readFileSync(file, "utf8")))
    )
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
