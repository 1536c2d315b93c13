import { Clock, Effect } from "effect"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { OWNER_FILE, OWNER_FOLDER } from "../domain/OwnerOnly.js"
import { sha256Hex } from "../domain/Sha256.js"
import { lineDiff } from "../domain/Text.js"
import { isoAt } from "../domain/Time.js"
import type { AuditLog } from "../services/AuditLog.js"

interface Known {
  readonly hash: string
  readonly text: string
}

const sha256 = (text: string) => `sha256:${sha256Hex(text)}`

/**
 * Notices when SOUL.md (the constitution) differs from the version last seen, at start and before each turn,
 * and writes a `constitution_modified` record (hashes before and after, a diff) for each change. The last seen
 * version is kept in `<workspace>/.state/constitution.json`, so a change made while myclaw was stopped is
 * noticed at the next start; the first version ever seen is only remembered.
 */
export const makeConstitutionWatch = (root: string, audit: AuditLog["Type"]) =>
  Effect.gen(function*() {
    const stateFile = NodePath.join(root, ".state", "constitution.json")
    let known = yield* Effect.promise(async (): Promise<Known | undefined> => {
      try {
        const value: unknown = JSON.parse(await NodeFs.readFile(stateFile, "utf8"))
        const { hash, text } = value as Record<string, unknown>
        return typeof hash === "string" && typeof text === "string" ? { hash, text } : undefined
      } catch {
        return undefined
      }
    })

    const remember = (next: Known) =>
      Effect.tryPromise(async () => {
        await NodeFs.mkdir(NodePath.dirname(stateFile), { recursive: true, mode: OWNER_FOLDER })
        const temp = `${stateFile}.${process.pid}.tmp`
        await NodeFs.writeFile(temp, JSON.stringify(next), { mode: OWNER_FILE })
        await NodeFs.rename(temp, stateFile)
      }).pipe(
        Effect.tap(() => Effect.sync(() => known = next)),
        Effect.catchAll((error) => Effect.logError(`cannot remember the constitution in ${stateFile}`, error))
      )

    /** Called with SOUL.md's text whenever it may have changed; a missing file is not a version. */
    const notice = (text: string | undefined) =>
      Effect.gen(function*() {
        if (text === undefined) return
        const hash = sha256(text)
        if (known?.hash === hash) return
        if (known !== undefined) {
          const recorded = yield* audit.append({
            kind: "constitution_modified",
            at: isoAt(yield* Clock.currentTimeMillis),
            hash_before: known.hash,
            hash_after: hash,
            diff: lineDiff(known.text, text, 4000),
            notes: "SOUL.md changed outside myclaw"
          }).pipe(
            Effect.as(true),
            Effect.catchAll((error) =>
              Effect.as(Effect.logError(`the change of SOUL.md is not in the audit log: ${error.message}`), false)
            )
          )
          // Not recorded: noticed again next time.
          if (!recorded) return
          yield* Effect.logWarning(`SOUL.md (the constitution) changed: ${known.hash} -> ${hash}`)
        }
        yield* remember({ hash, text })
      })

    return { notice } as const
  })
