// Scenario "replay": replay and eval of recorded turns, from ../dist (run `npm run build` first). One JSON line
// on stdout: { scenario, replay_ms_10_steps_median, replay_ms_10_steps_p95, eval_traces_per_s, ... }
//
// Replay: a turn of 10 Thoughts (nine read-only tool calls, then the answer: 19 trace steps) is recorded with
// the scripted provider, then replayed RUNS times (after WARMUP) through the whole runtime with the recorded
// answers and results; the median and p95 of one replay.
// Eval: TRACES recorded turns (default 1,000: the 10-Thought turn and three shorter ones, each with its own ids)
// replayed by evalTraces with CONC replays in flight (default 8), in one process; traces per second.
import { Effect, Logger, LogLevel, Schema } from 'effect';
import { loadavg } from 'node:os';

const dist = new URL('../dist/', import.meta.url);
const { AgentRuntime, AppConfig, defaultToolReplay, evalTraces, makeReplayer, ReplayBaseTemp, ToolRegistryLive } =
  await import(new URL('Myclaw.js', dist));
const { TestLayer } = await import(new URL('Testing.js', dist));

const scenario = process.env.BENCH_SCENARIO || 'replay';
const WARMUP = Number(process.env.WARMUP || 50);
const RUNS = Number(process.env.RUNS || 300);
const TRACES = Number(process.env.TRACES || 1000);
const CONC = Number(process.env.CONC || 8);
const log = (text) => process.stderr.write(`${scenario}: ${text}\n`);
const quiet = (effect) => effect.pipe(Logger.withMinimumLogLevel(LogLevel.Error));

const tenThoughts = [
  ...Array.from({ length: 9 }, (_, i) => ({ toolCalls: [{ name: i % 2 === 0 ? 'now' : 'fs_list', args: i % 2 === 0 ? {} : { path: '.' } }] })),
  { text: 'Done after nine tool calls.' },
];
const shorter = [
  [{ text: 'Hello.' }],
  [{ toolCalls: [{ name: 'fs_read', args: { path: 'SOUL.md' } }] }, { text: 'Read it.' }],
  [{ toolCalls: [{ name: 'fs_write', args: { path: 'SOUL.md', content: 'x' } }] }],
];

const record = (script, message) =>
  Effect.runPromise(quiet(Effect.scoped(
    Effect.flatMap(AgentRuntime, (runtime) => runtime.handle({ userMessage: message, sessionId: 'bench', channel: 'cli:bench' }))
      .pipe(Effect.provide(TestLayer({ script }))),
  )));

const long = await record(tenThoughts, 'run the ten-step errand');
const thoughts = long.steps.filter((step) => step.kind === 'thought').length;
if (thoughts !== 10 || long.outcome !== 'success') throw new Error(`expected 10 Thoughts and success, got ${thoughts}, ${long.outcome}`);
const others = [];
for (const [i, script] of shorter.entries()) others.push(await record(script, `short errand ${i}`));

const config = Schema.decodeUnknownSync(AppConfig.AppConfig)({});
const options = { ...defaultToolReplay, tools: ToolRegistryLive };
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

const program = Effect.gen(function* () {
  const replay = yield* makeReplayer(ToolRegistryLive);
  const once = replay(long, defaultToolReplay);
  for (let i = 0; i < WARMUP; i++) {
    const { report } = yield* once;
    if (!report.identical) throw new Error(`the 10-step replay diverged: ${JSON.stringify(report.divergence)}`);
  }
  const times = [];
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    yield* once;
    times.push(performance.now() - started);
  }
  const cpu = process.cpuUsage(cpuBefore);
  const replayCpuMs = (cpu.user + cpu.system) / 1000 / RUNS;
  times.sort((a, b) => a - b);

  const pool = [long, ...others];
  const traces = Array.from({ length: TRACES }, (_, i) => {
    const base = pool[i % pool.length];
    const id = `bench-${i}`;
    return {
      file: `${id}.json`,
      trace: { _tag: 'Right', right: { ...base, trace_id: id, replay: { ...base.replay, ids: [{ kind: 'trace', id }, ...base.replay.ids.slice(1)] } } },
    };
  });
  // One warm-up pass over a tenth, then the measured pass.
  yield* evalTraces(traces.slice(0, Math.ceil(TRACES / 10)), options, CONC);
  const started = performance.now();
  const evalCpuBefore = process.cpuUsage();
  const result = yield* evalTraces(traces, options, CONC);
  const seconds = (performance.now() - started) / 1000;
  const evalCpu = process.cpuUsage(evalCpuBefore);
  const evalCpuSeconds = (evalCpu.user + evalCpu.system) / 1e6;
  if (result.totals.identical !== TRACES) throw new Error(`eval: ${JSON.stringify(result.totals)}`);
  return {
    replay_ms_10_steps_median: Number(percentile(times, 0.5).toFixed(3)),
    replay_ms_10_steps_p95: Number(percentile(times, 0.95).toFixed(3)),
    // CPU time per replay: what the wall time would be on an idle core (the machine may be shared).
    replay_cpu_ms_10_steps_mean: Number(replayCpuMs.toFixed(3)),
    replay_runs: RUNS,
    trace_steps: long.steps.length,
    eval_traces: TRACES,
    eval_concurrency: CONC,
    eval_seconds: Number(seconds.toFixed(3)),
    eval_traces_per_s: Math.round(TRACES / seconds),
    eval_traces_per_cpu_s: Math.round(TRACES / evalCpuSeconds),
    loadavg_1m: Number(loadavg()[0].toFixed(2)),
  };
});

const figures = await Effect.runPromise(quiet(program.pipe(Effect.provide(ReplayBaseTemp(config)), Effect.scoped)));
log(`10-step replay median ${figures.replay_ms_10_steps_median} ms; eval ${figures.eval_traces_per_s} traces/s`);
process.stdout.write(`${JSON.stringify({ scenario, ...figures })}\n`);
