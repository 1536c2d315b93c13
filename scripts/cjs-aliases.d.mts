/** What `aliasImports` made of the chunks: their code, and how many uses read a local or kept the getter. */
export interface Aliased {
  readonly chunks: Map<string, string>
  readonly aliased: number
  readonly kept: number
}

/**
 * `chunks`: file name -> the CommonJS code esbuild made of an ES module chunk (`require("./<file>")` between them).
 * Uses of another chunk's final exports read a local variable set once that chunk has run.
 */
export declare function aliasImports(chunks: ReadonlyMap<string, string>): Aliased
