// Loaded with `node --import` into a process that runs myclaw from ../../dist (not the bundle): counts the
// operations Effect's run loop evaluates, by fiber. The first SIGUSR2 starts counting, the second stops and writes
// one line to stderr: `OPS {json}` with the total and, for each kind of fiber (named by the first functions its
// operations carry), how many fibers and operations. A diagnostic for bench/serve-anatomy.mjs.
import { fileURLToPath } from 'node:url';
import { carried, effectInternal, onEveryOperation } from './run-loop.mjs';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const { FiberRuntime } = await effectInternal(dist, 'fiberRuntime.js');

let counting = false;
let total = 0;
// Each fiber's counts, kept apart from the fiber itself (which the count must not keep alive).
const countsOf = new WeakMap();
const counted = [];
onEveryOperation(FiberRuntime, (fiberRuntime, name, op) => {
  if (!counting) return;
  total += 1;
  let fiber = countsOf.get(fiberRuntime);
  if (fiber === undefined) {
    fiber = { first: [], ops: 0 };
    countsOf.set(fiberRuntime, fiber);
    counted.push(fiber);
  }
  fiber.ops += 1;
  if (fiber.first.length < 2) {
    const snippet = carried(name, op);
    if (snippet !== undefined) fiber.first.push(snippet);
  }
});

process.on('SIGUSR2', () => {
  counting = !counting;
  if (counting) return;
  const kinds = new Map();
  for (const { first, ops } of counted) {
    const kind = first.join(' | ');
    const entry = kinds.get(kind) ?? { fibers: 0, ops: 0 };
    entry.fibers += 1;
    entry.ops += ops;
    kinds.set(kind, entry);
  }
  const byFiber = [...kinds].sort((a, b) => b[1].ops - a[1].ops).map(([kind, entry]) => ({ kind, ...entry }));
  process.stderr.write(`OPS ${JSON.stringify({ total, byFiber })}\n`);
});
