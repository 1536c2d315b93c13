#!/usr/bin/env node
// The second half of `npm run build`: bundles the command line (dist/cli/main.js, from tsc) into
// dist/cli/myclaw.mjs plus the chunks it loads per command (dist/cli/myclaw-chunks/). One file per
// command path starts much faster than hundreds of modules: the `effect` barrel alone loads every Effect
// module, the bundle keeps only what is used. The tsc output stays for the library exports. The entry is also
// written as one CommonJS file, dist/cli/myclaw.cjs, which `npm start` and bin/myclaw.cjs run (see below).
//
//   node scripts/bundle-cli.mjs            # after tsc; prints nothing unless something is wrong; writes
//                                          # dist/cli/myclaw-meta.json (esbuild's metafile) beside the bundle
//   node scripts/bundle-cli.mjs --analyze  # also the size of each package in the bundle, and how many uses of
//                                          # other chunks' exports the CommonJS copies read through locals, on stderr
import * as esbuild from 'esbuild';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { aliasImports } from './cjs-aliases.mjs';
import { commonJsEntry } from './commonjs-entry.mjs';
import { rewriteDist } from './subpath-imports.mjs';
import { serverWithoutTestClient } from './server-without-test-client.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

// Native modules and packages that find files next to themselves at run time stay outside the bundle.
const external = ['better-sqlite3'];

// The CommonJS copy of the command runner (written below) is what the bundled entry loads with V8's code cache.
const cjsDir = 'myclaw-cjs';
const runnerFile = 'runner.cjs';
const runnerBundle = {
  name: 'runner-bundle',
  setup(build) {
    build.onLoad({ filter: /[\\/]dist[\\/]cli[\\/]Bundled\.js$/ }, () => ({
      contents: `export const runnerBundle = ${JSON.stringify({ dir: `./${cjsDir}/`, entry: runnerFile })}\n`,
      loader: 'js',
    }));
  },
};

// The version is read from ../package.json relative to the module; in a chunk that path is elsewhere,
// so the bundle gets the version as a constant.
const inlineVersion = {
  name: 'inline-version',
  setup(build) {
    build.onLoad({ filter: /[\\/]dist[\\/]Version\.js$/ }, () => ({
      contents: `export const version = ${JSON.stringify(pkg.version)}\n`,
      loader: 'js',
    }));
  },
};

// The SQLite driver's file, handed to worker threads, is resolved from the module's own place in the tsc output
// (import.meta.url); in the bundle, through the chunk's require (the banner's, or CommonJS's own in the copies).
const sqliteDriverPath = {
  name: 'sqlite-driver-path',
  setup(build) {
    build.onLoad({ filter: /[\\/]dist[\\/]layers[\\/]SqliteDriver\.js$/ }, () => ({
      contents: 'export const sqliteDriverPath = () => require.resolve("better-sqlite3")\n',
      loader: 'js',
    }));
  },
};

// myclaw's own modules run nothing when imported but define values: what a command does not use is left out of
// its chunk (esbuild keeps the imports of a module with side effects, even unused ones).
const ownModulesArePure = {
  name: 'own-modules-are-pure',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\// }, async (args) => {
      if (args.pluginData === 'resolving' || !args.importer.includes(`${root}dist`)) return undefined;
      const resolved = await build.resolve(args.path, {
        importer: args.importer,
        kind: args.kind,
        resolveDir: args.resolveDir,
        pluginData: 'resolving',
      });
      if (resolved.errors.length > 0 || !resolved.path.startsWith(`${root}dist`)) return undefined;
      return { ...resolved, sideEffects: false };
    });
  },
};

// The tsc output imports Effect's modules by subpath (see subpath-imports.mjs), so that the bundle keeps only the
// functions used, not every function of every module an index names. Done here too, so that bundling after a bare
// `tsc` gives the same bundle.
rewriteDist(fileURLToPath(new URL('../dist', import.meta.url)));

rmSync(new URL('../dist/cli/myclaw-chunks', import.meta.url), { recursive: true, force: true });
const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: { myclaw: 'dist/cli/main.js' },
  outdir: 'dist/cli',
  chunkNames: 'myclaw-chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  // CommonJS dependencies inside an ES module bundle call require() for Node's own modules.
  banner: { js: 'import { createRequire as __myclawRequire } from "node:module"; const require = __myclawRequire(import.meta.url);' },
  plugins: [ownModulesArePure, serverWithoutTestClient, inlineVersion, sqliteDriverPath, runnerBundle],
  metafile: true,
  logLevel: 'warning',
  legalComments: 'none',
});

