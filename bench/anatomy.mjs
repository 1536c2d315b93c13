// Anatomy of the step-overhead workload: where a conversation's time and runtime operations go, and what a
// parked conversation holds. A diagnostic, not a scenario of `npm run bench` (it instruments Effect's fiber runtime,
// which slows it down): run `node bench/anatomy.mjs` after `npm run build`. One JSON line on stdout.
//
//  - time: wall microseconds by phase of the conversation (the phases below), TIME_RUNS conversations one after
//    another, measured before the fiber runtime is instrumented.
//  - ops: every operation Effect's run loop evaluates (all fibers: the turn's and the writers'), counted by
//    phase of the conversation, the phases cut where the fake model is called and where the tool runs:
//    start -> first model call, model -> tool (the Thought's end, validation, policy, the tool's start),
//    tool -> model (the tool's end, its observation, the next step up to the provider), last model call ->
//    end (the answer, the trace closed, written, audited, the session turn recorded).
//  - held: the heap that HELD conversations parked just before their final answer add, per conversation, by
//    kind of object (heap snapshots before and after, after a full GC): the turn's data against the fiber's
//    continuation (Effect's primitives, closures and their contexts).
//
//   TIME_RUNS (2000) conversations timed and OPS_RUNS (100) counted after WARMUP (harness default) unmeasured ones;
//   HELD (300); TOP (12)
//   kinds listed; FSYNC and TOOL_FORM as in step-overhead; MYCLAW_DIST, the build measured (default ../dist: another build's
//   `dist`, to compare two builds run alternately).
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import * as base from './lib/harness.mjs';
import { makeMyclawAgent } from './lib/myclaw-agent.mjs';

const dist = process.env.MYCLAW_DIST || fileURLToPath(new URL('../dist/', import.meta.url));
const TIME_RUNS = Number(process.env.TIME_RUNS || 2000);
const OPS_RUNS = Number(process.env.OPS_RUNS || 100);
const HELD = Number(process.env.HELD || 300);
const TOP = Number(process.env.TOP || 12);

// The fiber runtime module myclaw's dist runs on (the ESM build of the `effect` package it resolves).
const require = createRequire(path.join(dist, 'Myclaw.js'));
const effectRoot = path.dirname(path.dirname(path.dirname(require.resolve('effect'))));
const { FiberRuntime } = await import(
  pathToFileURL(path.join(effectRoot, 'dist', 'esm', 'internal', 'fiberRuntime.js')).href
);

// Phase marks, from the fake model (holdPoint is called as each model call starts) and the tool (addImpl).
let counting = false;
let ops = 0;
let since = 0;
let phase = 'start';
const phases = new Map();
let timing = false;
let lastAt = 0n;
const times = new Map();
const mark = (next) => {
  if (timing) {
    const now = process.hrtime.bigint();
    const key = `${phase} -> ${next}`;
    const entry = times.get(key) ?? { times: 0, us: 0 };
    entry.times += 1;
    entry.us += Number(now - lastAt) / 1000;
    times.set(key, entry);
    lastAt = now;
    phase = next;
    return;
  }
  if (!counting) return;
  const key = `${phase} -> ${next}`;
  const entry = phases.get(key) ?? { times: 0, ops: 0 };
  entry.times += 1;
  entry.ops += ops - since;
  phases.set(key, entry);
  since = ops;
  phase = next;
};
let holding = false;
let parked = 0;
let release;
const gate = new Promise((resolve) => (release = resolve));
const harness = {
  ...base,
  holdPoint: (toolResults) => {
    mark('model');
    if (holding && toolResults + 1 >= base.STEPS) {
      parked += 1;
      return gate;
    }
    return null;
  },
  addImpl: (args) => {
    mark('tool');
    return base.addImpl(args);
  },
};

