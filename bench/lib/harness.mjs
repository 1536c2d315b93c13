// Copied verbatim from the shared peer benchmark (../shared/bench/lib/harness.mjs), so that myclaw is measured with the identical harness; only this line was added.
// Shared workload + measurement harness for the peer benchmarks.
//
// Every peer script builds its framework's agent around ONE fake model whose
// behaviour is defined here (`scriptedTurn`) and hands `runBenchmark` a
// `runOnce()` that executes one full conversation and returns the final
// answer text. Everything else (warm-up, timing, concurrency, memory) is
// identical for all peers.
//
// See ../peer-template.md for the workload in prose.

import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PerformanceObserver, constants } from 'node:perf_hooks';

const require = createRequire(import.meta.url);

const envInt = (name, dflt) => {
  const v = process.env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number.parseInt(v, 10);
  if (!Number.isFinite(n) || n < 0) throw new Error(`bad ${name}=${v}`);
  return n;
};

// ---------------------------------------------------------------------------
// Workload parameters (override with env vars for quick smoke runs).
// ---------------------------------------------------------------------------
export const STEPS = envInt('STEPS', 10); // model calls per conversation (N)
export const WARMUP = envInt('WARMUP', 300); // sequential warm-up conversations
export const RUNS = envInt('RUNS', 2000); // timed sequential conversations
export const CONC = envInt('CONC', 100); // concurrent conversations (throughput phase)
export const CONC_RUNS = envInt('CONC_RUNS', 2000); // conversations completed in the throughput phase
export const HOLD = envInt('HOLD', 1000); // conversations held open at once (memory phase)

export const USER_PROMPT = 'Add the numbers step by step using the add tool.';
export const SYSTEM_PROMPT = 'You are a calculator agent. Use the add tool.';
export const TOOL_NAME = 'add';
export const TOOL_DESCRIPTION = 'Add two numbers and return the sum.';
// The tool's JSON schema (frameworks get the equivalent zod schema where that
// is their idiomatic input; see peer scripts).
export const ADD_JSON_SCHEMA = Object.freeze({
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
  additionalProperties: false,
});
// Final answer after N-1 chained add calls: 1 + 2 + ... + (N-1).
export const EXPECTED_ANSWER = String(((STEPS - 1) * STEPS) / 2);

// The tool implementation every peer registers (async, like a real tool).
// It also counts executions that received arguments violating the schema,
// which can only happen if a framework skipped validation (see the probe).
export const toolStats = { executions: 0, badArgExecutions: 0 };
export const addImpl = async ({ a, b }) => {
  toolStats.executions += 1;
  if (typeof a !== 'number' || typeof b !== 'number') toolStats.badArgExecutions += 1;
  return a + b;
};

// ---------------------------------------------------------------------------
// The scripted fake model.
//
// Input: what the framework put in the prompt, reduced to
//   toolResults = number of tool-result messages in the prompt,
//   lastResult  = value of the last tool result (number) or undefined.
// Output: either a tool call (arguments as a JSON *string*, like the wire
// format of real providers) or the final text.
//
// Step k (1-based, k = toolResults + 1):
//   k <  N : call add({a: k, b: lastResult ?? 0})
//   k == N : answer String(lastResult)
// So the final answer is only right if the framework really executed the tool
// with the parsed arguments and fed every result back into the next prompt.
// ---------------------------------------------------------------------------
export function scriptedTurn(toolResults, lastResult) {
  if (probe !== null) return probeTurn(toolResults, lastResult);
  const k = toolResults + 1;
  if (k < STEPS) {
    const b = toolResults === 0 ? 0 : lastResult;
    if (typeof b !== 'number' || Number.isNaN(b)) {
      throw new Error(`fake model: bad previous tool result ${String(lastResult)} at step ${k}`);
    }
    return {
      type: 'tool_call',
      id: `call_${k}`,
      name: TOOL_NAME,
      arguments: `{"a":${k},"b":${b}}`,
    };
  }
  return { type: 'text', text: String(lastResult) };
}

// Validation probe (run once before warm-up): the model's first tool call
// carries {"a":"1","b":0} -- a string where the schema says number (zod's
// z.number() does not coerce). A framework that validates must not execute the
// tool with it; it either throws or feeds an error back to the model. The
// model then ends the conversation.
let probe = null;
function probeTurn(toolResults, lastResult) {
  if (toolResults === 0) {
    probe.sentBadCall = true;
    return { type: 'tool_call', id: 'call_probe', name: TOOL_NAME, arguments: '{"a":"1","b":0}' };
  }
  probe.fedBack = lastResult;
  return { type: 'text', text: 'probe-done' };
}

