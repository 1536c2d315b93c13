import { Effect, Either, Schema } from "effect"
import type { ParseResult } from "effect"
import type { PathEscapeError, ToolExecutionError } from "./Errors.js"
import type { ToolResultStatus } from "./ToolCall.js"

export type ToolFailure = ToolExecutionError | PathEscapeError

export interface ToolOutput {
  readonly status: ToolResultStatus
  readonly content: string
  readonly source?: string | undefined
  /** Why a `partial` result is incomplete (e.g. `cut at 4096 bytes`), told to the model with the result. */
  readonly note?: string | undefined
}

/** A validated call, ready to run: the decoded arguments stay inside the closure, typed. */
export interface PreparedCall {
  readonly args: unknown
  /** What the policy matches on: a workspace-relative path, a host, a command line. */
  readonly target: string
  /** One line for a human approving the call, e.g. `write 120 bytes to notes/todo.md`. */
  readonly summary: string
  readonly execute: Effect.Effect<ToolOutput, ToolFailure>
}

/** A tool of the catalog, with its parameter schema erased behind `prepare`. */
export interface Tool {
  readonly name: string
  readonly description: string
  readonly parameters: Schema.Schema.AnyNoContext
  /** The JSON Schema shown to the model when the tool brings its own (an MCP server's); else derived from `parameters`. */
  readonly jsonSchema?: Readonly<Record<string, unknown>> | undefined
  readonly hasSideEffects: boolean
  /** Its results come from outside (files, the web): they are wrapped as untrusted. */
  readonly external: boolean
  /** What its target is: a workspace path, a network host, a command line, or nothing. */
  readonly targetKind: TargetKind
  readonly prepare: (input: unknown) => Either.Either<PreparedCall, ParseResult.ParseError>
}

export type TargetKind = "path" | "host" | "command" | "none"

export interface ToolSpec<A, I> {
  readonly name: string
  readonly description: string
  readonly parameters: Schema.Schema<A, I, never>
  readonly jsonSchema?: Readonly<Record<string, unknown>>
  readonly hasSideEffects: boolean
  readonly external: boolean
  readonly targetKind?: TargetKind
  readonly execute: (args: A) => Effect.Effect<ToolOutput, ToolFailure>
  readonly target?: (args: A) => string
  readonly summarize?: (args: A) => string
}

export const defineTool = <A, I>(spec: ToolSpec<A, I>): Tool => {
  const decode = Schema.decodeUnknownEither(spec.parameters, { errors: "all", onExcessProperty: "error" })
  const target = spec.target ?? (() => "")
  const summarize = spec.summarize ?? ((args: A) => `${spec.name} ${JSON.stringify(args)}`)
  return {
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    jsonSchema: spec.jsonSchema,
    hasSideEffects: spec.hasSideEffects,
    external: spec.external,
    targetKind: spec.targetKind ?? "none",
    prepare: (input) =>
      Either.map(decode(input), (args) => ({
        args,
        target: target(args),
        summary: summarize(args),
        execute: Effect.suspend(() => spec.execute(args))
      }))
  }
}