// The CommonJS copy of the chunks, for Node 20, which has a compile cache for CommonJS code compiled through
// vm.Script but none for ES modules: each chunk converted alone (its imports become require() of the copies, its
// dynamic imports a require() in a promise), so that a command loads the same files as with the ES modules. The
// chunk the entry imports for every command but --help/--version is written as runner.cjs.
const chunksDir = 'dist/cli/myclaw-chunks';
const banner = 'import { createRequire as __myclawRequire } from "node:module"; const require = __myclawRequire(import.meta.url);\n';
const entryOutput = result.metafile.outputs['dist/cli/myclaw.mjs'];
const runners = entryOutput.imports.filter((imported) => imported.kind === 'dynamic-import').map((imported) => imported.path);
if (runners.length !== 1) throw new Error(`the entry should import one command runner, it imports ${runners.join(', ')}`);
const runnerChunk = runners[0].slice(`${chunksDir}/`.length);
for (const [output, { imports }] of Object.entries(result.metafile.outputs)) {
  if (imports.some((imported) => imported.path === runners[0])) {
    if (output !== 'dist/cli/myclaw.mjs') throw new Error(`${output} imports the command runner: only the entry may`);
  }
}
// The same entry as one CommonJS file: Node starts a CommonJS entry about 10 ms sooner than an ES module (no module
// loader to set up, no graph to link), and every command after --help/--version goes on through the CommonJS copies
// below. --help and --version are inlined (a few kilobytes, no Effect); with MYCLAW_CODE_CACHE=off, or without the
// copies, it imports the ES module runner.
const cjsEntry = await esbuild.build({
  absWorkingDir: root,
  entryPoints: ['dist/cli/main.js'],
  outfile: 'dist/cli/myclaw.cjs',
  ...commonJsEntry,
  plugins: [
    inlineVersion,
    runnerBundle,
    {
      name: 'es-module-runner',
      setup(build) {
        build.onResolve({ filter: /^\.\/Cli\.js$/ }, (args) =>
          args.kind === 'dynamic-import' ? { path: `./myclaw-chunks/${runnerChunk}`, external: true } : undefined);
      },
    },
  ],
  metafile: true,
  logLevel: 'warning',
  legalComments: 'none',
});
const entryInputs = Object.keys(cjsEntry.metafile.outputs['dist/cli/myclaw.cjs'].inputs);
const notOwn = entryInputs.filter((input) => !input.startsWith('dist/'));
if (notOwn.length > 0) throw new Error(`dist/cli/myclaw.cjs holds more than the entry's own code: ${notOwn.join(', ')}`);

rmSync(`dist/cli/${cjsDir}`, { recursive: true, force: true });
mkdirSync(`dist/cli/${cjsDir}`);
const cjsName = (chunk) => (chunk === runnerChunk ? runnerFile : chunk.replace(/\.mjs$/, '.cjs'));
const copies = new Map();
await Promise.all(
  readdirSync(chunksDir)
    .filter((chunk) => chunk.endsWith('.mjs'))
    .map(async (chunk) => {
      const source = readFileSync(`${chunksDir}/${chunk}`, 'utf8');
      if (!source.startsWith(banner)) throw new Error(`${chunk} does not start with the bundle's banner`);
      const code = source.slice(banner.length);
      // CommonJS has no import.meta: a chunk that uses it cannot be copied as is.
      if (code.includes('import.meta')) throw new Error(`${chunk} uses import.meta: update ${import.meta.url}`);
      const converted = await esbuild.transform(code, {
        sourcefile: chunk,
        format: 'cjs',
        platform: 'node',
        target: 'node20',
        supported: { 'dynamic-import': false },
        logLevel: 'error',
        legalComments: 'none',
      });
      const copy = converted.code.replace(/require\("\.\/([^"/]+\.mjs)"\)/g, (_, name) => `require("./${cjsName(name)}")`);
      if (/require\("[^"]*\.mjs"\)/.test(copy)) throw new Error(`${chunk}: a require of an ES module is left in its copy`);
      copies.set(cjsName(chunk), copy);
    }),
);
// Uses of another chunk's final exports read local variables instead of getters (see cjs-aliases.mjs).
const aliased = aliasImports(copies);
// esbuild publishes a chunk's exports as a copy of its export object (`module.exports = __toCommonJS(chunk_exports)`)
// whose accessors each call the object's own: several hundred accessors made when a chunk of Effect loads, and two
// calls per read. The object itself, marked as an ES module the same way, has the same names, the same live values and
// the same marker, with one accessor each.
const PUBLISHED = /^module\.exports = __toCommonJS\((\w+)\);$/gm;
const publishedDirectly = (name, copy) => {
  const published = [...copy.matchAll(PUBLISHED)].length;
  if (published !== 1) throw new Error(`${name} publishes its exports ${published} times through __toCommonJS, not once`);
  return copy.replace(PUBLISHED, (_, object) => `module.exports = __defProp(${object}, "__esModule", { value: true });`);
};
for (const [name, copy] of aliased.chunks) {
  // Written as the function the loader calls (src/cli/CodeCache.ts), so that it compiles the file as read.
  writeFileSync(
    `dist/cli/${cjsDir}/${name}`,
    `(function (exports, require, module) {"use strict";${publishedDirectly(name, copy)}\n})`,
  );
}
if (process.argv.includes('--analyze')) {
  process.stderr.write(`CommonJS copies: ${aliased.aliased} uses of other chunks' exports through locals, ${aliased.kept} through getters\n`);
}

// Which modules each chunk holds and what it imports: what the bundle tests check.
writeFileSync('dist/cli/myclaw-meta.json', JSON.stringify(result.metafile));
if (process.argv.includes('--analyze')) {
  const sizes = new Map();
  for (const [output, { inputs }] of Object.entries(result.metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(inputs)) {
      const at = input.lastIndexOf('node_modules/');
      const parts = at < 0 ? ['(myclaw)'] : input.slice(at + 13).split('/');
      const name = parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
      const key = `${output.replace(/^dist\/cli\//, '')}  ${name}`;
      sizes.set(key, (sizes.get(key) ?? 0) + bytesInOutput);
    }
  }
  for (const [key, bytes] of [...sizes].sort((a, b) => b[1] - a[1])) {
    if (bytes >= 4096) process.stderr.write(`${(bytes / 1024).toFixed(0).padStart(6)} KB  ${key}\n`);
  }
}