async function validationProbe(runOnce) {
  const before = { ...toolStats };
  probe = { sentBadCall: false, fedBack: undefined };
  let outcome;
  try {
    await runOnce();
    outcome = 'error-fed-back';
  } catch (e) {
    outcome = probe.fedBack === undefined ? `threw ${e?.name ?? 'error'}` : 'error-fed-back';
  }
  const p = probe;
  probe = null;
  const executed = toolStats.executions - before.executions;
  const bad = toolStats.badArgExecutions - before.badArgExecutions;
  if (!p.sentBadCall) return 'PROBE-NOT-REACHED';
  if (bad > 0 || executed > 0) return 'NOT-VALIDATED (tool ran with bad args)';
  return `rejected (${outcome})`;
}

// Memory phase support: while a hold is armed, the fake model parks the
// conversation just before it returns the final answer (i.e. with the whole
// N-1 tool round trips in the framework's state) until the hold is released.
let hold = null;
export function holdPoint(toolResults) {
  if (hold === null || toolResults + 1 < STEPS) return null;
  hold.parked += 1;
  if (hold.parked === hold.target) hold.allParked();
  return hold.gate;
}

// ---------------------------------------------------------------------------
// Measurement
// ---------------------------------------------------------------------------
function getGc() {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc');
}

export function pkgVersion(name) {
  try {
    return require(`${name}/package.json`).version;
  } catch {
    // packages whose exports hide package.json
    const fs = require('node:fs');
    const path = require('node:path');
    let dir = path.dirname(require.resolve(name));
    for (;;) {
      const p = path.join(dir, 'package.json');
      if (fs.existsSync(p)) {
        const j = JSON.parse(fs.readFileSync(p, 'utf8'));
        if (j.name === name) return j.version;
      }
      const up = path.dirname(dir);
      if (up === dir) return 'unknown';
      dir = up;
    }
  }
}

const nowNs = () => process.hrtime.bigint();
const tick = () => new Promise((r) => setImmediate(r));

// Accumulates GC pause time (perf_hooks 'gc' entries; delivered async, so
// call flush() -- which yields to the event loop -- before reading).
function gcMeter() {
  const m = { ms: 0, maxMs: 0, major: 0, minor: 0 };
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      m.ms += e.duration;
      if (e.duration > m.maxMs) m.maxMs = e.duration;
      const kind = e.detail?.kind ?? e.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) m.major += 1;
      else if (kind === constants.NODE_PERFORMANCE_GC_MINOR) m.minor += 1;
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  return {
    async flush() {
      await tick();
      await tick();
      return { ...m };
    },
    reset() {
      m.ms = 0;
      m.maxMs = 0;
      m.major = 0;
      m.minor = 0;
    },
    stop() {
      obs.disconnect();
    },
  };
}
const mb = (bytes) => Math.round((bytes / 1048576) * 10) / 10;

function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.floor(q * sorted.length));
  return sorted[i];
}

/**
 * @param {object} o
 * @param {string} o.peer     short peer name
 * @param {string} o.version  framework version string
 * @param {() => Promise<string>} o.runOnce  one full conversation -> final text
 * @param {object} [o.extra]  extra fields for the JSON line
 */
