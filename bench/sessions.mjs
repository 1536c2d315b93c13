// Sessions: what a long conversation costs and what a large history costs at start.
//  - prompt tokens of a turn late in a 30-turn session over those of a turn of a 6-turn one (target: at most
//    1.2x): the frontier prompt of turn 30 over that of turn 6, with the local-fast summary tokens of turn 30
//    beside it and the means over whole sessions, with a scripted model charging realistic token counts
//    (characters / 3.5, the stable prefix counted as cached from the second call on) and realistic messages;
//  - the share of the prompt that is the stable prefix (blocks 1-4 and the tool catalog);
//  - start-up time (the whole graph built, up to the runtime) with 100,000 stored turns vs none.
// Prints one JSON line on stdout.
import { Effect, Layer, ManagedRuntime, Logger, LogLevel } from 'effect';
import { createRequire } from 'node:module';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AgentRuntime } from '../dist/Myclaw.js';
import { LlmFunction, TestLayer } from '../dist/Testing.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');

const CHARS_PER_TOKEN = 3.5;
const tokens = (text) => Math.ceil(text.length / CHARS_PER_TOKEN);
const words = (n, seed) => Array.from({ length: n }, (_, i) => `word${(i * 7 + seed) % 97}`).join(' ');

/**
 * Runs `turns` turns of one session. Per turn: the prompt tokens of its Thought calls (the frontier prompt)
 * and of its summary calls (local-fast); and the prefix's share over the session.
 */
async function session(turns) {
  const home = await mkdtemp(path.join(os.tmpdir(), 'myclaw-bench-sessions-'));
  let calls = 0;
  let thought = 0;
  let summarised = 0;
  let prefixTokens = 0;
  let promptTokens = 0;
  const llm = LlmFunction((request) => {
    const prefix = request.system.filter((b) => b.stable).map((b) => b.text).join('') + JSON.stringify(request.tools);
    const rest = request.system.filter((b) => !b.stable).map((b) => b.text).join('') +
      request.messages.map((m) => m.content).join('');
    const input = tokens(prefix) + tokens(rest);
    const summary = request.system[0]?.name === 'summariser';
    if (summary) summarised += input;
    else thought += input;
    promptTokens += input;
    prefixTokens += tokens(prefix);
    const cached = calls++ === 0 ? 0 : tokens(prefix);
    // A summary of about 300 tokens (the summariser is asked for 200-400), an answer of about 240.
    return { text: summary ? words(150, calls) : words(120, calls), usage: { input, output: summary ? 300 : 240, cached } };
  });
  const runtime = ManagedRuntime.make(
    TestLayer({ home, llm, traceStore: 'file' }).pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.None))),
  );
  const perTurn = [];
  try {
    const agent = await runtime.runPromise(AgentRuntime);
    for (let n = 1; n <= turns; n++) {
      thought = 0;
      summarised = 0;
      await runtime.runPromise(agent.handle({ userMessage: words(40, n), sessionId: 's', channel: 'cli:bench' }));
      perTurn.push({ thought, summarised });
    }
  } finally {
    await runtime.dispose();
    await rm(home, { recursive: true, force: true });
  }
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return {
    last: perTurn.at(-1),
    meanAll: mean(perTurn.map((t) => t.thought + t.summarised)),
    prefixShare: prefixTokens / promptTokens,
  };
}

/** Milliseconds to build the graph up to the runtime on `home`. */
async function startup(home) {
  const started = performance.now();
  const runtime = ManagedRuntime.make(
    TestLayer({ home, llm: LlmFunction(() => ({ text: 'ok' })), traceStore: 'file' }).pipe(
      Layer.provide(Logger.minimumLogLevel(LogLevel.None)),
    ),
  );
  await runtime.runPromise(AgentRuntime);
  const ms = performance.now() - started;
  await runtime.dispose();
  return ms;
}

async function homeWith(turns) {
  const home = await mkdtemp(path.join(os.tmpdir(), 'myclaw-bench-start-'));
  await startup(home); // creates the workspace and the sessions database
  if (turns > 0) {
    const db = new Database(path.join(home, '.state', 'sessions.sqlite'));
    const session = db.prepare('INSERT INTO sessions (id, channel, owner, created_at, last_active_at) VALUES (?, ?, ?, ?, ?)');
    const turn = db.prepare(`INSERT INTO session_turns (session_id, seq, trace_id, user_message, final_response, at,
      prompt_tokens, cached_tokens, response_tokens, tainted_by, answered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '[]', NULL)`);
    db.transaction(() => {
      for (let s = 0; s < turns / 100; s++) {
        session.run(`s${s}`, 'cli', 'cli:bench', s, s);
        for (let n = 1; n <= 100; n++) turn.run(`s${s}`, n, `t${s}-${n}`, words(40, n), words(120, n), s, 1000, 800, 100);
      }
    })();
    db.close();
  }
  return home;
}

const long = await session(30);
const short = await session(6);
const empty = await homeWith(0);
const full = await homeWith(100_000);
const times = { empty: [], full: [] };
for (let i = 0; i < 5; i++) {
  times.empty.push(await startup(empty));
  times.full.push(await startup(full));
}
await rm(empty, { recursive: true, force: true });
await rm(full, { recursive: true, force: true });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ratio = (a, b) => Number((a / b).toFixed(3));
console.log(JSON.stringify({
  scenario: process.env.BENCH_SCENARIO ?? 'sessions',
  // What one more turn costs late in a long session and in a short one: the frontier prompt of turn 30 (summary
  // + the last 5 turns) over that of turn 6 (5 turns), and the local-fast summary call turn 30 also made.
  prompt_tokens_turn_30: long.last.thought,
  prompt_tokens_turn_6: short.last.thought,
  ratio_30_over_6: ratio(long.last.thought, short.last.thought),
  target_ratio: 1.2,
  summary_tokens_turn_30: long.last.summarised,
  ratio_30_over_6_with_summary: ratio(long.last.thought + long.last.summarised, short.last.thought),
  // Over whole sessions (turns 1-20 keep their history verbatim by rule, so a 30-turn session's mean is higher).
  mean_prompt_tokens_per_turn_30: Math.round(long.meanAll),
  mean_prompt_tokens_per_turn_6: Math.round(short.meanAll),
  prefix_share_30: Number(long.prefixShare.toFixed(3)),
  prefix_share_6: Number(short.prefixShare.toFixed(3)),
  startup_ms_0_turns: Number(median(times.empty).toFixed(1)),
  startup_ms_100000_turns: Number(median(times.full).toFixed(1)),
}));
