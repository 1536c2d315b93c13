// Effect's run loop as myclaw's `dist` runs it (the ESM build of the `effect` package that `dist` resolves, the
// module instance myclaw's own imports get), for the diagnostics that count its operations.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** One of Effect's internal modules (e.g. `fiberRuntime.js`, `layer.js`), as `dist` resolves Effect. */
export const effectInternal = (dist, name) => {
  const require = createRequire(path.join(dist, 'Myclaw.js'));
  const effectRoot = path.dirname(path.dirname(path.dirname(require.resolve('effect'))));
  return import(pathToFileURL(path.join(effectRoot, 'dist', 'esm', 'internal', name)).href);
};

/**
 * Calls `hook(fiber, opCode, op)` before every operation the run loop evaluates: each run-loop method of the fiber
 * runtime (named by its op code) evaluates one.
 */
export const onEveryOperation = (FiberRuntime, hook) => {
  const proto = FiberRuntime.prototype;
  for (const name of Object.getOwnPropertyNames(proto)) {
    if (!/^[A-Z][A-Za-z]+$/.test(name) || typeof proto[name] !== 'function') continue;
    const evaluate = proto[name];
    proto[name] = function (op) {
      hook(this, name, op);
      return evaluate.call(this, op);
    };
  }
};

// What an operation carries: its continuation or its thunk, as the start of its source.
const snippets = new WeakMap();
export const carried = (name, op) => {
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
