// Where `myclaw serve`'s start goes, by phase: a diagnostic, not a scenario of `npm run bench` (a preload watches the
// process, which costs it a little). Run `node bench/serve-timeline.mjs` after `npm run build`. It starts the built
// command line (dist/cli/myclaw.cjs, from its V8 code cache) TIMELINE_RUNS times (default 7) after one unmeasured
// start, on a workspace with the scripted provider, each time until GET /health answers 200, with
// bench/lib/serve-timeline-preload.cjs. One JSON line on stdout, medians, in milliseconds since the process began:
//   preload_ms         Node's own start until the first script runs (NODE_EXTRA_CA_CERTS, when set, is paid here)
//   runner_loaded_ms   the command runner's files loaded and evaluated (Effect's core, the command line)
//   serve_loaded_ms    serve's files loaded and evaluated (the services, the domain's schemas, the HTTP routes)
//   listen_ms          the services built (workspace, configuration, databases, audit log, budget...): listen
//   first_connection_ms, first_request_ms, first_response_ms   the first /health poll accepted, parsed, answered
//                      (this script polls every 5 ms: the first connection comes up to 5 ms after listen)
//   health_ms          spawn to the first 200 from /health, measured by this script (so not since the process began)
// and, until listen: modules_ms (time in the bundle's files' evaluation, their compilation from the cache
// included), module_files, gc_ms (collections). The phases are each mark minus the one before it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, scriptedWorkspace, timedServe } from './lib/cold-serve.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const cli = path.join(root, 'dist/cli/myclaw.cjs');
const preload = fileURLToPath(new URL('./lib/serve-timeline-preload.cjs', import.meta.url));
const RUNS = Number(process.env.TIMELINE_RUNS || 7);
if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: run npm run build`);

/** One start: the preload's marks and the time from spawn to the first 200, once the process has exited. */
const start = async (env, out) => {
  const withOut = { ...env, SERVE_TIMELINE_OUT: out };
  const health = await timedServe(process.execPath, ['-r', preload, cli, 'serve'], withOut, await freePort(), root);
  // A process killed because it did not stop on SIGTERM writes none.
  if (!fs.existsSync(out)) throw new Error('myclaw serve stopped without writing its timeline');
  const marks = JSON.parse(fs.readFileSync(out, 'utf8'));
  fs.rmSync(out);
  for (const mark of ['runner_loaded_ms', 'serve_loaded_ms', 'listen_ms']) {
    if (typeof marks[mark] !== 'number') {
      throw new Error(`no ${mark}: the bundle loader is not what ${preload} watches`);
    }
  }
  return { ...marks, health_ms: health };
};

/** The median of the runs that have the mark (a run may end before its first response is marked); null if none. */
const median = (values) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length === 0 ? null : Math.round(sorted[Math.floor(sorted.length / 2)] * 10) / 10;
};

const { home, env } = scriptedWorkspace('myclaw-serve-timeline-');
try {
  const out = path.join(home, 'timeline.json');
  await start(env, out);
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await start(env, out));
  const phases = ['preload_ms', 'runner_loaded_ms', 'serve_loaded_ms', 'listen_ms', 'first_connection_ms'];
  const fields = [...phases, 'first_request_ms', 'first_response_ms', 'health_ms', 'modules_ms', 'gc_ms'];
  const line = { scenario: 'serve-timeline', runs: RUNS };
  for (const field of fields) line[field] = median(runs.map((run) => run[field]));
  line.module_files = runs[0].module_files;
  line.node_extra_ca_certs = Boolean(process.env.NODE_EXTRA_CA_CERTS);
  line.loadavg_1m = Math.round(os.loadavg()[0] * 100) / 100;
  line.node = process.version;
  process.stdout.write(`${JSON.stringify(line)}\n`);
} finally {
  fs.rmSync(home, { recursive: true, force: true });
}
