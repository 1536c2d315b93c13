// Loaded with `node --import` into a process that runs myclaw from ../../dist (not the bundle): counts the
// operations Effect's run loop evaluates, by fiber. The first SIGUSR2 starts counting, the second stops and writes
// one line to stderr: `OPS {json}` with the total and, for each kind of fiber (named by the first functions its
// operations carry), how many fibers and operations. A diagnostic for bench/serve-anatomy.mjs.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const require = createRequire(path.join(dist, 'Myclaw.js'));
const effectRoot = path.dirname(path.dirname(path.dirname(require.resolve('effect'))));
const { FiberRuntime } = await import(pathToFileURL(path.join(effectRoot, 'dist', 'esm', 'internal', 'fiberRuntime.js')).href);

// What an operation carries: its continuation or its thunk, as the start of its source.
const snippets = new WeakMap();
const carried = (name, op) => {
  const fn = name.startsWith('On') ? (op.effect_instruction_i1 ?? op.effect_instruction_i2)
    : name === 'Commit' ? op.commit
    : ['Sync', 'WithRuntime', 'Async'].includes(name) ? op.effect_instruction_i0
    : undefined;
  if (typeof fn !== 'function') return undefined;
  let snippet = snippets.get(fn);
  if (snippet === undefined) {
    snippet = fn.toString().replace(/\s+/g, ' ').slice(0, 60);
    snippets.set(fn, snippet);
  }
  return snippet;
};

let counting = false;
let total = 0;
// Each fiber's counts, kept apart from the fiber itself (which the count must not keep alive).
const countsOf = new WeakMap();
const counted = [];
const proto = FiberRuntime.prototype;
for (const name of Object.getOwnPropertyNames(proto)) {
  if (!/^[A-Z][A-Za-z]+$/.test(name) || typeof proto[name] !== 'function') continue;
  const evaluate = proto[name];
  proto[name] = function (op) {
    if (counting) {
      total += 1;
      let fiber = countsOf.get(this);
      if (fiber === undefined) {
        fiber = { first: [], ops: 0 };
        countsOf.set(this, fiber);
        counted.push(fiber);
      }
      fiber.ops += 1;
      if (fiber.first.length < 2) {
        const snippet = carried(name, op);
        if (snippet !== undefined) fiber.first.push(snippet);
      }
    }
    return evaluate.call(this, op);
  };
}

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
