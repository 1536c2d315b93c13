#!/usr/bin/env node
// Part of `npm run build`, after tsc: rewrites the compiled modules under dist/ so that they import Effect's
// modules by subpath. `import { Effect, Layer } from "effect"` goes through the package's index, which loads
// and evaluates every module of the package (the `effect` index about 14 MB of heap, `@effect/platform`'s
// about 23 MB, measured with `process.memoryUsage()` after a full GC); `import * as Effect from "effect/Effect"`
// is the same module object and loads only what it uses. The sources keep the idiomatic barrel imports.
//
//   node scripts/subpath-imports.mjs   # rewrites dist/**/*.js in place; prints nothing unless something is wrong
//
// One import line becomes one line of imports, so the source maps stay true. The rewrite is idempotent, and
// fails if a barrel import it does not understand is left, so that no module loads a barrel unnoticed.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Packages whose index only re-exports their modules as namespaces (and, for `effect`, a few functions). */
const barrels = ['effect', '@effect/platform', '@effect/platform-node', '@effect/sql', '@effect/sql-sqlite-node'];
const functionExports = new Set(['absurd', 'flow', 'hole', 'identity', 'pipe', 'unsafeCoerce']);
const packages = barrels.map((b) => b.replace('/', '\\/')).join('|');
const barrelImport = new RegExp(`^import \\{([^}\\n]*)\\} from "(${packages})";$`, 'gm');
const anyBarrelReference = new RegExp(`(from|import\\()\\s*"(${packages})"`);

/** The module's source with each `import { A, B as C } from "<barrel>"` read as imports of the modules. */
export const throughSubpaths = (source) =>
  source.replace(barrelImport, (_, names, pkg) =>
    names
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '')
      .map((name) => {
        const [imported, local = imported] = name.split(/\s+as\s+/);
        return pkg === 'effect' && functionExports.has(imported)
          ? `import { ${imported} as ${local} } from "effect/Function";`
          : `import * as ${local} from "${pkg}/${imported}";`;
      })
      .join(' '));

const compiledModules = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name.startsWith('myclaw-') ? [] : compiledModules(path);
    return entry.name.endsWith('.js') ? [path] : [];
  });

/** Rewrites every compiled module under `dist`; throws naming a module that still imports a barrel. */
export const rewriteDist = (dist) => {
  for (const file of compiledModules(dist)) {
    const source = readFileSync(file, 'utf8');
    const rewritten = throughSubpaths(source);
    const left = anyBarrelReference.exec(rewritten);
    if (left !== null) {
      const line = rewritten.slice(0, left.index).split('\n').length;
      throw new Error(`${file}:${line}: an import of "${left[2]}" the subpath rewrite does not handle`);
    }
    if (rewritten !== source) writeFileSync(file, rewritten);
  }
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  rewriteDist(fileURLToPath(new URL('../dist', import.meta.url)));
}
