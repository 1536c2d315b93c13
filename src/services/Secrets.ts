import { Context } from "effect"
import type { Effect, Redacted } from "effect"
import type { SecretError } from "../domain/SecretError.js"

/**
 * The owner's credentials, resolved only when a tool or an MCP server runs. Every value ever resolved is
 * redacted from what goes back to the model, the trace, the logs and the audit log.
 */
export class Secrets extends Context.Tag("myclaw/Secrets")<Secrets, {
  /** The value of `name`, decrypted at execution time. */
  readonly resolve: (name: string) => Effect.Effect<Redacted.Redacted<string>, SecretError>
  /** `text` with every known secret value replaced by `[secret:NAME]`. */
  readonly redact: (text: string) => string
}>() {}
