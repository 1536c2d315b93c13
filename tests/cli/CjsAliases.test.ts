import { assert, describe, it } from "@effect/vitest"
import * as esbuild from "esbuild"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { aliasImports } from "../../scripts/cjs-aliases.mjs"
import { bundleLoader } from "../../src/cli/CodeCache.js"

/**
 * ES module chunks (name -> source, importing each other as `./<name>.mjs`) converted as the build converts the
 * bundle's chunks: each to CommonJS alone, its imports made `require("./<name>.cjs")`.
 */
const commonJs = (modules: Record<string, string>): Map<string, string> =>
  new Map(
    Object.entries(modules).map(([name, source]) => {
      const { code } = esbuild.transformSync(source, { format: "cjs", platform: "node", target: "node20" })
      return [`${name}.cjs`, code.replace(/require\("\.\/([^"/]+)\.mjs"\)/g, (_, chunk) => `require("./${chunk}.cjs")`)]
    })
  )

/** Writes the copies as the build does and loads `entry` through the command line's loader: its exports. */
const load = (chunks: ReadonlyMap<string, string>, entry: string): Record<string, () => unknown> => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "myclaw-cjs-aliases-"))
  try {
    for (const [name, code] of chunks) {
      NodeFs.writeFileSync(NodePath.join(dir, name), `(function (exports, require, module) {"use strict";${code}\n})`)
    }
    return bundleLoader(dir, NodePath.join(dir, ".cache")).load(entry) as Record<string, () => unknown>
  } finally {
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}

describe("the CommonJS copies of the bundle's chunks", () => {
  it("read another chunk's final exports through locals set once it has run, with the same results", () => {
    const chunks = commonJs({
      values: "export const answer = { n: 21 }\nexport function twice(x) { return 2 * x }\nexport class Box {}",
      user: "import { answer, twice, Box } from \"./values.mjs\"\n" +
        "export const read = () => twice(answer.n) + (new Box() instanceof Box ? 0 : 1)"
    })
    const { aliased, chunks: rewritten, kept } = aliasImports(chunks)
    assert.strictEqual(kept, 0)
    assert.strictEqual(aliased, 4)
    const user = rewritten.get("user.cjs")!
    assert.match(user, /var import_values\$\$\w+ = import_values\.\w+/)
    // Each name is read once, where the alias is set; every use reads the alias.
    for (const name of ["answer", "twice", "Box"]) {
      assert.strictEqual(user.split(`import_values.${name}`).length - 1, 1, name)
    }
    assert.strictEqual(load(rewritten, "user.cjs").read!(), 42)
  })

  // A chunk whose `count` its own `bump` assigns, and a chunk that reads it after each bump.
  const counterChunks = () =>
    commonJs({
      counter: "export let count = 0\nexport const bump = () => { count += 1 }\nconst seven = 7",
      user: "import { count, bump } from \"./counter.mjs\"\nexport const after = () => { bump(); return count }"
    })
  /** The user chunk sees each bump: `count` stayed a live binding. */
  const assertLive = (chunks: ReadonlyMap<string, string>) => {
    const { after } = load(chunks, "user.cjs")
    assert.strictEqual(after!(), 1)
    assert.strictEqual(after!(), 2)
  }

  it("keep the getter of a binding its chunk assigns after it has run (a live binding)", () => {
    const { aliased, chunks: rewritten, kept } = aliasImports(counterChunks())
    assert.strictEqual(aliased, 1) // bump
    assert.strictEqual(kept, 1) // count
    assertLive(rewritten)
  })

  it("judge an export by its own binding, not by a namespace object's member of the same name", () => {
    const chunks = counterChunks()
    // A namespace object of the chunk (as esbuild makes for `import * as`) with a member named like an export.
    const namespace = "\nvar inner_exports = {};\n__export(inner_exports, { count: () => seven });"
    const { chunks: rewritten, kept } = aliasImports(
      new Map([...chunks, ["counter.cjs", chunks.get("counter.cjs")! + namespace]])
    )
    assert.strictEqual(kept, 1) // count
    assertLive(rewritten)
  })

  it("keep the getters between chunks that require each other (one has not run when the other reads it)", () => {
    const chunks = commonJs({
      first: "import { second } from \"./second.mjs\"\nexport const first = () => \"a\"\n" +
        "export const both = () => second()",
      second: "import { first } from \"./first.mjs\"\nexport const second = () => first() + \"b\""
    })
    const { aliased, chunks: rewritten, kept } = aliasImports(chunks)
    assert.strictEqual(aliased, 0)
    assert.strictEqual(kept, 2)
    assert.strictEqual(load(rewritten, "first.cjs").both!(), "ab")
  })

  it("count every require of a chunk as it runs, not only `var x = require(...)`, in finding a cycle", () => {
    // `first` requires `second` through `__toESM(require(...))` (a default import); `second` reads `first`'s
    // export while `first` has not run yet.
    const chunks = commonJs({
      first: "import second from \"./second.mjs\"\nexport const first = () => \"a\"\n" +
        "export const both = () => second()",
      second: "import { first } from \"./first.mjs\"\nexport default function () { return first() + \"b\" }"
    })
    assert.match(chunks.get("first.cjs")!, /__toESM\(require\("\.\/second\.cjs"\)\)/)
    const { aliased, chunks: rewritten } = aliasImports(chunks)
    assert.strictEqual(aliased, 0)
    assert.strictEqual(load(rewritten, "first.cjs").both!(), "ab")
  })

  it("refuse an alias whose name the chunk already uses", () => {
    const chunks = commonJs({
      values: "export const answer = 42",
      user: "import { answer } from \"./values.mjs\"\nconst import_values$$answer = 1\n" +
        "export const read = () => answer + import_values$$answer"
    })
    assert.throws(() => aliasImports(chunks), /import_values\$\$answer is already used/)
  })
})
