import { Schema } from "effect"

/** A named secret could not be read, stored or decrypted; the message names the secret, never its value. */
export class SecretError extends Schema.TaggedError<SecretError>()("SecretError", {
  name: Schema.String,
  reason: Schema.Literal("Missing", "NoKey", "BadKey", "Corrupt", "Io", "InvalidName", "InvalidValue"),
  message: Schema.String
}) {}
