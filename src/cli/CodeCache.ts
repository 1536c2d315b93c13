import { isAscii } from "node:buffer"
import type * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import { createRequire } from "node:module"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as NodeVm from "node:vm"

/**
 * Loads the CommonJS copy of the command line's bundle (one file per chunk, `require("./chunk.cjs")` between them)
 * with V8's code cache: each file is compiled through `vm.Script` with the bytecode a previous run of the same
 * command left, so that a start-up neither parses nor compiles again the code it ran last time. Node 20 has no
 * compile cache for ES modules, hence the CommonJS copy.
 *
 * A cache file holds the SHA-256 of the source it was made from and of V8's data, then the data. It is used only
 * when both hashes match and V8 accepts it (same V8 version and flags); anything else (missing, foreign, truncated,
 * corrupt) is a normal compile: the cache changes how fast a command starts, never what it does. Caches are written when a run
 * ends with exit code 0 and one of its files had none or had one V8 rejected, after the code ran, so that they
 * hold the functions compiled lazily too; one set per command, since each command runs other code.
 */

/** How one file was compiled. */
export type CacheOutcome = "used" | "rejected" | "missing"

export interface CodeCacheStats {
  /** The files loaded. */
  readonly files: number
  /** Compiled from their cache. */
  readonly used: number
  /** Cache present but not for this source or refused by V8: compiled normally. */
  readonly rejected: number
  /** No cache: compiled normally. */
  readonly missing: number
}

export interface BundleLoader {
  /** Loads `name` (a file of the bundle's folder) and the files it requires: its `module.exports`. */
  readonly load: (name: string) => unknown
  readonly stats: () => CodeCacheStats
  /**
   * Writes the cache of every loaded file that had none or a rejected one (and then removes the caches of files
   * the bundle no longer has): how many were written.
   */
  readonly save: () => number
}

interface Loaded {
  readonly name: string
  readonly script: NodeVm.Script
  readonly hash: Buffer
  readonly outcome: CacheOutcome
}

const hashLength = 32

// node:crypto takes milliseconds to load: required when a command runs, not for --help.
let loadedCrypto: typeof NodeCrypto | undefined
const crypto = (): typeof NodeCrypto =>
  loadedCrypto ??= createRequire(import.meta.url)("node:crypto") as typeof NodeCrypto

const sha256 = (bytes: Buffer | string): Buffer => crypto().createHash("sha256").update(bytes).digest()

/**
 * The V8 data of a cache file made from the source whose hash is `hash`: undefined when there is no file, empty
 * when it is foreign or damaged. The file is the source's hash, the data's hash, then the data: V8 checks the
 * version and flags a cache was made with, not that the data is intact (damaged data that passes its checks
 * crashes the process), so the data's hash is checked here.
 */
const readCache = (file: string, hash: Buffer): Buffer | undefined => {
  let bytes: Buffer
  try {
    bytes = NodeFs.readFileSync(file)
  } catch {
    return undefined
  }
  if (bytes.length <= 2 * hashLength || !bytes.subarray(0, hashLength).equals(hash)) return Buffer.alloc(0)
  const data = bytes.subarray(2 * hashLength)
  return sha256(data).equals(bytes.subarray(hashLength, 2 * hashLength)) ? data : Buffer.alloc(0)
}

/** Writes beside and renames: a reader sees the old file or the new one, never half of one. */
const writeAtomically = (file: string, parts: ReadonlyArray<Uint8Array>) => {
  const temporary = `${file}.${process.pid}.tmp`
  try {
    NodeFs.writeFileSync(temporary, Buffer.concat(parts))
    NodeFs.renameSync(temporary, file)
  } catch (error) {
    NodeFs.rmSync(temporary, { force: true })
    throw error
  }
}

/**
 * A loader of the CommonJS files in `dir`, their caches in `cacheDir`. Each file is one function expression,
 * `(function (exports, require, module) {...})`, as the bundle script writes them: compiled as it is read, with no
 * wrapper joined to a copy of its text. Between the files, `require("./name")`
 * loads through this loader; any other name goes to Node's require from `dir` (Node's modules, packages left out
 * of the bundle). The files see no `__filename`/`__dirname`, as in the ES module bundle they are copied from.
 */
