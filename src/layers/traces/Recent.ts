/** The last `limit` items (whole ones), oldest first; none for a limit below 1 (`slice(-0)` would give them all). */
export const lastTurns = <A>(items: ReadonlyArray<A>, limit: number): Array<A> => {
  const count = Math.floor(limit)
  return count > 0 ? items.slice(-count) : []
}
