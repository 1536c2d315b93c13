import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { bundleLoader } from "../../src/cli/CodeCache.js"
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

/** The entry as an ES module: esbuild's entry of the chunks, the same program as `main` (its CommonJS form). */
const esmEntry = NodePath.resolve("dist/cli/myclaw.mjs")

/** esbuild's account of the bundle: each output's modules and imports. */
interface Metafile {
  readonly outputs: Readonly<
    Record<string, {
      readonly inputs: Readonly<Record<string, unknown>>
      readonly imports: ReadonlyArray<{ readonly path: string; readonly kind: string; readonly external?: boolean }>
    }>
  >
}
const metafile = (): Metafile => JSON.parse(NodeFs.readFileSync("dist/cli/myclaw-meta.json", "utf8")) as Metafile
const outputOf = (file: string) => NodePath.relative(process.cwd(), file).split(NodePath.sep).join("/")

/** The output and every output it imports statically, transitively: what loading it loads. */
const closure = (meta: Metafile, entry: string): ReadonlySet<string> => {
  const files = new Set<string>()
  const visit = (file: string) => {
    if (files.has(file)) return
    files.add(file)
    for (const imported of meta.outputs[file]?.imports ?? []) {
      if (imported.kind === "import-statement" && imported.external !== true) visit(imported.path)
    }
  }
  visit(entry)
  return files
}

/** Whether one of the outputs bundles a module of the package. */
const bundles = (meta: Metafile, files: ReadonlySet<string>, pkg: RegExp) =>
  [...files].some((file) =>
    Object.keys(meta.outputs[file]?.inputs ?? {}).some((input) => new RegExp(`node_modules/${pkg.source}/`).test(input))
  )

/** The output of the chunk whose name starts with `prefix` (esbuild adds a hash of its content). */
const chunk = (prefix: string) => {
  const name = NodeFs.readdirSync(chunksDir).find((file) => file.startsWith(`${prefix}-`))
  assert.isDefined(name, prefix)
  return outputOf(NodePath.join(chunksDir, name!))
}

/** Node's modules that loading these chunks (by name, with what they import statically) loads. */
const builtinsLoaded = (meta: Metafile, names: ReadonlyArray<string>): Array<string> => {
  const loaded = new Set(names.flatMap((name) => [...closure(meta, chunk(name))]))
  return [...loaded].flatMap((file) =>
    (meta.outputs[file]?.imports ?? [])
      .filter((imported) => imported.external === true && imported.kind !== "dynamic-import")
      .map((imported) => imported.path.replace(/^node:/, ""))
  )
}

