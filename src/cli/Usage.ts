import { replayUsage } from "./ReplayUsage.js"

// The usage text and the command lines that only ask for it or for the version: plain strings, so that the entry
// point answers them without loading Effect or any command.

export const usage = `Usage:
  myclaw chat "message" [--session ID] [--json]   run one turn and print the answer (or the trace as JSON)
  myclaw serve                                     start the HTTP server (what npm start runs)
  myclaw doctor                                    check the configuration and one completion per provider
  myclaw digest [today|YYYY-MM-DD] [--no-polish]   the day's digest from the audit log
  myclaw audit verify [--seed FILE]                check the audit log's chains, checkpoints and signatures
  myclaw audit resume --seed FILE                  continue a restored log whose key is gone, from the seed
  myclaw audit query [--kind K] [--since DAY|ISO] [--until DAY|ISO] [--sender S] [--limit N] [--json]
  myclaw backup [--dest DIR]                       a tar.gz of the workspace, with the retention of old ones
  myclaw budget                                    today's spend, the caps, what remains, when it resets
  myclaw budget override --until HH:MM --reason "..."   lift the hard cap until HH:MM today (audited)
  myclaw sessions list | show ID | forget ID       the sessions; one with its turns and cache share; delete
                                                   one's stored turns, summaries and plans (audited; traces stay)
  myclaw secrets set NAME                          store a secret, its value read from stdin (audited)
  myclaw secrets list                              the stored secrets: names and last change, never values
  myclaw secrets rm NAME                           remove a secret (audited)
  myclaw plans list | show ID | forget ID          the cached plans the fast path reuses
${replayUsage}
  myclaw help, <command> --help                    this text
  myclaw --version                                 the version

Environment: MYCLAW_HOME (workspace, default ./workspace), MYCLAW_CONFIG (default <workspace>/myclaw.json),
MYCLAW_HTTP_HOST (default 127.0.0.1), MYCLAW_HTTP_PORT (default 8787), MYCLAW_LOG_LEVEL (default Info),
MYCLAW_ADMIN_TOKEN (for /metrics and POST /v1/turns), MYCLAW_KEY_DIR (the audit keys, outside the workspace),
MYCLAW_SECRET_KEY or MYCLAW_SECRET_KEY_FILE (the secret store's key, 32 bytes in hex or base64; by default the
file ~/.config/myclaw/secret.key, mode 0600, outside the workspace),
OTEL_EXPORTER_OTLP_ENDPOINT (spans over OTLP/HTTP).`

/**
 * "help" or "version" when the command line asks only for that, undefined otherwise. `<command> --help` asks for
 * the usage whatever else the line says, except for trace, replay and eval, whose own parsers read their lines.
 */
export const helpOrVersion = (argv: ReadonlyArray<string>): "help" | "version" | undefined => {
  const [command, ...rest] = argv
  if (command === "trace" || command === "replay" || command === "eval") return undefined
  if (rest.includes("--help") || rest.includes("-h")) return "help"
  switch (command) {
    case "--version":
    case "-V":
    case "version":
      return "version"
    case undefined:
    case "help":
    case "--help":
    case "-h":
      return "help"
    default:
      return undefined
  }
}
