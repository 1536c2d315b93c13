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
//  - held: the heap that HELD conversations parked just before their final answer (or PARK_AT) add, per conversation, by
//    kind of object (heap snapshots before and after, after a full GC): the turn's data against the fiber's
//    continuation (Effect's primitives, closures and their contexts). With SITES=n, also the n largest sites:
//    an object by its constructor and first property names, a closure by where its function is written
//    (file:line:column, node_modules and the dist folder cut off), so that what a change takes away can be
//    named. Both snapshots are written before either is read: what the reading allocates is not counted.
//    With PATHS=n (a depth), also who holds it: each object reachable from exactly one parked conversation's fiber
//    (and from no other's) is that conversation's own; its bytes are summed by the path the fiber reaches it by
//    (the first n steps of the shortest one: `p:_stack / e:3(EffectPrimitive) / p:effect_instruction_i1(closure) /
//    ...`), the PATHS_TOP (40) largest listed. What the fake model's shared gate links together (the request and
//    its messages, reachable from every parked fiber through it) is no one conversation's: held_exclusive_bytes
//    is less than held_bytes_per_conversation by about that.
//
//   TIME_RUNS (2000) conversations timed and OPS_RUNS (100) counted after WARMUP (harness default) unmeasured ones;
//   HELD (300), parked at the model call after PARK_AT (STEPS - 1) tool results (0: at the first model call, to
//   tell what a conversation holds before any step from what each step adds); TOP (12)
//   kinds listed; FSYNC and TOOL_FORM as in step-overhead; MYCLAW_DIST, the build measured (default ../dist: another build's
//   `dist`, to compare two builds run alternately).
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import * as base from './lib/harness.mjs';
import { makeMyclawAgent } from './lib/myclaw-agent.mjs';
import { effectInternal, onEveryOperation } from './lib/run-loop.mjs';

const dist = process.env.MYCLAW_DIST || fileURLToPath(new URL('../dist/', import.meta.url));
const TIME_RUNS = Number(process.env.TIME_RUNS || 2000);
const OPS_RUNS = Number(process.env.OPS_RUNS || 100);
const HELD = Number(process.env.HELD || 300);
const PARK_AT = Number(process.env.PARK_AT ?? base.STEPS - 1);
if (!Number.isInteger(PARK_AT) || PARK_AT < 0 || PARK_AT >= base.STEPS) {
  throw new Error(`PARK_AT: expected a whole number from 0 to ${base.STEPS - 1}, got ${process.env.PARK_AT}`);
}
const TOP = Number(process.env.TOP || 12);
const SITES = Number(process.env.SITES || 0);
const PATHS = Number(process.env.PATHS || 0);
const PATHS_TOP = Number(process.env.PATHS_TOP || 40);
// The parked conversations' fibers, found by this name in the snapshot (a property of the global object).
const PARKED_FIBERS = '__myclawAnatomyParkedFibers';
globalThis[PARKED_FIBERS] = [];