export async function runBenchmark({ peer, version, runOnce, extra = {} }) {
  const gc = getGc();
  let completed = 0;
  const checked = async () => {
    const text = await runOnce();
    if (text !== EXPECTED_ANSWER) {
      throw new Error(`${peer}: wrong final answer ${JSON.stringify(text)}, expected ${EXPECTED_ANSWER}`);
    }
    completed += 1;
  };

  if (process.env.DIAG_HEAP) return diagHeap(peer, checked, gc);

  // 0) validation probe, then correctness + warm-up (JIT, inline caches, lazy init).
  const validation = await validationProbe(runOnce);
  if (!validation.startsWith('rejected')) {
    process.stderr.write(`${peer}: validation probe: ${validation}\n`);
  }
  for (let i = 0; i < WARMUP; i++) await checked();

  // 1) memory: HOLD conversations open at once, parked at step N.
  let memory = { rss_mb: null, rss_delta_mb: null, heap_delta_mb: null, kb_per_conv: null };
  if (HOLD > 0) {
    gc();
    gc();
    const base = process.memoryUsage();
    let allParked;
    const parkedP = new Promise((r) => (allParked = r));
    let release;
    const gate = new Promise((r) => (release = r));
    hold = { parked: 0, target: HOLD, gate, allParked };
    const all = [];
    for (let i = 0; i < HOLD; i++) all.push(checked());
    const done = Promise.all(all);
    const first = await Promise.race([parkedP.then(() => 'parked'), done.then(() => 'done')]);
    if (first !== 'parked') {
      throw new Error(`${peer}: conversations finished without parking (hold point not reached)`);
    }
    gc();
    gc();
    const held = process.memoryUsage();
    const peakRssKb = process.resourceUsage().maxRSS; // kB, process lifetime peak so far
    hold = null;
    release();
    await done;
    memory = {
      rss_mb: mb(peakRssKb * 1024),
      rss_delta_mb: mb(held.rss - base.rss),
      heap_delta_mb: mb(held.heapUsed - base.heapUsed),
      kb_per_conv: Math.round(((held.heapUsed - base.heapUsed) / 1024 / HOLD) * 10) / 10,
    };
    gc();
  }

  // 2) sequential latency: RUNS conversations one after another.
  const lat = new Float64Array(RUNS);
  await tick();
  const meter = gcMeter();
  const t0 = nowNs();
  for (let i = 0; i < RUNS; i++) {
    const s = nowNs();
    await checked();
    lat[i] = Number(nowNs() - s) / 1000; // us
  }
  const totalUs = Number(nowNs() - t0) / 1000;
  const g = await meter.flush();
  meter.stop();
  const sorted = Array.from(lat).sort((x, y) => x - y);

  // 3) throughput: CONC conversations in flight at all times, CONC_RUNS total.
  let conc = null;
  if (CONC > 0 && CONC_RUNS > 0) {
    gc();
    let started = 0;
    const worker = async () => {
      while (started < CONC_RUNS) {
        started += 1;
        await checked();
      }
    };
    const c0 = nowNs();
    await Promise.all(Array.from({ length: CONC }, worker));
    const cSec = Number(nowNs() - c0) / 1e9;
    conc = Math.round(CONC_RUNS / cSec);
  }

  const r1 = (x) => Math.round(x * 10) / 10;
  const line = {
    peer,
    version,
    steps: STEPS,
    us_per_step: r1(totalUs / (RUNS * STEPS)),
    runs: RUNS,
    [`conc${CONC}_runs_per_s`]: conc,
    rss_mb: memory.rss_mb,
    // extras
    us_per_step_p50: r1(quantile(sorted, 0.5) / STEPS),
    us_per_run_p50: r1(quantile(sorted, 0.5)),
    us_per_run_p99: r1(quantile(sorted, 0.99)),
    gc_pct: r1((g.ms * 1000 * 100) / totalUs),
    gc_major: g.major,
    gc_max_pause_ms: r1(g.maxMs),
    hold: HOLD,
    rss_delta_mb: memory.rss_delta_mb,
    heap_delta_mb: memory.heap_delta_mb,
    kb_per_conv: memory.kb_per_conv,
    validation_probe: validation,
    tool_executions: toolStats.executions,
    node: process.version,
    conversations_checked: completed,
    ...extra,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
  return line;
}

// DIAG_HEAP=1: leak check instead of the benchmark. Runs 5 blocks of RUNS/5
// sequential conversations; per block prints wall time, GC time and
// heapUsed after a forced full GC (to stderr). A steadily growing heapUsed
// would mean the framework (or the fake) retains per-conversation state.
async function diagHeap(peer, checked, gc) {
  const block = Math.max(1, Math.floor(RUNS / 5));
  const meter = gcMeter();
  for (let b = 0; b < 5; b++) {
    gc();
    await meter.flush();
    meter.reset();
    const t0 = nowNs();
    for (let i = 0; i < block; i++) await checked();
    const ms = Number(nowNs() - t0) / 1e6;
    const g = await meter.flush();
    gc();
    gc();
    const h = process.memoryUsage();
    process.stderr.write(
      `${peer} block ${b}: ${block} runs ${ms.toFixed(0)} ms, gc ${g.ms.toFixed(0)} ms ` +
        `(${g.minor} minor, ${g.major} major, max pause ${g.maxMs.toFixed(1)} ms), ` +
        `heapUsed after full gc ${mb(h.heapUsed)} MB, rss ${mb(h.rss)} MB\n`,
    );
  }
  meter.stop();
}
