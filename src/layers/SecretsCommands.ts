import { AuditLogFile } from "./audit/AuditLogFile.js"
import { FilesBaseLayer, FilesReadOnlyBaseLayer } from "./Base.js"
import * as Compose from "./Compose.js"
import { SecretStoreFile } from "./secrets/SecretStoreFile.js"

/** The secret store and the audit log that records its changes (`myclaw secrets set|rm`). */
export const SecretsAdminLayer = Compose.merge(SecretStoreFile, AuditLogFile).pipe(Compose.provideMerge(FilesBaseLayer))

/** The secret store of an existing workspace, read only (`myclaw secrets list`). */
export const SecretsReadLayer = SecretStoreFile.pipe(Compose.provideMerge(FilesReadOnlyBaseLayer))
