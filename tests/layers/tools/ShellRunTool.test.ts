import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Logger, LogLevel } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { ToolOutput } from "../../../src/domain/Tool.js"
import { WorkspaceTemp } from "../../../src/layers/Test.js"
import { makeShellRunTool } from "../../../src/layers/tools/ShellRunTool.js"
import { Workspace } from "../../../src/services/Workspace.js"

const Env = Layer.provideMerge(WorkspaceTemp, NodeContext.layer).pipe(
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

const shell = (args: unknown, maxOutputBytes = 64 * 1024) =>
  Effect.gen(function*() {
    const tool = yield* makeShellRunTool({ timeoutS: 60, maxOutputBytes })
    const prepared = Either.getOrThrow(tool.prepare(args))
    return yield* Effect.either(prepared.execute)
  })

const output = (result: Either.Either<ToolOutput, { readonly message: string }>): ToolOutput =>
  Either.getOrElse(result, (error) => ({ status: "failed", content: `error: ${error.message}` }))

/** A process that no longer runs (gone, or a zombie waiting for its parent). */
const dead = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return true
  }
  try {
    return /^\d+ \(.*\) Z/.test(NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return true
  }
}

describe("shell_run", () => {
  it.live(
    "on timeout the whole process group dies: a shell that ignores SIGTERM, its children, grandchildren",
    () =>
      Effect.gen(function*() {
        const command = `trap "" TERM; echo $$; sleep 1000 & echo $!; ` +
          `sh -c 'sleep 1000 & echo $!; sleep 1000' & echo $!; wait`
        const out = output(yield* shell({ command, timeout_s: 1 }))
        assert.strictEqual(out.status, "failed")
        assert.match(out.content, /^timed out after 1 s: the command and every process it started were killed\n/)
        const pids = out.content.split("\n").slice(1).filter((line) => /^\d+$/.test(line)).map(Number)
        assert.lengthOf(pids, 4, out.content)
        for (const pid of pids) assert.isTrue(dead(pid), `process ${pid} still runs`)
      }).pipe(Effect.provide(Env)),
    20_000
  )

  it.live(
    "a process that leaves the group (setsid) and keeps the output open does not hold the call until its timeout",
    () =>
      Effect.gen(function*() {
        // setsid, not a group leader here, makes its session in place ($! is the process that escapes); the shell
        // ends only once the marker says it has left the group (else the group's kill could still reach it).
        const command = "setsid sh -c 'touch escaped; exec sleep 30' & " +
          "while [ ! -e escaped ]; do sleep 0.01; done; echo $!; echo started"
        const call = yield* shell({ command, timeout_s: 60 }).pipe(
          Effect.timeoutFail({ duration: "12 seconds", onTimeout: () => "the call did not end when the command did" })
        )
        const out = output(call)
        const escaped = Number(out.content.split("\n")[1])
        try {
          assert.strictEqual(out.status, "success", out.content)
          assert.match(
            out.content,
            /^exit code 0; a process it started left its process group \(setsid, a daemon\) and still held the output 1s later: it was not stopped, and what it writes now is not read\n\d+\nstarted\n$/
          )
          assert.isFalse(dead(escaped), "a process outside the group is not the tool's to kill")
        } finally {
          if (escaped > 0) process.kill(escaped, "SIGKILL")
        }
      }).pipe(Effect.provide(Env)),
    20_000
  )

  it.live("its environment holds no inherited variable: no API key, HOME is the workspace", () =>
    Effect.gen(function*() {
      const saved = process.env.OPENAI_API_KEY
      process.env.OPENAI_API_KEY = "sk-canary-7f3a"
      const out = yield* Effect.ensuring(
        Effect.map(shell({ command: "env" }), output),
        Effect.sync(() => {
          if (saved === undefined) delete process.env.OPENAI_API_KEY
          else process.env.OPENAI_API_KEY = saved
        })
      )
      assert.strictEqual(out.status, "success")
      assert.notInclude(out.content, "OPENAI_API_KEY")
      assert.notInclude(out.content, "sk-canary-7f3a")
      const names = out.content.split("\n").slice(1).map((line) => line.split("=")[0]).filter((name) =>
        name !== "PWD" && name !== ""
      )
      assert.deepStrictEqual(names.sort(), ["HOME", "LANG", "PATH"])
    }).pipe(Effect.provide(Env)))

  it.live("runs in a folder of the workspace, never outside it", () =>
    Effect.gen(function*() {
      const { root } = yield* Workspace
      NodeFs.mkdirSync(NodePath.join(root, "sub"))
      const inside = output(yield* shell({ command: "pwd; echo $HOME", cwd: "sub" }))
      assert.deepStrictEqual(inside, {
        status: "success",
        content: `exit code 0\n${NodePath.join(root, "sub")}\n${root}\n`,
        source: "shell:pwd; echo $HOME"
      })
      for (const cwd of ["..", "/tmp", "missing"]) {
        const outside = yield* shell({ command: "touch escaped", cwd })
        assert.isTrue(Either.isLeft(outside), cwd)
      }
    }).pipe(Effect.provide(Env)))

  it.live("output beyond the cap keeps its head and tail, with a note; a failing command is `failed` with output", () =>
    Effect.gen(function*() {
      const long = output(yield* shell({ command: "echo first; seq 1 100000; echo last" }, 2000))
      assert.strictEqual(long.status, "partial")
      assert.match(long.note ?? "", /^output cut: \d+ of \d+ bytes left out in the middle$/)
      assert.match(long.content, /^exit code 0\nfirst\n1\n2\n/)
      assert.match(long.content, /\n\[\.\.\. .* of output cut \.\.\.\]\n/)
      assert.match(long.content, /100000\nlast\n$/)
      assert.isBelow(Buffer.byteLength(long.content), 2200)

      const failing = output(yield* shell({ command: "echo partial work; exit 3" }))
      assert.deepStrictEqual(failing, {
        status: "failed",
        content: "exit code 3\npartial work\n",
        source: "shell:echo partial work; exit 3"
      })
      assert.strictEqual(output(yield* shell({ command: "true" })).status, "empty")
    }).pipe(Effect.provide(Env)))

  it.effect("the approval summary (dry run) shows the exact argv and folder", () =>
    Effect.gen(function*() {
      const tool = yield* makeShellRunTool({ timeoutS: 60, maxOutputBytes: 1000 })
      const prepared = Either.getOrThrow(tool.prepare({ command: "git log -1 \"--format=%s\"", cwd: "repo" }))
      assert.strictEqual(prepared.target, "git log -1 \"--format=%s\"")
      assert.strictEqual(
        prepared.summary,
        "run [\"/bin/sh\",\"-c\",\"git log -1 \\\"--format=%s\\\"\"] in \"repo\" " +
          "(workspace folder; timeout 60 s; environment PATH, HOME, LANG only)"
      )
      assert.isTrue(Either.isLeft(tool.prepare({ command: "sleep 5", timeout_s: 61 })))
      assert.isTrue(Either.isLeft(tool.prepare({ command: "" })))
    }).pipe(Effect.provide(Env)))
})
