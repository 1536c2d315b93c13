import { Context } from "effect"
import type { Effect, Either } from "effect"
import type { PathEscapeError, WorkspaceError } from "../domain/Errors.js"

/** The owner's workspace folder: the only part of the file system the file tools may touch. */
export class Workspace extends Context.Tag("myclaw/Workspace")<Workspace, {
  /** Absolute, symlink-free path of the workspace. */
  readonly root: string
  /** Lexical resolution: the workspace-relative form of `path`, or an escape error. */
  readonly relative: (path: string) => Either.Either<string, PathEscapeError>
  /** Absolute path for `path`, checked against symlinks that lead outside the workspace. */
  readonly resolve: (path: string) => Effect.Effect<string, PathEscapeError>
  /** Text of a workspace file, or `undefined` when it does not exist. */
  readonly readOptional: (relativePath: string) => Effect.Effect<string | undefined, WorkspaceError>
}>() {}