const agent = await makeMyclawAgent({
  harness,
  dist,
  fsync: process.env.FSYNC || 'batch',
  toolForm: process.env.TOOL_FORM || 'run',
});
const snapshots = [];
try {
  for (let i = 0; i < base.WARMUP; i++) await agent.runOnce();

  // Time, by phase (the runtime not instrumented yet).
  timing = true;
  const timedFrom = process.hrtime.bigint();
  for (let i = 0; i < TIME_RUNS; i++) {
    phase = 'start';
    lastAt = process.hrtime.bigint();
    await agent.runOnce();
    mark('end');
  }
  const timedUs = Number(process.hrtime.bigint() - timedFrom) / 1000;
  timing = false;

  // Count: each run-loop method of the fiber runtime evaluates one operation (its name is the op code).
  const proto = FiberRuntime.prototype;
  for (const name of Object.getOwnPropertyNames(proto)) {
    if (!/^[A-Z][A-Za-z]+$/.test(name) || typeof proto[name] !== 'function') continue;
    const evaluate = proto[name];
    proto[name] = function (op) {
      if (counting) ops += 1;
      return evaluate.call(this, op);
    };
  }
  counting = true;
  for (let i = 0; i < OPS_RUNS; i++) {
    phase = 'start';
    since = ops;
    await agent.runOnce();
    mark('end');
  }
  counting = false;

  // Held conversations: the heap they add, by kind.
  v8.setFlagsFromString('--expose-gc');
  const gc = globalThis.gc ?? runInNewContext('gc');
  const snapshot = () => {
    gc();
    const file = path.join(os.tmpdir(), `myclaw-anatomy-${process.pid}-${snapshots.length}.heapsnapshot`);
    v8.writeHeapSnapshot(file);
    snapshots.push(file);
    return bySize(file);
  };
  const before = snapshot();
  holding = true;
  const runs = Array.from({ length: HELD }, () => agent.runOnce());
  while (parked < HELD) await new Promise((resolve) => setTimeout(resolve, 20));
  const after = snapshot();
  release();
  await Promise.all(runs);

  const kinds = [...after].map(([kind, size]) => [kind, size - (before.get(kind) ?? 0)]);
  const total = kinds.reduce((sum, [, size]) => sum + size, 0);
  const perConversation = (bytes) => Math.round(bytes / HELD);
  process.stdout.write(
    `${JSON.stringify({
      scenario: 'anatomy',
      tool_form: agent.toolForm,
      steps: base.STEPS,
      us_per_conversation: Math.round(timedUs / TIME_RUNS),
      us_by_phase: Object.fromEntries(
        [...times].map(([key, p]) => [key, { times_per_conversation: p.times / TIME_RUNS, us_each: Math.round(p.us / p.times) }]),
      ),
      ops_per_conversation: Math.round([...phases.values()].reduce((sum, p) => sum + p.ops, 0) / OPS_RUNS),
      ops_by_phase: Object.fromEntries(
        [...phases].map(([key, p]) => [key, { times_per_conversation: p.times / OPS_RUNS, ops_each: Math.round(p.ops / p.times) }]),
      ),
      held_bytes_per_conversation: perConversation(total),
      held_by_kind: Object.fromEntries(
        kinds
          .sort((a, b) => b[1] - a[1])
          .slice(0, TOP)
          .map(([kind, size]) => [kind, perConversation(size)]),
      ),
      node: process.version,
    })}\n`,
  );
} finally {
  for (const file of snapshots) rmSync(file, { force: true });
  await agent.dispose();
}

/** Self sizes of a heap snapshot's nodes, summed by kind: the constructor's name for objects, else the type. */
function bySize(file) {
  const snap = JSON.parse(readFileSync(file, 'utf8'));
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [type, name, size] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field));
  const sizes = new Map();
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const t = types[snap.nodes[i + type]];
    const kind = t === 'object' ? snap.strings[snap.nodes[i + name]] : t === 'closure' ? 'closure' : `(${t})`;
    sizes.set(kind, (sizes.get(kind) ?? 0) + snap.nodes[i + size]);
  }
  return sizes;
}
