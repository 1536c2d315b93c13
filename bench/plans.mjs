// Scenario "plans": the same 5-step request served by the ReAct loop and by the fast path (a cached plan), from
// ../dist (run `npm run build` first). One JSON line on stdout: per path, LLM calls, tokens and wall time per turn.
//
// The request chains five lookups (each call's key is the previous call's result) and ends with an answer. The
// scripted model charges realistic token counts: a Thought reads a 1,800-token prompt plus 250 tokens per tool
// result so far and writes 40 tokens (80 for the answer). The ReAct loop pays six frontier Thoughts; the fast
// path runs the cached plan through the same gates and pays one local-fast call to write the answer. The model
// answers at once, so the times are the runtime's own overhead (memory audit log and traces, as in the tests).
//
//   WARMUP RUNS   turns before measuring, and measured (default 20 and 200, per path)
import { Effect, Logger, LogLevel, Schema } from 'effect';
import { loadavg } from 'node:os';

const dist = new URL('../dist/', import.meta.url);
const { AgentRuntime, Tool } = await import(new URL('Myclaw.js', dist));
const { LlmFunction, TestLayer } = await import(new URL('Testing.js', dist));

const scenario = process.env.BENCH_SCENARIO || 'plans';
const WARMUP = Number(process.env.WARMUP || 20);
const RUNS = Number(process.env.RUNS || 200);
const STEPS = 5;
const REQUEST = 'follow the lookup chain from start to its end';
const log = (text) => process.stderr.write(`${scenario}: ${text}\n`);

const lookup = Tool.defineTool({
  name: 'lookup',
  description: 'The value stored under a key.',
  parameters: Schema.Struct({ key: Schema.String }),
  hasSideEffects: false,
  external: false,
  execute: ({ key }) => Effect.succeed({ status: 'success', content: `value-of-${key.length}-${key.slice(-6)}` }),
});

const calls = { frontier: 0, 'local-fast': 0 };
const model = (request) => {
  calls[request.tier] += 1;
  const results = request.messages.filter((m) => m.role === 'tool');
  const last = results.at(-1)?.content;
  const usage = { input: 1800 + 250 * results.length, output: 40 };
  if (request.tools.length === 0 || results.length >= STEPS) {
    return { text: `The chain ends at ${last}.`, usage: { ...usage, output: 80 } };
  }
  const key = results.length === 0 ? 'start' : last;
  return { toolCalls: [{ name: 'lookup', args: { key } }], usage };
};

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

const measure = (path) =>
  Effect.gen(function* () {
    const runtime = yield* AgentRuntime;
    let session = 0;
    const turn = () => runtime.handle({ userMessage: REQUEST, sessionId: `bench-${++session}`, channel: 'cli:bench' });
    // The fast path needs the plan its first (ReAct) turn leaves.
    for (let i = 0; i < WARMUP; i++) yield* turn();
    calls.frontier = 0;
    calls['local-fast'] = 0;
    const ms = [];
    const tokens = { input: 0, output: 0 };
    const paths = new Set();
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      const trace = yield* turn();
      ms.push(performance.now() - started);
      if (trace.outcome !== 'success') throw new Error(`${path}: turn ended ${trace.outcome}: ${trace.final_response}`);
      paths.add(trace.path ?? 'react');
      for (const step of trace.steps) {
        if (step.kind === 'thought') {
          tokens.input += step.prompt_tokens;
          tokens.output += step.response_tokens;
        }
      }
    }
    if (paths.size !== 1 || !paths.has(path)) throw new Error(`expected every turn on ${path}, got ${[...paths]}`);
    ms.sort((a, b) => a - b);
    return {
      llm_calls_per_turn: (calls.frontier + calls['local-fast']) / RUNS,
      frontier_calls_per_turn: calls.frontier / RUNS,
      local_fast_calls_per_turn: calls['local-fast'] / RUNS,
      input_tokens_per_turn: tokens.input / RUNS,
      output_tokens_per_turn: tokens.output / RUNS,
      ms_per_turn_median: Number(percentile(ms, 50).toFixed(3)),
      ms_per_turn_p95: Number(percentile(ms, 95).toFixed(3)),
    };
  }).pipe(
    Effect.provide(
      TestLayer({
        llm: LlmFunction(model),
        tools: [lookup],
        config: { maxSteps: 10, plans: { enabled: path === 'fast' } },
      }),
    ),
    Effect.scoped,
    Logger.withMinimumLogLevel(LogLevel.Error),
  );

log(`warmup=${WARMUP} runs=${RUNS} per path, ${STEPS} steps`);
const react = await Effect.runPromise(measure('react'));
const fast = await Effect.runPromise(measure('fast'));
process.stdout.write(
  `${JSON.stringify({
    scenario,
    steps: STEPS,
    runs: RUNS,
    react,
    fast,
    loadavg_1m: Number(loadavg()[0].toFixed(2)),
  })}\n`,
);
