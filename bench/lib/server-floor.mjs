// The floors `serve`'s start is measured against (bench/cold-start.mjs): two one-route servers answering
// GET /health on MYCLAW_HTTP_PORT, started the way myclaw starts, with nothing of myclaw in them.
//   node.cjs      node:http alone: Node's own start, one listen, one answer (and the poller's own cost)
//   effect.cjs    the same route on the Effect packages `serve` runs (effect, @effect/platform's router,
//                 @effect/platform-node's server and runtime), bundled by esbuild with the command line's server
//                 plugin and loaded by the command line's loader from V8's code cache (dist/cli/CodeCache.js), as
//                 dist/cli/myclaw.cjs loads `serve`: what any Effect HTTP server pays here before its own work
//   package.json  `npm start` runs effect.cjs; `npm run empty` runs `node -e 0` (npm's own start, then Node's)
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { commonJsEntry } from '../../scripts/commonjs-entry.mjs';
import { serverWithoutTestClient } from '../../scripts/server-without-test-client.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));

const effectServer = `
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"

const app = HttpRouter.empty.pipe(HttpRouter.get("/health", HttpServerResponse.json({ status: "ok" })))
const server = NodeHttpServer.layer(createServer, { port: Number(process.env.MYCLAW_HTTP_PORT), host: "127.0.0.1" })
NodeRuntime.runMain(Layer.launch(HttpServer.serve(app).pipe(Layer.provide(server))))
`;

const nodeServer = `"use strict"
require("node:http").createServer((request, response) => {
  response.setHeader("content-type", "application/json")
  response.end('{"status":"ok"}')
}).listen(Number(process.env.MYCLAW_HTTP_PORT), "127.0.0.1")
`;

/** Writes the floors into `dir` (which must exist): the paths of the two servers' entries. */
export const writeServerFloors = async (dir) => {
  const codeCache = path.join(root, 'dist/cli/CodeCache.js');
  if (!fs.existsSync(codeCache)) throw new Error(`${codeCache} is missing: run npm run build`);
  const bundled = await esbuild.build({
    stdin: { contents: effectServer, resolveDir: root, sourcefile: 'effect-server.mjs', loader: 'js' },
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    // Loaded only when a connection asks for a WebSocket upgrade, which nothing here does.
    external: ['ws'],
    plugins: [serverWithoutTestClient],
    write: false,
    logLevel: 'error',
    legalComments: 'none',
  });
  // The form the command line's loader compiles: the function it calls with exports, require and module.
  fs.writeFileSync(
    path.join(dir, 'effect-server.cjs'),
    `(function (exports, require, module) {"use strict";${bundled.outputFiles[0].text}\n})`,
  );
  // The entry is CommonJS with the loader inlined, as dist/cli/myclaw.cjs is.
  await esbuild.build({
    stdin: {
      contents: `import { bundleLoader } from ${JSON.stringify(codeCache)}
const loader = bundleLoader(__dirname, require("node:path").join(__dirname, ".v8-cache"))
// Written when the server stops (the first, unmeasured run), as the command line does.
process.once("exit", () => loader.save())
loader.load("effect-server.cjs")
`,
      resolveDir: root,
      sourcefile: 'effect-entry.mjs',
      loader: 'js',
    },
    outfile: path.join(dir, 'effect.cjs'),
    ...commonJsEntry,
    logLevel: 'error',
  });
  fs.writeFileSync(path.join(dir, 'node.cjs'), nodeServer);
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: 'myclaw-server-floor',
      private: true,
      scripts: { start: 'node effect.cjs', empty: 'node -e 0' },
    }),
  );
  return { effect: path.join(dir, 'effect.cjs'), node: path.join(dir, 'node.cjs') };
};
