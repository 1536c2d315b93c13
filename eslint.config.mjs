import * as effectEslint from "@effect/eslint-plugin"
import tsParser from "@typescript-eslint/parser"

// Formatting is checked, never argued about: `npm run lint` reports, `npm run format` rewrites.
export default [
  { ignores: ["dist/**", "node_modules/**", "coverage/**", "workspace/**", "bench/results/**"] },
  {
    files: ["src/**/*.ts", "tests/**/*.ts", "vitest.config.ts"],
    languageOptions: { parser: tsParser, ecmaVersion: 2022, sourceType: "module" },
    plugins: { "@effect": effectEslint },
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }]
    }
  },
  {
    // Effect's own combinators add four or five nodes to the layer graph for each use, and every node costs the
    // start-up its memoization: the application composes its layers with src/layers/Compose.ts (one node each).
    files: ["src/**/*.ts"],
    rules: {
      "no-restricted-properties": ["error", ...["provide", "provideMerge", "merge", "mergeAll"].map((property) => ({
        object: "Layer",
        property,
        message: `use Compose.${property} (src/layers/Compose.ts): one node of the layer graph instead of several`
      }))],
      // A schema's decoder or encoder compiles its whole parser when made: at a module's top level, every command
      // would pay for it at start-up, used or not.
      "no-restricted-syntax": ["error", ...["Program > VariableDeclaration", "Program > ExportNamedDeclaration > VariableDeclaration"]
        .map((declaration) => ({
          selector: `${declaration} > VariableDeclarator > CallExpression.init[callee.object.name="Schema"]` +
            "[callee.property.name=/^(decode|encode|validate|is$|asserts)/]",
          message: "make it with onFirstCall (src/domain/OnFirstCall.ts): its parser is compiled when first used"
        }))]
    }
  }
]
