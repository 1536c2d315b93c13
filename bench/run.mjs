#!/usr/bin/env node
// `npm run bench` (after `npm run build`): runs each benchmark scenario in its own Node process, one
// after another, and prints one JSON line per scenario on stdout (nothing else; progress and the
// scenarios' own stderr go to stderr). Exits non-zero if a scenario fails.
//
//   npm run bench                          # every scenario
//   npm run bench -- step-overhead         # a subset: names, exactly; a name that matches no scenario
//                                          # exactly selects every scenario whose name contains it
//   STEPS=10 WARMUP=20 RUNS=50 CONC_RUNS=100 HOLD=100 node bench/run.mjs   # smoke
//
// Workload knobs (passed through to every scenario): STEPS WARMUP RUNS CONC CONC_RUNS HOLD (see
// lib/harness.mjs). To add a scenario, add an entry to SCENARIOS: a script in this folder that prints
// one JSON line on stdout, and the env it runs with (the scenario's name is passed as BENCH_SCENARIO).
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const SCENARIOS = [
  // The shared peer benchmark's workload (peer-template.md), production configuration.
  { name: 'step-overhead', script: 'step-overhead.mjs', env: { FSYNC: 'batch' } },
  // The same, with traces.fsync = "always" (one write + one sync per trace, no group commit).
  { name: 'step-overhead-fsync-always', script: 'step-overhead.mjs', env: { FSYNC: 'always' } },
  // Per-call cost of each provider adapter against a loopback server answering a recorded payload at once:
  // request build, HTTP round trip on 127.0.0.1, response decode.
  { name: 'adapter-openai', script: 'adapters/openai.mjs', env: {} },
  { name: 'adapter-anthropic', script: 'adapters/anthropic.mjs', env: {} },
  // /metrics render time with 10,000 label combinations, and /health requests per second.
  { name: 'observability', script: 'observability.mjs', env: {} },
  // Audit appends per second (fsync always and batch) and query time over 1,000,000 records.
  { name: 'audit', script: 'audit.mjs', env: {} },
  // Replay of a recorded 10-step turn through the whole runtime, and eval throughput over 1,000 traces.
  { name: 'replay', script: 'replay.mjs', env: {} },
  // Whole-process start: --help, budget, chat (scripted), serve and npm start until /health; median of 5 each.
  { name: 'cold-start', script: 'cold-start.mjs', env: {} },
  // serve until /health on a workspace of 5,000 recorded turns against a fresh one: what history adds to a start.
  { name: 'aged-start', script: 'aged-start.mjs', env: {} },
  // POST /v1/turns on a real `myclaw serve` with the scripted provider, 16 clients on 127.0.0.1: turns/s, p99.
  { name: 'http-turns', script: 'http-turns.mjs', env: {} },
  // The same 5-step request served by the ReAct loop and by the fast path: LLM calls, tokens, overhead per turn.
  { name: 'plans', script: 'plans.mjs', env: {} },
  // Prompt tokens per turn of a 30-turn vs a 6-turn session, the stable prefix's share of the prompt, and
  // start-up time with 100,000 stored turns vs none.
  { name: 'sessions', script: 'sessions.mjs', env: {} },
];

const KNOBS = ['STEPS', 'WARMUP', 'RUNS', 'CONC', 'CONC_RUNS', 'HOLD'];
const benchDir = fileURLToPath(new URL('.', import.meta.url));
const log = (text) => process.stderr.write(`[bench] ${text}\n`);

function select(filters) {
  if (filters.length === 0) return SCENARIOS;
  const chosen = new Set();
  for (const f of filters) {
    const exact = SCENARIOS.filter((s) => s.name === f);
    const matches = exact.length > 0 ? exact : SCENARIOS.filter((s) => s.name.includes(f));
    if (matches.length === 0) {
      log(`no scenario matches "${f}"; scenarios: ${SCENARIOS.map((s) => s.name).join(', ')}`);
      process.exit(2);
    }
    for (const s of matches) chosen.add(s);
  }
  return SCENARIOS.filter((s) => chosen.has(s));
}

let current = null;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (current) current.kill(signal);
    process.exit(130);
  });
}

function runScenario(scenario) {
  return new Promise((resolve) => {
    const env = { ...process.env, ...scenario.env, BENCH_SCENARIO: scenario.name };
    const child = spawn(process.execPath, ['--expose-gc', scenario.script], {
      cwd: benchDir,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    current = child;
    let lines = 0;
    const out = createInterface({ input: child.stdout, crlfDelay: Infinity });
    out.on('line', (line) => {
      let parsed;
      try {
        parsed = JSON.parse(line);
      } catch {
        parsed = undefined;
      }
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
        lines += 1;
        process.stdout.write(`${line}\n`);
      } else if (line.trim() !== '') {
        process.stderr.write(`[${scenario.name} stdout] ${line}\n`);
      }
    });
    const outClosed = new Promise((r) => out.on('close', r));
    child.on('error', (error) => {
      log(`${scenario.name}: cannot start: ${error.message}`);
      resolve(false);
    });
    child.on('exit', async (code, signal) => {
      await outClosed;
      current = null;
      if (code !== 0) log(`${scenario.name}: FAILED (${signal ? `signal ${signal}` : `exit code ${code}`})`);
      else if (lines !== 1) log(`${scenario.name}: FAILED (printed ${lines} result lines, expected 1)`);
      resolve(code === 0 && lines === 1);
    });
  });
}

const scenarios = select(process.argv.slice(2));
const knobs = KNOBS.filter((k) => process.env[k] !== undefined && process.env[k] !== '').map((k) => `${k}=${process.env[k]}`);
log(`node ${process.version}; knobs: ${knobs.length ? knobs.join(' ') : 'defaults'}; scenarios: ${scenarios.map((s) => s.name).join(', ')}`);
let failed = 0;
for (const scenario of scenarios) {
  const started = Date.now();
  log(`${scenario.name}: starting (${scenario.script} ${Object.entries(scenario.env).map(([k, v]) => `${k}=${v}`).join(' ')})`);
  const ok = await runScenario(scenario);
  if (!ok) failed += 1;
  else log(`${scenario.name}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
log(`loadavg at end: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
process.exit(failed === 0 ? 0 : 1);
