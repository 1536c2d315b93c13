/** The usage lines of the trace, replay and eval commands. */
export const replayUsage =
  `  myclaw trace list [--session ID] [--since DAY|ISO] [--limit N] [--json]   recorded turns, oldest first
  myclaw trace show ID [--json]                    one turn as a timeline: Thought, Action, decision, result, cost, time
  myclaw trace export ID > trace.json              one turn as a trace file (for replay and eval)
  myclaw replay FILE|--trace ID [--json] [--timeline] [--dry-run-tools] [--live-readonly]
                                                   run a recorded turn again; exit 0 only when identical
  myclaw eval DIR [--json] [--dry-run-tools] [--live-readonly]
                                                   replay every trace file of DIR; exit 1 if any diverges
  myclaw eval DIR --live [--config FILE] [--json]  each recorded message to the configured (or FILE's) models:
                                                   outcome, tool calls, tokens, cost and time, recorded vs live`
