import { Schema } from "effect"

/** A backup could not be written, or its retention could not be applied; `path` names the file or folder. */
export class BackupError extends Schema.TaggedError<BackupError>()("BackupError", {
  path: Schema.String,
  message: Schema.String
}) {}