describe("the bundled command line", () => {
  it("the build leaves the entry, as CommonJS and as an ES module, and its chunks beside the tsc output", () => {
    assert.isTrue(NodeFs.existsSync(main), `${main} is missing: run npm run build`)
    assert.isTrue(NodeFs.existsSync(esmEntry), `${esmEntry} is missing: run npm run build`)
    assert.isTrue(NodeFs.existsSync(NodePath.resolve("dist/cli/main.js")), "the tsc output stays")
    const chunks = NodeFs.readdirSync(NodePath.resolve("dist/cli/myclaw-chunks"))
    assert.isAbove(chunks.filter((name) => name.endsWith(".mjs")).length, 1)
    // Effect is inside the bundle: no import of the package's index is left.
    for (const file of [esmEntry, ...chunks.map((name) => NodePath.resolve("dist/cli/myclaw-chunks", name))]) {
      assert.notMatch(NodeFs.readFileSync(file, "utf8"), /from "effect"/, file)
    }
    // The CommonJS entry holds the entry's own code only: no package, and the ES module runner imported, not read.
    const entry = NodeFs.readFileSync(main, "utf8")
    assert.notMatch(entry, /require\("(effect|@effect)|node_modules/)
    assert.match(entry, /import\("\.\/myclaw-chunks\/Cli-[^"]+\.mjs"\)/)
  })

  it("--help and --version load no Effect: the entry's static imports hold none of its modules", () => {
    const meta = metafile()
    const entry = outputOf(esmEntry)
    assert.isFalse(bundles(meta, closure(meta, entry), /(effect|@effect)/))
    // The check can fail: the command runner, loaded for every other command, holds them.
    const runner = meta.outputs[entry]!.imports.find((imported) => /\/Cli-[^/]+\.mjs$/.test(imported.path))
    assert.strictEqual(runner?.kind, "dynamic-import")
    assert.isTrue(bundles(meta, closure(meta, runner!.path), /effect/))
  })

  it("serve loads no HTTP client (undici) before it listens; the client's own chunk holds it", () => {
    const meta = metafile()
    assert.isFalse(bundles(meta, closure(meta, chunk("Serve")), /undici/))
    assert.isTrue(bundles(meta, closure(meta, chunk("NodeHttpClient")), /undici/))
  })

  it("budget loads neither Node's process and terminal modules nor zlib: only the agent and archives need them", () => {
    const meta = metafile()
    const builtins = builtinsLoaded(meta, ["Cli", "BudgetCommand", "Base"])
    assert.includeMembers(builtins, ["fs", "path"])
    for (const heavy of ["child_process", "readline", "zlib", "dgram", "worker_threads"]) {
      assert.notInclude(builtins, heavy, heavy)
    }
  })

  it("serve loads Node's process, terminal, DNS and TLS modules only when a tool, a backup or a question needs them", () => {
    const builtins = builtinsLoaded(metafile(), ["Cli", "Serve"])
    assert.includeMembers(builtins, ["http", "fs", "crypto"])
    for (const later of ["child_process", "readline", "dns", "https", "tls"]) {
      assert.notInclude(builtins, later, later)
    }
  })

  it("serve loads the WebSocket library only for an upgrade, in a chunk of its own", () => {
    const meta = metafile()
    const serve = chunk("Serve")
    assert.isFalse(bundles(meta, closure(meta, serve), /ws/))
    const upgrade = meta.outputs[serve]!.imports.filter((imported) => imported.kind === "dynamic-import")
    assert.isTrue(upgrade.some((imported) => bundles(meta, closure(meta, imported.path), /ws/)))
  })

  it("every chunk has a CommonJS copy, the command runner's under a fixed name, the entry none", () => {
    const meta = metafile()
    const copies = NodePath.resolve("dist/cli/myclaw-cjs")
    const runner = meta.outputs[outputOf(esmEntry)]!.imports.find((imported) => imported.kind === "dynamic-import")!
    for (const chunk of NodeFs.readdirSync(chunksDir).filter((name) => name.endsWith(".mjs"))) {
      const copy = chunk === NodePath.basename(runner.path) ? "runner.cjs" : chunk.replace(/\.mjs$/, ".cjs")
      const text = NodeFs.readFileSync(NodePath.join(copies, copy), "utf8")
      assert.notMatch(text, /import\.meta|require\("[^"]*\.mjs"\)/, copy)
    }
    assert.include(NodeFs.readFileSync(NodePath.join(copies, "runner.cjs"), "utf8"), "main")
  })

  it("each CommonJS copy publishes its chunk's export object itself, marked as an ES module, not a copy of it", () => {
    const copies = NodePath.resolve("dist/cli/myclaw-cjs")
    for (const copy of NodeFs.readdirSync(copies).filter((name) => name.endsWith(".cjs"))) {
      const text = NodeFs.readFileSync(NodePath.join(copies, copy), "utf8")
      assert.notInclude(text, "__toCommonJS(", copy)
      assert.lengthOf(
        [...text.matchAll(/^module\.exports = __defProp\(\w+, "__esModule", \{ value: true \}\);$/gm)],
        1,
        copy
      )
    }
    const cacheDir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "myclaw-bundle-"))
    try {
      const runner = bundleLoader(copies, cacheDir).load("runner.cjs") as Record<string, unknown>
      assert.isTrue(runner.__esModule)
      assert.deepStrictEqual(Object.keys(runner), ["main"])
      assert.isFunction(runner.main)
    } finally {
      NodeFs.rmSync(cacheDir, { recursive: true, force: true })
    }
  })

  it("the CommonJS copies read other chunks' exports through locals set once, not through getters on every use", () => {
    const copies = NodePath.resolve("dist/cli/myclaw-cjs")
    const serve = NodeFs.readdirSync(copies).find((name) => /^Serve-[^.]+\.cjs$/.test(name))
    assert.isDefined(serve)
    for (const copy of ["runner.cjs", serve!]) {
      const text = NodeFs.readFileSync(NodePath.join(copies, copy), "utf8")
      assert.match(text, /\nvar (import_chunk_\w+)\$\$\w+ = \1\.\w+/, copy)
    }
  })

  it.effect("--version prints the package's version, from both entries and from bin/myclaw.cjs", () =>
    Effect.gen(function*() {
      const bundled = yield* myclaw(["--version"])
      assert.strictEqual(bundled.code, 0, bundled.stderr)
      assert.strictEqual(bundled.stdout, `myclaw ${packageVersion}\n`)
      const esm = yield* node(esmEntry, ["--version"])
      assert.strictEqual(esm.code, 0)
      assert.strictEqual(esm.stdout, `myclaw ${packageVersion}\n`)
      const bin = yield* node(NodePath.resolve("bin/myclaw.cjs"), ["--version"])
      assert.strictEqual(bin.code, 0)
      assert.strictEqual(bin.stdout, `myclaw ${packageVersion}\n`)
    }))

  it.effect("--help prints the usage of every command; an unknown command exits 2 with it", () =>
    Effect.gen(function*() {
      const help = yield* myclaw(["--help"])
      assert.strictEqual(help.code, 0, help.stderr)
      assert.match(help.stdout, /^Usage:/)
      assert.strictEqual((yield* node(esmEntry, ["--help"])).stdout, help.stdout, "the ES module entry's")
      for (const command of ["chat", "serve", "budget", "audit verify", "trace list", "replay", "eval"]) {
        assert.include(help.stdout, `myclaw ${command}`)
      }
      const unknown = yield* myclaw(["frobnicate"])
      assert.strictEqual(unknown.code, 2)
      assert.include(unknown.stderr, "frobnicate")
      assert.include(unknown.stderr, "Usage:")
    }))
})
