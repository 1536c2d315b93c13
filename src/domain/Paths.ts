import * as NodePath from "node:path"

/**
 * `path` relative to `root` when it lies inside it (`.` for the root itself), else undefined. Lexical only:
 * callers that must not be fooled by links compare resolved real paths.
 */
export const relativeInside = (root: string, path: string): string | undefined => {
  const rel = NodePath.relative(root, path)
  if (rel === "") return "."
  return rel === ".." || rel.startsWith(`..${NodePath.sep}`) || NodePath.isAbsolute(rel) ? undefined : rel
}

/** Whether `path` is `root` or lies inside it (lexically). */
export const isInside = (root: string, path: string): boolean => relativeInside(root, path) !== undefined
