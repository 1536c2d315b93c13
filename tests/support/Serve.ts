import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Schema } from "effect"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import * as NodePath from "node:path"
import { ExecutionTrace } from "../../src/domain/ExecutionTrace.js"
import { main } from "./Cli.js"

export const TOKEN = "serve-support-token-4f27"

export interface Service {
  readonly child: ChildProcessWithoutNullStreams
  readonly address: string
  /** Resolves once the process has exited (killed or not). */
  readonly exited: Promise<void>
  /** The last 16 KB of what it wrote (stdout and stderr), for the message of a failed assertion. */
  readonly output: () => string
}

/**
 * `myclaw serve` on a free port, its address once it listens; SIGKILLed if still there when the scope closes.
 * Its stderr is kept so that a failed start says why.
 */
export const serve = (home: string, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn("node", [main, "serve"], {
          env: {
            ...process.env,
            MYCLAW_HOME: home,
            MYCLAW_KEY_DIR: NodePath.join(home, ".keys"),
            MYCLAW_HTTP_PORT: "0",
            MYCLAW_ADMIN_TOKEN: TOKEN,
            ...env
          },
          stdio: ["pipe", "pipe", "pipe"]
        })
      ),
      (child) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
    )
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve()
      else child.once("exit", () => resolve())
    })
    let written = ""
    const keep = (chunk: Buffer) => {
      written = (written + chunk.toString()).slice(-16_384)
    }
    child.stdout.on("data", keep)
    child.stderr.on("data", keep)
    const address = yield* Effect.async<string, Error>((resume) => {
      let seen = ""
      let errors = ""
      child.stderr.on("data", (chunk: Buffer) => {
        errors += chunk.toString()
      })
      child.stdout.on("data", (chunk: Buffer) => {
        seen += chunk.toString()
        const match = /Listening on (http:\/\/[\d.]+:\d+)/.exec(seen)
        if (match) resume(Effect.succeed(match[1]!))
      })
      child.once("exit", (code, signal) =>
        resume(Effect.fail(new Error(`myclaw serve exited (${code ?? signal}) before listening:\n${seen}${errors}`))))
    })
    return {
      child,
      address,
      exited,
      output: () =>
        written
    } satisfies Service
  })

export interface Answer {
  /** The HTTP status, or 0 when no whole answer came (the connection was cut). */
  readonly status: number
  readonly body: string
}

/**
 * POST /v1/turns on a connection of its own; a connection cut before the whole answer arrived gives status 0.
 * Not `fetch`: when the server is SIGKILLed while requests are queued on its pooled connections, Node's fetch can
 * leave them pending forever, and a crash test would wait on them instead of restarting the service.
 */
