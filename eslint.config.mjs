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
  }
]
