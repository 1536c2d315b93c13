/** The usage lines of the trace, replay and eval commands. */
export const replayUsage =
  `  myclaw trace list [--session ID] [--since DAY|ISO] [--limit N] [--json]   recorded turns, oldest first
  myclaw trace show ID [--json]                    one turn as a timeline: Thought, Action, decision, result, cost, time
  myclaw trace export ID > trace.json              one turn as a trace file (for replay and eval)`