export const postTurn = (address: string, message: string): Promise<Answer> =>
  new Promise((resolve) => {
    const body = JSON.stringify({ message })
    let settled = false
    const settle = (answer: Answer) => {
      if (settled) return
      settled = true
      resolve(answer)
    }
    const cut = () => settle({ status: 0, body: "" })
    let responded = false
    const request = NodeHttp.request(`${address}/v1/turns`, {
      method: "POST",
      agent: false,
      headers: {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        authorization: `Bearer ${TOKEN}`
      }
    }, (response) => {
      responded = true
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => settle({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
      response.on("error", cut)
      response.on("close", () => {
        if (!response.complete) cut()
      })
    })
    request.on("error", cut)
    request.on("close", () => {
      if (!responded) cut()
    })
    request.end(body)
  })

const decodeTrace = Schema.decodeUnknownSync(ExecutionTrace)

export interface TraceFiles {
  /** How many times each trace id occurs in the monthly files; every line decoded as a whole trace. */
  readonly counts: ReadonlyMap<string, number>
  /** The text of the quarantined torn tails, and of a last line still without its newline (not yet repaired). */
  readonly torn: string
}

/**
 * Reads every monthly trace file; a line that does not decode as a trace throws, naming the file and line. A
 * last line without its newline is a write cut short, repaired by the next writer: it is counted as torn.
 */
export const readTraceFiles = (home: string): TraceFiles => traceFilesReader(home)()

/**
 * `readTraceFiles` for a folder read again and again (after every cycle of a crash test): each call decodes only
 * the whole lines written since the previous one. A trace file only grows, or loses a torn last line that the
 * next writer moves aside, so what lies before the last newline already read stays as it was; a file shorter
 * than that throws, naming it.
 */
export const traceFilesReader = (home: string): () => TraceFiles => {
  const dir = NodePath.join(home, ".audit", "traces")
  const counts = new Map<string, number>()
  /** Per file: the bytes of whole lines already decoded, and how many lines that is. */
  const read = new Map<string, { readonly bytes: number; readonly lines: number }>()
  return () => {
    let torn = ""
    if (!NodeFs.existsSync(dir)) return { counts: new Map(counts), torn }
    for (const name of NodeFs.readdirSync(dir).sort()) {
      const file = NodePath.join(dir, name)
      if (name.endsWith(".jsonl.torn")) {
        torn += NodeFs.readFileSync(file, "utf8")
        continue
      }
      if (!name.endsWith(".jsonl")) continue
      const before = read.get(file) ?? { bytes: 0, lines: 0 }
      const bytes = NodeFs.readFileSync(file)
      if (bytes.length < before.bytes) {
        throw new Error(`${file}: ${bytes.length} bytes, but ${before.bytes} bytes of whole lines were read before`)
      }
      const fresh = bytes.subarray(before.bytes)
      const cut = fresh.lastIndexOf(0x0a) + 1
      torn += fresh.subarray(cut).toString("utf8")
      const lines = fresh.subarray(0, cut).toString("utf8").split("\n")
      lines.forEach((line, i) => {
        if (line === "") return
        let trace: ExecutionTrace
        try {
          trace = decodeTrace(JSON.parse(line))
        } catch (error) {
          throw new Error(`${file}:${before.lines + i + 1}: not a whole trace (${String(error).slice(0, 200)})`)
        }
        counts.set(trace.trace_id, (counts.get(trace.trace_id) ?? 0) + 1)
      })
      read.set(file, { bytes: before.bytes + cut, lines: before.lines + lines.length - 1 })
    }
    return { counts: new Map(counts), torn }
  }
}

/**
 * How many times each trace id has a `trace` record in the audit log's monthly files. A file that does not end with
 * a newline ends with the part of a line a killed writer had written (its next start moves it aside): that part is
 * not a record; every other line must be one.
 */
export const auditTraceCounts = (home: string): ReadonlyMap<string, number> => {
  const dir = NodePath.join(home, ".audit")
  const counts = new Map<string, number>()
  for (const name of NodeFs.readdirSync(dir).filter((n) => /^\d{4}-\d{2}\.jsonl$/.test(n))) {
    const lines = NodeFs.readFileSync(NodePath.join(dir, name), "utf8").split("\n")
    // The last element is what follows the last newline: empty, or a torn tail.
    lines.pop()
    for (const line of lines) {
      if (line === "") continue
      const record = JSON.parse(line) as { readonly kind?: unknown; readonly trace_id?: unknown }
      if (record.kind === "trace" && typeof record.trace_id === "string") {
        counts.set(record.trace_id, (counts.get(record.trace_id) ?? 0) + 1)
      }
    }
  }
  return counts
}

/** What the budget store holds: the spend of every day and the reservations still open, in EUR. */
/** How many times each trace is a turn of its session in `<home>/.state/sessions.sqlite`. */
export const sessionTraceCounts = (home: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ trace_id: string; n: number }>`SELECT trace_id, count(*) AS n FROM session_turns
      GROUP BY trace_id`
    return new Map(rows.map((row) => [row.trace_id, row.n]))
  }).pipe(
    Effect.provide(SqliteClient.layer({ filename: NodePath.join(home, ".state", "sessions.sqlite") })),
    Effect.scoped,
    Effect.orDie
  )

export const budgetTotals = (home: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const spent = yield* sql<{ total: number | null }>`SELECT SUM(spent_eur) AS total FROM budget_days`
    const reserved = yield* sql<{ total: number | null }>`SELECT SUM(eur) AS total FROM budget_reservations`
    return { spentEur: spent[0]?.total ?? 0, reservedEur: reserved[0]?.total ?? 0 }
  }).pipe(
    Effect.provide(
      SqliteClient.layer({ filename: NodePath.join(home, ".state", "budget.sqlite"), disableWAL: true })
    ),
    Effect.scoped,
    Effect.orDie
  )