// The fiber runtime module myclaw's dist runs on (the ESM build of the `effect` package it resolves).
const { FiberRuntime } = await effectInternal(dist, 'fiberRuntime.js');

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
    if (holding && toolResults === PARK_AT) {
      parked += 1;
      // The fiber calling the model: Effect's fiber runtime keeps the running fiber here (internal, read by a
      // diagnostic only).
      if (PATHS > 0) globalThis[PARKED_FIBERS].push(globalThis['effect/FiberCurrent']);
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

  // Count every operation the run loop evaluates.
  onEveryOperation(FiberRuntime, () => {
    if (counting) ops += 1;
  });
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
    return file;
  };
  const beforeFile = snapshot();
  holding = true;
  const runs = Array.from({ length: HELD }, () => agent.runOnce());
  while (parked < HELD) await new Promise((resolve) => setTimeout(resolve, 20));
  const afterFile = snapshot();
  release();
  await Promise.all(runs);

  const [before, after] = [beforeFile, afterFile].map(readSnapshot);
  const added = (by) => {
    const was = by(before);
    return [...by(after)].map(([key, size]) => [key, size - (was.get(key) ?? 0)]);
  };
  const kinds = added(byKind);
  const total = kinds.reduce((sum, [, size]) => sum + size, 0);
  const perConversation = (bytes) => Math.round(bytes / HELD);
  const largest = (entries, n) =>
    Object.fromEntries(
      entries
        .sort((a, b) => b[1] - a[1])
        .slice(0, n)
        .map(([key, size]) => [key, perConversation(size)]),
    );
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
      held_by_kind: largest(kinds, TOP),
      ...(SITES > 0 ? { held_by_site: largest(added(bySite), SITES) } : {}),
      ...(PATHS > 0 ? heldByPath(after, HELD) : {}),
      node: process.version,
    })}\n`,
  );
} finally {
  for (const file of snapshots) rmSync(file, { force: true });
  await agent.dispose();
}

/** A heap snapshot's nodes and edges, with a few accessors. */
function readSnapshot(file) {
  const snap = JSON.parse(readFileSync(file, 'utf8'));
  const { node_fields: nodeFields, edge_fields: edgeFields, node_types: nodeTypes, edge_types: edgeTypes } =
    snap.snapshot.meta;
  const at = (field) => nodeFields.indexOf(field);
  const firstEdge = new Uint32Array(snap.nodes.length / nodeFields.length);
  for (let i = 0, edge = 0; i < snap.nodes.length; i += nodeFields.length) {
    firstEdge[i / nodeFields.length] = edge;
    edge += snap.nodes[i + at('edge_count')];
  }
  // Where each closure's function is written: [script id, line, column] by node index.
  const locations = new Map();
  const locationFields = snap.snapshot.meta.location_fields ?? [];
  for (let i = 0; i < (snap.locations ?? []).length; i += locationFields.length) {
    locations.set(snap.locations[i], snap.locations.slice(i + 1, i + locationFields.length));
  }
  return {
    snap,
    width: nodeFields.length,
    type: (i) => nodeTypes[0][snap.nodes[i + at('type')]],
    name: (i) => snap.strings[snap.nodes[i + at('name')]],
    size: (i) => snap.nodes[i + at('self_size')],
    /** The node's outgoing edges as [type, name, target node index]. */
    edges: function* (i) {
      const count = snap.nodes[i + at('edge_count')];
      for (let e = firstEdge[i / nodeFields.length]; e < firstEdge[i / nodeFields.length] + count; e++) {
        const base = e * edgeFields.length;
        const type = edgeTypes[0][snap.edges[base + edgeFields.indexOf('type')]];
        const nameOrIndex = snap.edges[base + edgeFields.indexOf('name_or_index')];
        const name = type === 'element' || type === 'hidden' ? nameOrIndex : snap.strings[nameOrIndex];
        yield [type, name, snap.edges[base + edgeFields.indexOf('to_node')]];
      }
    },
    locations,
  };
}

/**
 * What each parked conversation holds on its own, by the path its fiber reaches it by: every object reachable from
 * one parked fiber's and no other's (a breadth-first walk from all of them at once, each object labelled with the
 * first fiber that reaches it, or as shared once a second one does; the walk does not enter other fibers). Weak
 * edges are not followed.
 */
function heldByPath(heap, held) {
  const { snap, width } = heap;
  const count = snap.nodes.length / width;
  let list;
  for (let i = 0; i < snap.nodes.length && list === undefined; i += width) {
    for (const [type, name, to] of heap.edges(i)) {
      if (type === 'property' && name === PARKED_FIBERS) list = to;
    }
  }
  if (list === undefined) throw new Error(`anatomy: ${PARKED_FIBERS} not found in the heap snapshot`);
  const fibers = [...heap.edges(list)].filter(([type]) => type === 'element').map(([, , to]) => to);
  const SHARED = -2;
  const label = new Int32Array(count).fill(-1);
  const parent = new Int32Array(count).fill(-1);
  const via = new Array(count);
  const queue = [];
  fibers.forEach((node, i) => {
    label[node / width] = i;
    queue.push(node);
  });
  const isFiber = (node) => heap.type(node) === 'object' && heap.name(node) === 'FiberRuntime';
  for (let q = 0; q < queue.length; q++) {
    const node = queue[q];
    const own = label[node / width];
    for (const [type, name, to] of heap.edges(node)) {
      if (type === 'weak' || heap.type(to) === 'synthetic') continue;
      const k = to / width;
      if (isFiber(to) && label[k] !== own) continue;
      if (label[k] === -1) {
        label[k] = own;
        parent[k] = node;
        via[k] = `${type[0]}:${name}`;
        queue.push(to);
      } else if (label[k] !== own && label[k] !== SHARED) {
        label[k] = SHARED;
        queue.push(to);
      }
    }
  }
  const bytes = new Map();
  let exclusive = 0;
  for (let k = 0; k < count; k++) {
    if (label[k] < 0 || parent[k] === -1) continue;
    const node = k * width;
    exclusive += heap.size(node);
    const steps = [];
    for (let at = node; parent[at / width] !== -1; at = parent[at / width]) {
      steps.push(`${via[at / width]}(${heap.type(at)}:${heap.name(at).slice(0, 40)})`);
    }
    const key = steps.reverse().slice(0, PATHS).join(' / ');
    bytes.set(key, (bytes.get(key) ?? 0) + heap.size(node));
  }
  for (const node of fibers) exclusive += heap.size(node);
  const parked = fibers.length || held;
  return {
    held_exclusive_bytes: Math.round(exclusive / parked),
    held_by_path: Object.fromEntries(
      [...bytes].sort((a, b) => b[1] - a[1]).slice(0, PATHS_TOP).map(([key, size]) => [key, Math.round(size / parked)]),
    ),
  };
}

/** Self sizes of a heap snapshot's nodes, summed by kind: the constructor's name for objects, else the type. */
function byKind(heap) {
  const sizes = new Map();
  for (let i = 0; i < heap.snap.nodes.length; i += heap.width) {
    const t = heap.type(i);
    const kind = t === 'object' ? heap.name(i) : t === 'closure' ? 'closure' : `(${t})`;
    sizes.set(kind, (sizes.get(kind) ?? 0) + heap.size(i));
  }
  return sizes;
}

/**
 * Self sizes summed by site: an object by its constructor and its first six property names (a context by its
 * variables), a closure by the file, line and column of its function, anything else by its type.
 */
function bySite(heap) {
  const scripts = new Map();
  const child = (i, wanted) => {
    for (const [, name, to] of heap.edges(i)) if (name === wanted) return to;
    return undefined;
  };
  const where = (i) => {
    const location = heap.locations.get(i);
    if (location === undefined) return '?';
    const [script, line, column] = location;
    if (!scripts.has(script)) {
      const shared = child(i, 'shared');
      const source = shared === undefined ? undefined : child(shared, 'script_or_debug_info');
      const file = source === undefined ? String(script) : heap.name(source);
      scripts.set(script, file.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, 'dist/'));
    }
    return `${scripts.get(script)}:${line + 1}:${column + 1}`;
  };
  const sizes = new Map();
  for (let i = 0; i < heap.snap.nodes.length; i += heap.width) {
    const t = heap.type(i);
    let site;
    if (t === 'closure') site = `closure ${heap.name(i) || '(anonymous)'} ${where(i)}`;
    else if (t === 'object' || heap.name(i) === 'system / Context') {
      const names = [];
      for (const [type, name] of heap.edges(i)) {
        if ((type === 'property' || type === 'context') && names.length < 6) names.push(name);
      }
      site = `${heap.name(i)} {${names.join(', ')}}`;
    } else site = `(${t})`;
    sizes.set(site, (sizes.get(site) ?? 0) + heap.size(i));
  }
  return sizes;
}
