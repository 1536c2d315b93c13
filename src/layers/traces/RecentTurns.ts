import { Effect } from "effect"
import { createReadStream } from "node:fs"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { createInterface } from "node:readline"
import { messageOf, TraceStoreError } from "../../domain/Errors.js"
import { pastRule, pastTaint, type PastTurn } from "../../services/TraceStore.js"
import { lastTurns } from "./Recent.js"

/** Turns kept per session: more than any prompt's history block takes. */
export const KEEP_TURNS = 20
/** Sessions kept; the least recently used beyond this are forgotten. */
const MAX_SESSIONS = 10_000
/** The snapshot of the recent turns, next to the monthly files. */
export const SNAPSHOT_FILE = "recent.json"
const MONTH_FILE = /^\d{4}-\d{2}\.jsonl$/

/** The last turns of each recent session, least recently used first. */
export class RecentTurns {
  private readonly sessions = new Map<string, Array<PastTurn>>()

  add(sessionId: string, turn: PastTurn): void {
    const turns = this.sessions.get(sessionId) ?? []
    turns.push(turn)
    if (turns.length > KEEP_TURNS) turns.shift()
    this.sessions.delete(sessionId)
    this.sessions.set(sessionId, turns)
    if (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!)
  }

  get(sessionId: string, limit: number): ReadonlyArray<PastTurn> {
    return lastTurns(this.sessions.get(sessionId) ?? [], limit)
  }

  entries(): ReadonlyArray<readonly [string, ReadonlyArray<PastTurn>]> {
    return [...this.sessions]
  }
}

/**
 * What a line of a trace file contributes to the history, without decoding the whole (maybe large) trace:
 * the same fields `pastTurnOf` takes from a decoded one.
 */
const pastTurnOfLine = (line: string): { readonly sessionId: string; readonly turn: PastTurn } | undefined => {
  try {
    const value: unknown = JSON.parse(line)
    if (typeof value !== "object" || value === null) return undefined
    const { final_response, finished_at, metadata, path, session_id, user_message } = value as Record<string, unknown>
    if (typeof session_id !== "string" || typeof user_message !== "string") return undefined
    if (final_response !== null && typeof final_response !== "string") return undefined
    const taint = pastTaint(metadata, typeof finished_at === "string" ? finished_at : undefined)
    const turn = { userMessage: user_message, finalResponse: final_response, ...taint, ...pastRule(path, metadata) }
    return { sessionId: session_id, turn }
  } catch {
    return undefined
  }
}

interface Snapshot {
  /** How far each monthly file had been read into `sessions`, in bytes. */
  readonly offsets: Record<string, number>
  readonly sessions: ReadonlyArray<readonly [string, ReadonlyArray<PastTurn>]>
}

const isSnapshot = (value: unknown): value is Snapshot => {
  if (typeof value !== "object" || value === null) return false
  const { offsets, sessions } = value as Record<string, unknown>
  return typeof offsets === "object" && offsets !== null && Array.isArray(sessions) &&
    Object.values(offsets).every((offset) => Number.isSafeInteger(offset)) &&
    sessions.every((entry) => Array.isArray(entry) && typeof entry[0] === "string" && Array.isArray(entry[1]))
}

const readSnapshot = async (dir: string): Promise<Snapshot | undefined> => {
  try {
    const value: unknown = JSON.parse(await NodeFs.readFile(NodePath.join(dir, SNAPSHOT_FILE), "utf8"))
    return isSnapshot(value) ? value : undefined
  } catch {
    return undefined
  }
}

/** Streams the lines of `file` from byte `start`; returns the byte offset after the last whole line read. */
const streamLines = async (file: string, start: number, onLine: (line: string) => void): Promise<number> => {
  const stream = createReadStream(file, { start, encoding: "utf8" })
  const lines = createInterface({ input: stream, crlfDelay: Infinity })
  let offset = start
  try {
    for await (const line of lines) {
      offset += Buffer.byteLength(line) + 1
      if (line !== "") onLine(line)
    }
  } finally {
    lines.close()
    stream.destroy()
  }
  return offset
}

/**
 * The recent turns at start, without reading the history whole: the snapshot written when the store last
 * closed (or every few hundred traces), then only the lines appended to the two newest monthly files since.
 * Without a usable snapshot the two files are streamed line by line; either way memory holds only the turns.
 */
export const loadRecentTurns = (dir: string) =>
  Effect.tryPromise({
    try: async () => {
      const recent = new RecentTurns()
      const names = (await NodeFs.readdir(dir)).filter((name) => MONTH_FILE.test(name)).sort().slice(-2)
      let snapshot = await readSnapshot(dir)
      const sizes = new Map<string, number>()
      for (const name of names) sizes.set(name, (await NodeFs.stat(NodePath.join(dir, name))).size)
      // A file shorter than the snapshot says (restored, cut by hand): the snapshot cannot be trusted.
      if (snapshot !== undefined && names.some((name) => (snapshot!.offsets[name] ?? 0) > sizes.get(name)!)) {
        snapshot = undefined
      }
      for (const [sessionId, turns] of snapshot?.sessions ?? []) {
        for (const turn of turns) recent.add(sessionId, turn)
      }
      const offsets: Record<string, number> = {}
      const unreadable: Array<string> = []
      for (const name of names) {
        const file = NodePath.join(dir, name)
        let skipped = 0
        const end = await streamLines(file, snapshot?.offsets[name] ?? 0, (line) => {
          const past = pastTurnOfLine(line)
          if (past === undefined) skipped++
          else recent.add(past.sessionId, past.turn)
        })
        // A last line without its newline counted one byte too many.
        offsets[name] = Math.min(end, sizes.get(name)!)
        if (skipped > 0) unreadable.push(`${file}: ${skipped} lines are not traces and were skipped`)
      }
      return { recent, offsets, unreadable }
    },
    catch: (error) => new TraceStoreError({ path: dir, reason: "Io", message: messageOf(error), cause: error })
  }).pipe(Effect.tap(({ unreadable }) => Effect.forEach(unreadable, (line) => Effect.logWarning(line))))

/** Writes the snapshot atomically; a failure only costs the next start a longer read. */
export const saveSnapshot = (dir: string, recent: RecentTurns, offsets: ReadonlyMap<string, number>) =>
  Effect.tryPromise(async () => {
    const file = NodePath.join(dir, SNAPSHOT_FILE)
    const temp = `${file}.${process.pid}.tmp`
    const snapshot: Snapshot = { offsets: Object.fromEntries(offsets), sessions: recent.entries() }
    await NodeFs.writeFile(temp, JSON.stringify(snapshot))
    await NodeFs.rename(temp, file)
  }).pipe(Effect.catchAll((error) => Effect.logWarning(`cannot save the recent turns: ${messageOf(error.error)}`)))
