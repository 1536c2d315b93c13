import { Either, ParseResult, Schema } from "effect"
import { isAbsentAlternative } from "./ConfigProblems.js"
import { encodeTrace, ExecutionTrace, TRACE_FORMAT } from "./ExecutionTrace.js"
import { jsonSyntaxError, lineColumn } from "./JsonLocation.js"
import { onFirstCall } from "./OnFirstCall.js"

/**
 * A trace file that cannot be used, and where: `location` is `line:column` for a JSON problem, the field path
 * (`steps[2].tool_name`) for a schema problem, empty when the whole file is concerned.
 */
export class TraceFileError extends Schema.TaggedError<TraceFileError>()("TraceFileError", {
  file: Schema.String,
  reason: Schema.Literal("Unreadable", "Truncated", "InvalidJson", "Invalid", "UnsupportedFormat", "NotReplayable"),
  location: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

/** `file:location: message`, as a person reads it. */
export const describeTraceFileError = (error: TraceFileError): string =>
  `${error.file}${error.location === "" ? "" : `:${error.location}`}: ${error.message}`

const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key, i) => typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${String(key)}`).join("") ||
  "(the trace)"

const decodeFile = onFirstCall(() =>
  Schema.decodeUnknownEither(ExecutionTrace, { errors: "all", onExcessProperty: "error" })
)

/** A trace file's text (one trace as JSON, as `myclaw trace export` writes it) decoded, or what is wrong where. */
export const parseTraceText = (text: string, file: string): Either.Either<ExecutionTrace, TraceFileError> => {
  const fail = (reason: TraceFileError["reason"], location: string, message: string) =>
    Either.left(new TraceFileError({ file, reason, location, message }))
  if (text.trim() === "") return fail("Truncated", "", "the file is empty: expected one trace as JSON")
  const syntax = jsonSyntaxError(text)
  if (syntax !== undefined) {
    const at = lineColumn(text, syntax.offset)
    const location = `${at.line}:${at.column}`
    return syntax.offset >= text.length
      ? fail(
        "Truncated",
        location,
        `the file ends in the middle of the JSON (expected ${syntax.expected}): it is cut short`
      )
      : fail("InvalidJson", location, `not valid JSON: expected ${syntax.expected}`)
  }
  const json: unknown = JSON.parse(text)
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    return fail("Invalid", "1:1", "expected one trace (a JSON object)")
  }
  const format = (json as { format?: unknown }).format
  if (typeof format === "number" && format > TRACE_FORMAT) {
    return fail(
      "UnsupportedFormat",
      "format",
      `trace format ${format} is newer than this myclaw reads (${TRACE_FORMAT}): upgrade myclaw`
    )
  }
  const decoded = Either.mapLeft(
    decodeFile(json),
    (error) => {
      const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
      const real = issues.filter((issue) => !isAbsentAlternative(issue))
      return real.length > 0 ? real : issues
    }
  )
  if (Either.isLeft(decoded)) {
    const issues = decoded.left
    const first = issues[0]!
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? "s" : ""})` : ""
    return fail("Invalid", pathText(first.path), `not a valid trace: ${first.message}${more}`)
  }
  return Either.right(decoded.right)
}

/** A replay needs what traces record since format 1: each Thought's request fingerprint, the ids, the history. */
export const checkReplayable = (trace: ExecutionTrace, file: string): Either.Either<ExecutionTrace, TraceFileError> =>
  trace.format === undefined || trace.replay === undefined
    ? Either.left(
      new TraceFileError({
        file,
        reason: "NotReplayable",
        location: "",
        message: "this trace was recorded before traces kept what a replay needs (format 0): " +
          "`myclaw trace show` can read it, `myclaw replay` cannot"
      })
    )
    : Either.right(trace)

/** The export format: one trace as indented JSON (the same fields as a line of the trace store). */
export const exportTrace = (trace: ExecutionTrace): string => JSON.stringify(encodeTrace(trace), null, 2) + "\n"