export const bundleLoader = (dir: string, cacheDir: string): BundleLoader => {
  const nodeRequire = createRequire(NodePath.join(dir, "index.cjs"))
  const modules = new Map<string, { exports: unknown }>()
  const loaded: Array<Loaded> = []

  const requireFrom = (id: string): unknown => id.startsWith("./") ? load(id.slice(2)) : nodeRequire(id)
  const bundleRequire = Object.assign(requireFrom, { resolve: nodeRequire.resolve, cache: nodeRequire.cache })

  const load = (name: string): unknown => {
    const known = modules.get(name)
    if (known !== undefined) return known.exports
    const file = NodePath.join(dir, name)
    const bytes = NodeFs.readFileSync(file)
    const hash = sha256(bytes)
    const cachedData = readCache(NodePath.join(cacheDir, `${name}.cache`), hash)
    // Read as Latin-1 when it is ASCII (the bundle is): the same text, decoded without UTF-8's checks.
    const source = isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8")
    const script = new NodeVm.Script(source, {
      filename: file,
      ...(cachedData !== undefined && cachedData.length > 0 ? { cachedData } : {})
    })
    const outcome: CacheOutcome = cachedData === undefined
      ? "missing"
      : cachedData.length > 0 && script.cachedDataRejected === false
      ? "used"
      : "rejected"
    loaded.push({ name, script, hash, outcome })
    const module = { exports: {} as unknown }
    modules.set(name, module)
    const wrapper = script.runInThisContext() as (exports: unknown, require: unknown, module: unknown) => void
    wrapper.call(module.exports, module.exports, bundleRequire, module)
    return module.exports
  }

  const stats = (): CodeCacheStats => ({
    files: loaded.length,
    used: loaded.filter((file) => file.outcome === "used").length,
    rejected: loaded.filter((file) => file.outcome === "rejected").length,
    missing: loaded.filter((file) => file.outcome === "missing").length
  })

  const save = (): number => {
    const stale = loaded.filter((file) => file.outcome !== "used")
    if (stale.length === 0) return 0
    NodeFs.mkdirSync(cacheDir, { recursive: true })
    for (const file of stale) {
      const data = file.script.createCachedData()
      writeAtomically(NodePath.join(cacheDir, `${file.name}.cache`), [file.hash, sha256(data), data])
    }
    // The caches of files a rebuilt bundle no longer has (their names hold their content's hash) would pile up.
    for (const name of NodeFs.readdirSync(cacheDir)) {
      if (name.endsWith(".cache") && !NodeFs.existsSync(NodePath.join(dir, name.slice(0, -".cache".length)))) {
        NodeFs.rmSync(NodePath.join(cacheDir, name), { force: true })
      }
    }
    return stale.length
  }

  return { load, stats, save }
}

/**
 * Where the caches of `command` live: in MYCLAW_CODE_CACHE_DIR when set; else beside the bundle when its folder is
 * writable (a checkout, a user's own install), else in the user's cache folder (XDG_CACHE_HOME, default ~/.cache),
 * under a name made from the bundle's path. One folder per V8 version and architecture, so that two Node versions
 * on one machine do not overwrite each other's caches.
 */
export const cacheDirFor = (bundleDir: string, command: string): string => {
  const runtime = `${process.versions.v8}-${process.arch}`
  const key = /^[a-z][a-z-]{0,31}$/.test(command) ? command : "other"
  const chosen = process.env.MYCLAW_CODE_CACHE_DIR
  if (chosen !== undefined && chosen !== "") return NodePath.join(chosen, runtime, key)
  let writable = true
  try {
    NodeFs.accessSync(bundleDir, NodeFs.constants.W_OK)
  } catch {
    writable = false
  }
  if (writable) return NodePath.join(bundleDir, ".v8-cache", runtime, key)
  const userCache = process.env.XDG_CACHE_HOME !== undefined && process.env.XDG_CACHE_HOME !== ""
    ? process.env.XDG_CACHE_HOME
    : NodePath.join(NodeOs.homedir(), ".cache")
  const bundleKey = sha256(bundleDir).toString("hex").slice(0, 16)
  return NodePath.join(userCache, "myclaw", "v8-cache", bundleKey, runtime, key)
}

/**
 * Loads `entry` of the bundle in `bundleDir` for the command line `argv` with the code cache; undefined when the
 * bundle's entry is not there (the caller loads the ES modules instead). The caches are saved when the process
 * exits with code 0; MYCLAW_CODE_CACHE_DEBUG=1 reports on stderr what was used and written.
 */
export const loadWithCodeCache = (bundleDir: string, entry: string, argv: ReadonlyArray<string>): unknown => {
  if (!NodeFs.existsSync(NodePath.join(bundleDir, entry))) return undefined
  const cacheDir = cacheDirFor(bundleDir, argv[0] ?? "")
  const loader = bundleLoader(bundleDir, cacheDir)
  const debug = process.env.MYCLAW_CODE_CACHE_DEBUG === "1"
  process.once("exit", (code) => {
    let written = 0
    let failure = ""
    if (code === 0) {
      try {
        written = loader.save()
      } catch (error) {
        // A cache that cannot be written only costs the next start its speed.
        failure = ` (not written: ${error instanceof Error ? error.message : String(error)})`
      }
    }
    if (debug) {
      const { files, missing, rejected, used } = loader.stats()
      process.stderr.write(
        `myclaw: code cache ${cacheDir}: ${files} files, ${used} used, ${rejected} rejected, ${missing} missing, ${written} written${failure}\n`
      )
    }
  })
  return loader.load(entry)
}
