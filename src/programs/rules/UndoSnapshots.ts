import { FileSystem } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import * as NodePath from "node:path"
import { onFirstCall } from "../../domain/OnFirstCall.js"
import { OWNER_FILE, OWNER_FOLDER } from "../../domain/OwnerOnly.js"
import { Workspace } from "../../services/Workspace.js"

/** What a file held before a turn first wrote it: `content` null when it was too large to keep. */
export const UndoSnapshot = Schema.Struct({
  path: Schema.String,
  existed: Schema.Boolean,
  content: Schema.NullOr(Schema.String)
})
export type UndoSnapshot = typeof UndoSnapshot.Type

/** Only the latest turns can be undone: the snapshots of older ones are removed. */
const KEEP_TURNS = 50

/** Larger files are not kept: their write cannot be undone, and `/undo` says so. */
const MAX_SNAPSHOT_BYTES = 1_000_000
const decodeLine = onFirstCall(() => Schema.decodeUnknownOption(Schema.parseJson(UndoSnapshot)))

const fileOf = (root: string, traceId: string) =>
  NodePath.join(root, ".state", "undo", `${traceId.replace(/[^\w.-]/g, "_")}.jsonl`)

/**
 * Keeps what a workspace file holds before a side-effecting call writes it, under the turn's trace id: what
 * `/undo` restores. Never fails the call it precedes (a snapshot that cannot be kept is logged).
 */
export const keepForUndo = Effect.fnUntraced(function*(traceId: string, target: string) {
  const workspace = yield* Workspace
  const fs = yield* FileSystem.FileSystem
  const before = yield* workspace.readOptional(target)
  const snapshot: UndoSnapshot = {
    path: target,
    existed: before !== undefined,
    content: before === undefined || Buffer.byteLength(before) > MAX_SNAPSHOT_BYTES ? null : before
  }
  const file = fileOf(workspace.root, traceId)
  const dir = NodePath.dirname(file)
  yield* fs.makeDirectory(dir, { recursive: true, mode: OWNER_FOLDER })
  const firstOfTurn = !(yield* fs.exists(file))
  // A copy of the owner's file, kept as privately as the traces whatever the file's own mode.
  yield* fs.writeFileString(file, `${JSON.stringify(snapshot)}\n`, { flag: "a", mode: OWNER_FILE })
  if (firstOfTurn) yield* prune(dir)
}, (effect, _traceId, target) =>
  Effect.catchAll(
    effect,
    (error) => Effect.logWarning(`the undo snapshot of ${target} was not kept: ${String(error)}`)
  ))

/** Removes the snapshots of all but the latest KEEP_TURNS turns. */
const prune = (dir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const names = yield* fs.readDirectory(dir)
    if (names.length <= KEEP_TURNS) return
    const dated = yield* Effect.forEach(names, (name) =>
      Effect.map(fs.stat(NodePath.join(dir, name)), (info) => ({
        name,
        at: Option.getOrElse(info.mtime, () => new Date(0)).getTime()
      })))
    const oldest = dated.sort((a, b) => a.at - b.at).slice(0, names.length - KEEP_TURNS)
    yield* Effect.forEach(oldest, ({ name }) => fs.remove(NodePath.join(dir, name)), { discard: true })
  })

/** The state before the turn of each file it wrote (the first snapshot of each path), in the order written. */
export const snapshotsOf = (traceId: string) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(fileOf(workspace.root, traceId)).pipe(Effect.orElseSucceed(() => ""))
    const first = new Map<string, UndoSnapshot>()
    for (const line of text.split("\n")) {
      const snapshot = decodeLine(line)
      if (snapshot._tag === "Some" && !first.has(snapshot.value.path)) first.set(snapshot.value.path, snapshot.value)
    }
    return [...first.values()]
  })
