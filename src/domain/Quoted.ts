import { Either, Schema } from "effect"
import { onFirstCall } from "./OnFirstCall.js"

/** Text a channel quoted inside the owner's message (a forwarded message, the message a reply answers). */
export const QuotedText = Schema.Struct({
  /** Where it comes from, as a trace names the sources of untrusted content. */
  source: Schema.String,
  /** The text exactly as the message holds it. */
  text: Schema.String,
  /** Someone else's words (a forwarded message): they taint the turn from its start, as a page read would. */
  untrusted: Schema.Boolean
})
export type QuotedText = typeof QuotedText.Type

/** Where a trace records what its message quoted, so that a replay gives the turn the same input. */
export const QUOTED = "quoted"

const decodeQuoted = onFirstCall(() => Schema.decodeUnknownEither(Schema.Array(QuotedText)))

/** The quoted parts a trace recorded (none for a trace without them, or with a field of another shape). */
export const quotedOf = (metadata: Readonly<Record<string, unknown>>): ReadonlyArray<QuotedText> | undefined => {
  const recorded = metadata[QUOTED]
  if (recorded === undefined) return undefined
  const decoded = decodeQuoted(recorded)
  return Either.isRight(decoded) && decoded.right.length > 0 ? decoded.right : undefined
}

/**
 * The owner's own words in a message: without the text it quotes. A host named only in a quotation is not one the
 * owner named.
 */
export const ownWords = (message: string, quoted: ReadonlyArray<QuotedText> | undefined): string =>
  quoted === undefined ? message : quoted.reduce((text, part) => text.split(part.text).join(""), message)
