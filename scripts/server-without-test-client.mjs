// An esbuild plugin for bundles that run @effect/platform-node's HTTP server: the command line's (bundle-cli.mjs)
// and the one-route server the cold-start benchmark measures as the floor of `serve` (bench/lib/server-floor.mjs).
import { readFileSync } from 'node:fs';

// @effect/platform-node's HTTP server imports its HTTP client (undici, a megabyte of code run when loaded) only for
// its test layer, which myclaw does not use: the bundled server goes without it, so that `serve` loads undici only
// on its first outgoing request (or when spans are exported), not before it listens.
export const serverWithoutTestClient = {
  name: 'server-without-test-client',
  setup(build) {
    build.onLoad({ filter: /[\\/]@effect[\\/]platform-node[\\/]dist[\\/]esm[\\/]internal[\\/]httpServer\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const withoutClient = source
        .replace('import * as NodeHttpClient from "../NodeHttpClient.js";\n', '')
        .replace(/^export const layerTest = [^;]*;$/m, 'export const layerTest = undefined;');
      if (withoutClient.includes('NodeHttpClient')) {
        throw new Error(`${args.path}: the HTTP client is used beyond the test layer; update ${import.meta.url}`);
      }
      // The WebSocket library (about 18 ms to load on its own) is loaded when a first connection asks for an
      // upgrade, which myclaw's routes never do, instead of before the server listens.
      const wsOnUpgrade = withoutClient
        .replace('import * as WS from "ws";\n', '')
        .replace(
          'Effect.sync(() => new WS.WebSocketServer({',
          'Effect.map(Effect.promise(() => import("ws")), (WS) => new WS.WebSocketServer({',
        );
      if (wsOnUpgrade.includes('import * as WS') || !wsOnUpgrade.includes('import("ws")')) {
        throw new Error(`${args.path}: the WebSocket server is made elsewhere than expected; update ${import.meta.url}`);
      }
      return { contents: wsOnUpgrade, loader: 'js' };
    });
  },
};
