/**
 * The process that wrote a temporary file of an atomic write (`<file>.<pid>.tmp` or `<file>.<pid>.<hex>.tmp`),
 * or undefined when the name is not one.
 */
export const tempFileWriter = (name: string): number | undefined => {
  const match = /\.(\d+)(?:\.[0-9a-f]+)?\.tmp$/.exec(name)
  if (match === null) return undefined
  const pid = Number(match[1])
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
}
