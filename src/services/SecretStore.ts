import { Context } from "effect"
import type { Effect, Redacted } from "effect"
import type { SecretError } from "../domain/SecretError.js"

export interface SecretListing {
  readonly name: string
  /** ISO 8601 UTC. */
  readonly changedAt: string
}

/** The owner's management of the secret store: names and change times are readable, values only writable. */
export class SecretStore extends Context.Tag("myclaw/SecretStore")<SecretStore, {
  /** Stores (encrypted) the value of `name`, replacing any earlier one. */
  readonly set: (name: string, value: Redacted.Redacted<string>) => Effect.Effect<"created" | "updated", SecretError>
  /** Every stored secret's name and last change, by name; no value is decrypted. */
  readonly list: Effect.Effect<ReadonlyArray<SecretListing>, SecretError>
  /** false when there was no such secret. */
  readonly remove: (name: string) => Effect.Effect<boolean, SecretError>
}>() {}
