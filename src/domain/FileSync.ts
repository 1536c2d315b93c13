import * as NodeFs from "node:fs/promises"

/**
 * fsync of a file or a folder by path (a folder is synced so that a rename or a new file in it is durable).
 * `r+` for a file that must be opened for writing on the platforms that require it.
 */
export const syncPath = async (path: string, flags: "r" | "r+" = "r"): Promise<void> => {
  const handle = await NodeFs.open(path, flags)
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
