// esbuild options for an entry written as one CommonJS file for Node 20 (the command line's, bundle-cli.mjs, and the
// cold-start benchmark's floor server, bench/lib/server-floor.mjs): bundled, strict, and with `import.meta.url`, which
// CommonJS lacks, made from the file's own path.
export const commonJsEntry = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  define: { 'import.meta.url': '__entryUrl' },
  banner: { js: '"use strict"; const __entryUrl = require("node:url").pathToFileURL(__filename).href;' },
};
