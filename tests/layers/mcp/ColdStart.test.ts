import { assert, describe, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const src = fileURLToPath(new URL("../../../src/", import.meta.url))

/** The modules a file imports at load time: static, value imports (type-only ones are erased; `import()` is lazy). */
const staticImports = (file: string): ReadonlyArray<string> => {
  const source = ts.createSourceFile(file, NodeFs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest)
  return source.statements.flatMap((statement) => {
    if (ts.isImportDeclaration(statement) && statement.importClause?.isTypeOnly !== true) {
      return [(statement.moduleSpecifier as ts.StringLiteral).text]
    }
    if (ts.isExportDeclaration(statement) && !statement.isTypeOnly && statement.moduleSpecifier !== undefined) {
      return [(statement.moduleSpecifier as ts.StringLiteral).text]
    }
    return []
  })
}

/** Every package a module loads, following relative imports through the source tree. */
const loadedPackages = (entry: string) => {
  const seen = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const specifier of staticImports(file)) {
      if (specifier.startsWith(".")) visit(NodePath.resolve(NodePath.dirname(file), specifier.replace(/\.js$/, ".ts")))
      else packages.add(specifier)
    }
  }
  visit(NodePath.join(src, entry))
  return { files: seen, packages }
}

describe("the MCP client is loaded only when a server is configured", () => {
  it("the CLI and the application graph import no part of the MCP SDK at load time", () => {
    for (const entry of ["cli/Cli.ts", "layers/Main.ts", "Myclaw.ts"]) {
      const { files, packages } = loadedPackages(entry)
      // The CLI loads each command lazily; the application graph and the library load most of the tree.
      assert.isAbove(files.size, entry === "cli/Cli.ts" ? 5 : 20, entry)
      assert.deepStrictEqual([...packages].filter((name) => name.startsWith("@modelcontextprotocol/")), [], entry)
      assert.isFalse(files.has(NodePath.join(src, "layers/mcp/McpServersLive.ts")), entry)
    }
  })

  it("while the MCP layer itself does (the check can fail)", () => {
    const { packages } = loadedPackages("layers/mcp/McpServersLive.ts")
    assert.include([...packages], "@modelcontextprotocol/sdk/client/index.js")
  })
})
