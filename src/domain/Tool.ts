import { Effect, Either, Schema } from "effect"
import type { ParseResult } from "effect"
import { messageOf, type PathEscapeError, ToolExecutionError } from "./Errors.js"
import { decodePlain, plainFieldsOf } from "./PlainStruct.js"
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
  /**
   * For a tool written as an async function (`run`): the call as that function's promise, which the registry
   * waits for under the tool timeout without a fiber of its own. `execute` is the same call as an effect.
   */
  readonly run?: ((context: ToolRunContext) => PromiseLike<ToolOutput>) | undefined
}

/** What an async-function tool's rejection (or throw) is: its failure, told with the error's message. */
export const rejectionOf = (tool: string) => (error: unknown): ToolExecutionError =>
  new ToolExecutionError({ tool, message: messageOf(error) })

/** What a tool written as an async function is given besides its arguments. */
export interface ToolRunContext {
  /**
   * Aborted when the call is no longer waited for: past the tool timeout (its reason a `TimeoutError`) or when
   * the turn is stopped (an `AbortError`). Pass it on (to `fetch`, a child process) so the work stops too.
   */
  readonly signal: AbortSignal
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
  /**
   * The shape of the JSON its `content` holds on success, when it declares one: a plan may then pass one of its
   * fields to a later step (`{{stepN.field}}`). Without it a result is `{ content, status }`, both strings.
   */
  readonly result?: Schema.Schema.AnyNoContext | undefined
  /** Bumped when its behaviour changes under the same schema: part of the catalog signature cached plans keep. */
  readonly version: string
}

export type TargetKind = "path" | "host" | "command" | "none"

interface ToolSpecFields<A, I> {
  readonly name: string
  readonly description: string
  readonly parameters: Schema.Schema<A, I, never>
  readonly jsonSchema?: Readonly<Record<string, unknown>>
  readonly hasSideEffects: boolean
  readonly external: boolean
  readonly targetKind?: TargetKind
  readonly target?: (args: A) => string
  readonly summarize?: (args: A) => string
  readonly result?: Schema.Schema.AnyNoContext
  readonly version?: string
}

/**
 * A tool: its schema and what it does, either as an effect (`execute`, failing with a `ToolExecutionError`) or
 * as an async function (`run`: its result resolved, its failure thrown or rejected, told to the model with the
 * error's message). Both are validated first, limited by `timeouts.toolMs` and have their output redacted.
 */
export type ToolSpec<A, I> =
  & ToolSpecFields<A, I>
  & (
    | {
      readonly execute: (args: A) => Effect.Effect<ToolOutput, ToolFailure>
      readonly run?: undefined
    }
    | {
      readonly run: (args: A, context: ToolRunContext) => PromiseLike<ToolOutput>
      readonly execute?: undefined
    }
  )

/** How a tool's prepared calls are made: one per tool. */
interface CallMaker<A> {
  readonly summarize: (args: A) => string
  readonly execute: (args: A) => PreparedCall["execute"]
  readonly run: ((args: A, context: ToolRunContext) => PromiseLike<ToolOutput>) | undefined
}

/**
 * A call of a tool made with `defineTool`. Its summary (read when the owner is asked to approve the call) and its
 * effect (run for a tool written as an effect; one written as an async function runs through `run`) are made the
 * first time they are read: most calls never read either, and the summary serialises the arguments. Every call
 * has the same fields (`run` undefined for an effect): one shape for the code reading them.
 */
class DefinedCall<A> implements PreparedCall {
  readonly run: PreparedCall["run"]
  private summaryMade: string | undefined = undefined
  private executeMade: PreparedCall["execute"] | undefined = undefined
  constructor(readonly args: A, readonly target: string, private readonly maker: CallMaker<A>) {
    const run = maker.run
    this.run = run === undefined ? undefined : (context) => run(args, context)
  }
  get summary(): string {
    return this.summaryMade ??= this.maker.summarize(this.args)
  }
  get execute(): PreparedCall["execute"] {
    return this.executeMade ??= this.maker.execute(this.args)
  }
}

export const defineTool = <A, I>(spec: ToolSpec<A, I>): Tool => {
  const decode = Schema.decodeUnknownEither(spec.parameters, { errors: "all", onExcessProperty: "error" })
  const target = spec.target ?? (() => "")
  const summarize = spec.summarize ?? ((args: A) => `${spec.name} ${JSON.stringify(args)}`)
  let maker: CallMaker<A>
  if (spec.run === undefined) {
    const execute = spec.execute
    maker = { summarize, execute: (args) => Effect.suspend(() => execute(args)), run: undefined }
  } else {
    const run = spec.run
    const rejected = rejectionOf(spec.name)
    maker = {
      summarize,
      execute: (args) =>
        Effect.tryPromise({
          try: (signal) => Promise.resolve(run(args, { signal })),
          catch: rejected
        }),
      run
    }
  }
  // A struct of plain fields (most tools' parameters) is checked directly when its arguments are valid; the
  // decoder, which gives the same arguments, runs for the others, and says what is wrong with invalid ones.
  const plain = plainFieldsOf(spec.parameters.ast)
  const prepare: Tool["prepare"] = (input) => {
    const checked = plain === undefined ? undefined : decodePlain(plain, input)
    return checked === undefined
      ? Either.map(decode(input), (args) => new DefinedCall(args, target(args), maker))
      // `checked` is what the decoder gives: of the struct's type, which is A.
      : Either.right(new DefinedCall(checked as A, target(checked as A), maker))
  }
  return {
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    jsonSchema: spec.jsonSchema,
    hasSideEffects: spec.hasSideEffects,
    external: spec.external,
    targetKind: spec.targetKind ?? "none",
    result: spec.result,
    version: spec.version ?? "1",
    prepare
  }
}
