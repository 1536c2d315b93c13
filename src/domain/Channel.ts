/**
 * The kind of a channel (`telegram:@alice` is `telegram`): what approvals are routed by and metrics are labelled
 * with, never the user's name (bounded cardinality, no personal data).
 */
export const channelKind = (channel: string): string => {
  const kind = channel.split(":")[0]!.toLowerCase()
  return /^[a-z][a-z0-9_-]{0,31}$/.test(kind) ? kind : "other"
}
