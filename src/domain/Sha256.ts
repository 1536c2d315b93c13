import { hash } from "node:crypto"

/**
 * The hex SHA-256 of a string (as UTF-8) or of bytes, in one call: no Hash object is made, which is about 2.5x
 * faster than `createHash().update().digest()` for the short texts hashed on every step.
 */
export const sha256Hex = (data: string | Uint8Array): string => hash("sha256", data, "hex")
