import { Context } from "effect"
import type { AppConfig } from "../domain/AppConfig.js"

/** The decoded configuration file, and where it came from. */
export class MyclawConfig extends Context.Tag("myclaw/MyclawConfig")<MyclawConfig, {
  readonly config: AppConfig
  /** Absolute path of the configuration file; relative paths inside it resolve from its folder. */
  readonly file: string
  /** false when no file exists and the defaults are in force. */
  readonly loaded: boolean
}>() {}
