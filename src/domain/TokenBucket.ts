/** A token bucket: `capacity` sends at once, refilled at `perSecond`. Pure: the caller keeps the state and the clock. */
export interface Bucket {
  readonly tokens: number
  readonly at: number
}

export interface BucketRate {
  readonly capacity: number
  readonly perSecond: number
}

/**
 * Takes one token at `now`: the new state and how long to wait first (0 when a token is there). Waiting callers
 * queue behind each other, since the state already counts the token they will use.
 */
export const takeToken = (
  bucket: Bucket | undefined,
  rate: BucketRate,
  now: number
): { readonly bucket: Bucket; readonly waitMs: number } => {
  const start = bucket ?? { tokens: rate.capacity, at: now }
  const elapsed = Math.max(0, now - start.at)
  const tokens = Math.min(rate.capacity, start.tokens + (elapsed * rate.perSecond) / 1000) - 1
  const waitMs = tokens >= 0 ? 0 : Math.ceil((-tokens * 1000) / rate.perSecond)
  return { bucket: { tokens, at: Math.max(now, start.at) }, waitMs }
}
