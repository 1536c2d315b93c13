import { createRequire } from "node:module"

/** The package version, read from package.json (the same relative path from src/ and dist/). */
export const version: string = (createRequire(import.meta.url)("../package.json") as { version: string }).version
