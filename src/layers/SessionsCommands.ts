import { Layer } from "effect"
import { AuditLogFile } from "./audit/AuditLogFile.js"
import { FilesBaseLayer } from "./Base.js"
import { IdGeneratorLive } from "./ids/IdGeneratorLive.js"
import { SessionsSqlite } from "./sessions/SessionsSqlite.js"

/** The sessions and the audit log that records their deletion, for the sessions commands. */
export const SessionsCommandLayer = SessionsSqlite.pipe(
  Layer.provideMerge(Layer.merge(AuditLogFile, IdGeneratorLive)),
  Layer.provideMerge(FilesBaseLayer)
)
