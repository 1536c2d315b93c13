// Anatomy of `myclaw serve`'s start: the Effect operations and the layer graph's nodes it runs before its HTTP
// server listens. A diagnostic, not a scenario of `npm run bench` (it instruments Effect's fiber runtime and its
// layer memo map, which slows the start down): run `node bench/startup-anatomy.mjs` after `npm run build`. It runs
// the command line of the tsc output (dist/cli/Cli.js, not the bundle: the same program, with readable places) in
// this process, on a workspace made by a first, unmeasured start (a temporary one unless MYCLAW_HOME is set), and
// stops at the server's `listen`. One JSON line on stdout:
//   ops_to_listen     operations Effect's run loop evaluated from the command's start to the server's listen
//   layer_nodes       distinct layers the graph memoized (each one a scope, a deferred, refs and a finalizer)
//   nodes_by_kind     those by Effect's layer op (FromEffect, Scoped, Provide, ProvideMerge, MergeAll, ...)
//   ms_to_listen      the time it took, instrumented (compare counts, not this)
// On stderr, with NODES=1, the nodes in the order their build started: the operations and milliseconds until the
// next one started (what that layer's own construction ran, for a leaf) and where it was made (the first stack
// frame outside Effect); with OPS=n, the n most frequent operations by op code and the start of what they carry.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { carried, effectInternal, onEveryOperation } from './lib/run-loop.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const dist = path.join(root, 'dist');
const MEASURE = process.env.STARTUP_ANATOMY_RUN;

if (MEASURE === undefined) {
  // The parent: a workspace, an unmeasured start that creates it, then the measured one.
  const home = process.env.MYCLAW_HOME || mkdtempSync(path.join(os.tmpdir(), 'myclaw-startup-anatomy-'));
  if (!process.env.MYCLAW_HOME) {
    writeFileSync(path.join(home, 'script.json'), JSON.stringify([{ text: 'Noted.' }]));
    writeFileSync(
      path.join(home, 'myclaw.json'),
      JSON.stringify({ tiers: { frontier: [{ provider: 'scripted', script: 'script.json', loop: true }] } }),
    );
  }
  const env = {
    ...process.env,
    MYCLAW_HOME: home,
    MYCLAW_KEY_DIR: process.env.MYCLAW_KEY_DIR || path.join(home, '.keys'),
    MYCLAW_LOG_LEVEL: 'warn',
    MYCLAW_ADMIN_TOKEN: 'bench',
    MYCLAW_HTTP_PORT: '0',
  };
  try {
    for (const run of ['prepare', 'measure']) {
      const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url)], {
        env: { ...env, STARTUP_ANATOMY_RUN: run },
        stdio: ['ignore', run === 'measure' ? 'inherit' : 'ignore', 'inherit'],
      });
      if (child.status !== 0) throw new Error(`startup-anatomy: the ${run} run exited with ${child.status}`);
    }
  } finally {
    if (!process.env.MYCLAW_HOME) rmSync(home, { recursive: true, force: true });
  }
} else {
  const { FiberRuntime } = await effectInternal(dist, 'fiberRuntime.js');
  const layers = await effectInternal(dist, 'layer.js');

  let ops = 0;
  const OPS = Number(process.env.OPS || 0);
  const byText = new Map();
  onEveryOperation(FiberRuntime, (_fiber, name, op) => {
    ops += 1;
    if (OPS > 0) {
      const key = `${name} ${carried(name, op) ?? ''}`;
      byText.set(key, (byText.get(key) ?? 0) + 1);
    }
  });

  // Where each layer is made: the first frame outside Effect when its op code is set (layers are made by
  // Object.create(proto) and the assignment of `_op_layer`; those made with property descriptors stay unnamed).
  const madeAt = new WeakMap();
  Object.defineProperty(layers.proto, '_op_layer', {
    configurable: true,
    set(value) {
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 40;
      const frames = new Error().stack.split('\n').slice(2);
      Error.stackTraceLimit = limit;
      const frame = frames.find((line) => !line.includes(`${path.sep}node_modules${path.sep}effect${path.sep}`)) ?? '';
      madeAt.set(this, frame.trim().replace(/^at /, '').replaceAll(pathToFileURL(root).href, '').replaceAll(root, ''));
      Object.defineProperty(this, '_op_layer', { value, writable: true, enumerable: true, configurable: true });
    },
  });

  // Each distinct layer the memo map is asked for is one node: its build starts there.
  const memoProto = Object.getPrototypeOf(layers.unsafeMakeMemoMap());
  const getOrElseMemoize = memoProto.getOrElseMemoize;
  const nodes = [];
  const seen = new Set();
  memoProto.getOrElseMemoize = function (layer, scope) {
    if (!seen.has(layer)) {
      seen.add(layer);
      nodes.push({ kind: layer._op_layer, at: madeAt.get(layer) ?? '?', ops, ms: performance.now() });
    }
    return getOrElseMemoize.call(this, layer, scope);
  };

  const started = performance.now();
  const listen = net.Server.prototype.listen;
  net.Server.prototype.listen = function (...args) {
    const now = performance.now();
    if (MEASURE === 'measure') {
      const byKind = {};
      for (const node of nodes) byKind[node.kind] = (byKind[node.kind] ?? 0) + 1;
      if (process.env.NODES) {
        const ends = [...nodes.slice(1), { ops, ms: now }];
        nodes.forEach((node, i) => {
          const line = `${String(ends[i].ops - node.ops).padStart(6)} ops ${(ends[i].ms - node.ms).toFixed(1).padStart(6)} ms`;
          process.stderr.write(`${line}  ${node.kind} ${node.at}\n`);
        });
      }
      for (const [key, count] of [...byText].sort((a, b) => b[1] - a[1]).slice(0, OPS)) {
        process.stderr.write(`${String(count).padStart(6)} ${key}\n`);
      }
      process.stdout.write(
        `${JSON.stringify({
          scenario: 'startup-anatomy',
          ops_to_listen: ops,
          layer_nodes: nodes.length,
          nodes_by_kind: byKind,
          ms_to_listen: Math.round(now - started),
          node: process.version,
        })}\n`,
      );
    }
    setImmediate(() => process.exit(0));
    return listen.apply(this, args);
  };
  const { main } = await import(pathToFileURL(path.join(dist, 'cli', 'Cli.js')).href);
  main(['serve']);
}
