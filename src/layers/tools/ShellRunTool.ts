import { FileSystem } from "@effect/platform"
import { Deferred, Duration, Effect, Schema } from "effect"
import * as NodePath from "node:path"
import { ToolExecutionError } from "../../domain/Errors.js"
import { headTail } from "../../domain/HeadTail.js"
import { defineTool, type ToolOutput } from "../../domain/Tool.js"
import { Workspace } from "../../services/Workspace.js"

export interface ShellRunOptions {
  /** The default and the longest timeout a call may ask for. */
  readonly timeoutS: number
  readonly maxOutputBytes: number
}

const TOOL = "shell_run"
const SHELL = "/bin/sh"
/** How long a process group has to end after SIGTERM before SIGKILL. */
const GRACE = Duration.seconds(2)
/**
 * How long the output is read after the command ended. Its group is killed then, so its pipes close at once,
 * unless a process that left the group (`setsid`, a daemon) holds them: they are closed after this.
 */
const DRAIN = Duration.seconds(1)

/** The whole environment of a command: nothing is inherited, so no key or token of the runtime reaches it. */
const environment = (home: string): Record<string, string> => ({
  PATH: "/usr/local/bin:/usr/bin:/bin",
  HOME: home,
  LANG: "C.UTF-8"
})

interface Ended {
  readonly code: number | null
  readonly signal: string | null
  /** A process outside the command's group still held its output when the command ended. */
  readonly held: boolean
}

const killGroup = (pid: number | undefined, signal: NodeJS.Signals) => {
  if (pid === undefined) return
  try {
    process.kill(-pid, signal)
  } catch {
    // The group is already gone.
  }
}

/**
 * `shell_run`: `/bin/sh -c command` in a workspace folder, in its own process group with a minimal environment.
 * On timeout the group gets SIGTERM, then SIGKILL after a grace period (a process that ignores SIGTERM and its
 * children die too); once the shell exits, whatever it left running in its group is killed. Node's own
 * child_process is used because a detached process group is what makes the whole tree killable.
 */
export const makeShellRunTool = (options: ShellRunOptions) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const workspace = yield* Workspace

    const run = (command: string, cwd: string, timeout: Duration.Duration) =>
      Effect.gen(function*() {
        const output = headTail(options.maxOutputBytes)
        const closed = yield* Deferred.make<Ended, ToolExecutionError>()
        const exited = yield* Deferred.make<void>()
        const pipes = { held: false }
        // Node's process module loads with the first command run, not with the tool.
        const NodeChild = yield* Effect.promise(() => import("node:child_process"))
        const child = yield* Effect.acquireRelease(
          Effect.sync(() => {
            const child = NodeChild.spawn(SHELL, ["-c", command], {
              cwd,
              env: environment(workspace.root),
              detached: true,
              stdio: ["ignore", "pipe", "pipe"]
            })
            let ended: Omit<Ended, "held"> = { code: null, signal: null }
            child.stdout.on("data", output.write)
            child.stderr.on("data", output.write)
            child.on("exit", (code, signal) => {
              ended = { code, signal }
              killGroup(child.pid, "SIGKILL")
              Deferred.unsafeDone(exited, Effect.void)
            })
            child.on("close", () => Deferred.unsafeDone(closed, Effect.succeed({ ...ended, held: pipes.held })))
            child.on("error", (error) =>
              Deferred.unsafeDone(
                closed,
                Effect.fail(
                  new ToolExecutionError({ tool: TOOL, message: `could not start ${SHELL}: ${error.message}` })
                )
              ))
            return child
          }),
          (child) => Effect.sync(() => killGroup(child.pid, "SIGKILL"))
        )
        // The pipes a process outside the group still holds are closed (which ends the call) soon after the command.
        yield* Deferred.await(exited).pipe(
          Effect.zipRight(Effect.sleep(DRAIN)),
          Effect.zipRight(Effect.sync(() => {
            pipes.held = true
            child.stdout.destroy()
            child.stderr.destroy()
          })),
          Effect.forkScoped
        )
        const stop = Effect.gen(function*() {
          killGroup(child.pid, "SIGTERM")
          const ended = yield* Deferred.await(closed).pipe(Effect.timeout(GRACE), Effect.option)
          if (ended._tag === "Some") return ended.value
          killGroup(child.pid, "SIGKILL")
          return yield* Deferred.await(closed)
        })
        const finished = yield* Deferred.await(closed).pipe(Effect.timeout(timeout), Effect.option)
        const ended = finished._tag === "Some" ? finished.value : yield* stop
        return { ended, timedOut: finished._tag === "None", output: output.text() }
      }).pipe(Effect.scoped)

    return defineTool({
      name: TOOL,
      description: `Run a shell command (${SHELL} -c) in a folder of the workspace, with a minimal environment ` +
        "and a timeout. Output is capped (head and tail kept). Needs the owner's approval for each command.",
      parameters: Schema.Struct({
        command: Schema.String.pipe(Schema.minLength(1)),
        cwd: Schema.optional(Schema.String),
        timeout_s: Schema.optional(Schema.Int.pipe(Schema.between(1, options.timeoutS)))
      }),
      hasSideEffects: true,
      external: true,
      targetKind: "command",
      target: ({ command }) => command,
      summarize: ({ command, cwd, timeout_s }) =>
        `run ${JSON.stringify([SHELL, "-c", command])} in ${JSON.stringify(cwd ?? ".")} (workspace folder; timeout ${
          timeout_s ?? options.timeoutS
        } s; environment PATH, HOME, LANG only)`,
      execute: ({ command, cwd = ".", timeout_s }) =>
        Effect.gen(function*() {
          const folder = yield* workspace.resolve(cwd)
          const rel = NodePath.relative(workspace.root, folder) || "."
          const info = yield* Effect.either(fs.stat(folder))
          if (info._tag === "Left" || info.right.type !== "Directory") {
            return yield* new ToolExecutionError({ tool: TOOL, message: `${rel} is not a folder of the workspace` })
          }
          const seconds = timeout_s ?? options.timeoutS
          const { ended, output, timedOut } = yield* run(command, folder, Duration.seconds(seconds))
          return describe(command, { ended, output, timedOut, seconds })
        })
    })
  })

const describe = (
  command: string,
  outcome: {
    readonly ended: Ended
    readonly timedOut: boolean
    readonly seconds: number
    readonly output: { readonly text: string; readonly cut: number; readonly total: number }
  }
): ToolOutput => {
  const { ended, output, seconds, timedOut } = outcome
  const source = `shell:${command}`
  const how = timedOut
    ? `timed out after ${seconds} s: the command and every process ${
      ended.held ? "of its group" : "it started"
    } were killed`
    : ended.signal !== null
    ? `killed by ${ended.signal}`
    : `exit code ${ended.code}`
  // Told in the content's first line: the model reads a note only with a partial result.
  const held = ended.held
    ? `; a process it started left its process group (setsid, a daemon) and still held the output ${
      Duration.format(DRAIN)
    } later: it was not stopped, and what it writes now is not read`
    : ""
  const body = output.total === 0 ? `${how}${held}, no output` : `${how}${held}\n${output.text}`
  if (timedOut || ended.code !== 0) return { status: "failed", content: body, source }
  if (output.cut > 0) {
    const note = `output cut: ${output.cut} of ${output.total} bytes left out in the middle`
    return { status: "partial", content: body, source, note }
  }
  return { status: output.total === 0 ? "empty" : "success", content: body, source }
}
