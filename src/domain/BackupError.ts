import { Schema } from "effect"

/**
 * A backup could not be written, or its retention could not be applied; `path` names the file or folder.
 * `Retention`: the backup was written, removing an old one failed.
 */
export class BackupError extends Schema.TaggedError<BackupError>()("BackupError", {
  path: Schema.String,
  reason: Schema.Literal("InsideWorkspace", "Tar", "Io", "Retention"),
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}
