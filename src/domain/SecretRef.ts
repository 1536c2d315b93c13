import { Schema } from "effect"

/** A reference to a credential of the secret store, resolved only when the process or connection that needs it starts. */
export const SecretRef = Schema.Struct({
  secret: Schema.String.pipe(Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/, {
    message: () => "expected a secret name (letters, digits and _, not starting with a digit)"
  }))
})
export type SecretRef = typeof SecretRef.Type

/** A configuration value written in the file, or the name of a secret that stands for it. */
export const ConfigValue = Schema.Union(Schema.String, SecretRef)
export type ConfigValue = typeof ConfigValue.Type
